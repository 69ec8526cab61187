"""File contents for the bad-input corpus: a valid document per reader, and the ways to spoil it.

Every reader of benchlab gets the same nine spoiled inputs (binary, UTF-16, deeply nested JSON,
truncated, gzip-corrupt, a 50 MB single line, empty, a directory, a missing path), and the
readers of results get values no measurement can have (negative, infinite, NaN, duplicated
keys). Valid documents are written by hand from each tool's documented format, so a corpus case
spoils exactly one thing.
"""

from __future__ import annotations

import gzip
import json
import random

# --- valid documents, one per reader -------------------------------------------------------

JAYBEAMS_CSV = "# badinput corpus\na,1.5\na,1.7\na,1.6\nb,2.0\nb,2.1\nb,2.2\n"

HYPERFINE = {"results": [{
    "command": "true", "mean": 0.001, "stddev": 0.0001, "median": 0.001, "user": 0.0005,
    "system": 0.0003, "min": 0.0009, "max": 0.0011, "times": [0.001, 0.0011, 0.0009],
    "exit_codes": [0, 0, 0]}]}

PYPERF = {
    "version": "1.0",
    "metadata": {"hostname": "box", "perf_version": "2.6.2", "unit": "second"},
    "benchmarks": [{"metadata": {"name": "sort", "loops": 1024},
                    "runs": [{"metadata": {"date": "2026-01-01 10:00:01.000000"},
                              "warmups": [[1024, 1.3e-6]], "values": [1.25e-6, 1.5e-6, 1.0e-6]}]}],
}


def _gb(name: str, rep: int, real: float) -> dict:
    return {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
            "run_type": "iteration", "repetitions": 3, "repetition_index": rep, "threads": 1,
            "iterations": 1000, "real_time": real, "cpu_time": real, "time_unit": "us"}


GBENCH = {"context": {"date": "2026-01-01T10:00:00+00:00", "host_name": "box",
                      "executable": "./bench", "num_cpus": 2, "mhz_per_cpu": 3000,
                      "library_build_type": "release"},
          "benchmarks": [_gb("BM_sort", 0, 12.5), _gb("BM_sort", 1, 13.0), _gb("BM_sort", 2, 12.0)]}

VARSYS16_HEADER = "machine,limits,benchmark,lower_is_better,class,repetition,result\n"
VARSYS16 = VARSYS16_HEADER + "".join(
    f"{m},without,stressng-cpu-int64,false,cpu,{r},{v}\n"
    for m, r, v in (("base", 1, 100.0), ("base", 2, 101.0), ("t", 1, 150.0), ("t", 2, 151.0)))

METRIC_OUTPUT = "took 5\n"
METRIC_OPTION = r"took=took (\S+)"

CALIBRATION = {"format": "benchlab-calibration", "version": 1, "base": "base", "methods": ["int64"],
               "cpu_quota_us": 50000, "cpu_period_us": 100000, "cpus": None}

PROFILE = {"format": "benchlab-profile", "version": 1, "name": "p", "metadata": {},
           "environment": None,
           "methods": [{"name": "int64", "kind": "cpu-method", "higher_is_better": True,
                        "values": [100.0, 101.0, 99.0]},
                       {"name": "double", "kind": "cpu-method", "higher_is_better": True,
                        "values": [50.0, 51.0, 49.0]}]}

VARIABILITY = {"format": "benchlab-variability", "version": 1, "target": "t", "base": "b",
               "kinds": ["cpu-method"], "ratios": {"int64": 1.5, "double": 1.4}}

PREDICT_APPS = "name,base,target\nfoo,10,12\nbar,20,25\n"

SUITE = """\
[study]
name = "badinput"
runs = 2
warmup = 0
seed = 1

[[workload]]
name = "true"
command = "/bin/true"
"""

#: reader -> (valid file text, file suffix). ``json`` (benchlab's own export) is made by the
#: session fixture from a real store, and added to this table there.
VALID: dict[str, tuple[str, str]] = {
    "csv": (JAYBEAMS_CSV, ".csv"),
    "auto": (JAYBEAMS_CSV, ".csv"),
    "hyperfine": (json.dumps(HYPERFINE, indent=1), ".json"),
    "pyperf": (json.dumps(PYPERF, indent=1), ".json"),
    "gbench": (json.dumps(GBENCH, indent=1), ".json"),
    "metric": (METRIC_OUTPUT, ".txt"),
    "varsys16": (VARSYS16, ".csv"),
    "calibration": (json.dumps(CALIBRATION, indent=1), ".json"),
    "profile": (json.dumps(PROFILE, indent=1), ".json"),
    "variability": (json.dumps(VARIABILITY, indent=1), ".json"),
    "predict-apps": (PREDICT_APPS, ".csv"),
    "suite": (SUITE, ".toml"),
    "samples-csv": ("lat,1.5\nlat,1.7\n", ".csv"),
}

# --- spoiled inputs ---------------------------------------------------------------------------

DEEP_LEVELS = 100_000
BIG_LINE_BYTES = 50 * 1024 * 1024

#: The nine ways to spoil a reader's input; "bigline" is one shared file made once per session.
SPOILS = ("binary", "utf16", "deep", "truncated", "gzip-corrupt", "bigline", "empty", "directory",
          "missing")


def binary_bytes(seed: int = 8) -> bytes:
    """4 KiB of random bytes with NULs and invalid UTF-8 (deterministic)."""
    return b"\x00\xff\xfe" + random.Random(seed).randbytes(4096)


def deep_json() -> bytes:
    """JSON nested 10^5 levels deep (Python's json module recurses once per level)."""
    return b"[" * DEEP_LEVELS + b"]" * DEEP_LEVELS


def truncated(text: str) -> str:
    """``text`` cut inside its last record: JSON loses its closing brackets, a CSV's last row
    loses its value (a cut that leaves a parseable prefix would not be an error)."""
    if text.lstrip()[:1] in ("{", "["):
        return text[: len(text) * 2 // 3]
    body = text.rstrip("\n")
    return body[: body.rfind(",")]


def gzip_corrupt() -> bytes:
    """A gzip header followed by a damaged deflate stream and no trailer."""
    good = gzip.compress(b'{"benchmarks": []}' * 50)
    return good[:12] + bytes(b ^ 0x5A for b in good[12:40])


def write_big_line(path) -> None:
    """A 50 MB file of one line with no newline (a digit run: a number with 50 M digits)."""
    chunk = b"1234567890" * 104857
    with open(path, "wb") as f:
        written = 0
        f.write(b"a,")
        while written < BIG_LINE_BYTES:
            f.write(chunk)
            written += len(chunk)


def spoiled(spoil: str, text: str) -> bytes | None:
    """The bytes of spoiled input ``spoil`` of a reader whose valid input is ``text``
    (None: not a regular file)."""
    if spoil == "binary":
        return binary_bytes()
    if spoil == "utf16":
        return text.encode("utf-16")
    if spoil == "deep":
        return deep_json()
    if spoil == "truncated":
        return truncated(text).encode()
    if spoil == "gzip-corrupt":
        return gzip_corrupt()
    if spoil == "empty":
        return b""
    return None


# --- values no result can have ----------------------------------------------------------------

def _json_with(doc: dict, path: tuple, value) -> str:
    copy = json.loads(json.dumps(doc))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(copy)  # NaN/Infinity are written as the bare tokens Python's json reads


def _duplicate_key(doc: dict, key: str) -> str:
    """``doc`` as JSON with ``key`` appearing twice at the top level (the last wins in Python)."""
    text = json.dumps(doc)
    return text[:-1] + f', "{key}": ' + json.dumps(doc[key]) + "}"


NEG, INF, NAN = -1.0, float("inf"), float("nan")

#: (reader, label, file text, expected substring): results that no measurement produces.
BAD_VALUES: list[tuple[str, str, str, str]] = [
    ("csv", "negative", "a,1.5\na,-2.0\n", "-2"),
    ("csv", "inf", "a,1.5\na,inf\n", "inf"),
    ("csv", "nan-first-row", "a,nan\na,1.5\n", "nan"),
    ("csv", "nan", "a,1.5\na,nan\n", "nan"),
    ("csv", "overflow", "a,1.5\na,1e400\n", ""),
    ("csv", "header-twice", "label,value\na,1.5\nlabel,value\na,1.6\n", "label"),
    ("auto", "negative", "a,1.5\na,-2.0\n", "-2"),
    ("auto", "nan-first-row", "a,nan\nb,1\n", "nan"),
    ("hyperfine", "negative", _json_with(HYPERFINE, ("results", 0, "times"), [0.001, -0.5, 0.0011]),
     "-0.5"),
    ("hyperfine", "inf", _json_with(HYPERFINE, ("results", 0, "times"), [0.001, INF, 0.0011]), "inf"),
    ("hyperfine", "nan", _json_with(HYPERFINE, ("results", 0, "times"), [NAN, 0.001, 0.0011]), "nan"),
    ("hyperfine", "string-time", _json_with(HYPERFINE, ("results", 0, "times"), ["1", 0.001, 0.0011]), "times"),
    ("hyperfine", "duplicate-key", _duplicate_key(HYPERFINE, "results"), "results"),
    ("pyperf", "negative", _json_with(PYPERF, ("benchmarks", 0, "runs", 0, "values"), [-1.0]),
     "-1"),
    ("pyperf", "inf", _json_with(PYPERF, ("benchmarks", 0, "runs", 0, "values"), [INF]), "inf"),
    ("pyperf", "nan", _json_with(PYPERF, ("benchmarks", 0, "runs", 0, "values"), [NAN]), "nan"),
    ("pyperf", "duplicate-key", _duplicate_key(PYPERF, "benchmarks"), "benchmarks"),
    ("gbench", "negative", _json_with(GBENCH, ("benchmarks", 0, "real_time"), -12.5), "negative"),
    ("gbench", "inf", _json_with(GBENCH, ("benchmarks", 0, "real_time"), INF), "inf"),
    ("gbench", "nan", _json_with(GBENCH, ("benchmarks", 0, "real_time"), NAN), "nan"),
    ("gbench", "bad-unit", _json_with(GBENCH, ("benchmarks", 0, "time_unit"), "parsecs"), "unit"),
    ("gbench", "duplicate-key", _duplicate_key(GBENCH, "benchmarks"), "benchmarks"),
    ("metric", "negative", "took -5\n", "-5"),
    ("metric", "inf", "took inf\n", "inf"),
    ("metric", "nan", "took nan\n", "nan"),
    ("metric", "overflow", "took 1e400\n", ""),
    ("varsys16", "negative", VARSYS16 + "t,without,stressng-cpu-int64,false,cpu,3,-5\n",
     "-5"),
    ("varsys16", "inf", VARSYS16 + "t,without,stressng-cpu-int64,false,cpu,3,inf\n", "inf"),
    ("varsys16", "nan", VARSYS16 + "t,without,stressng-cpu-int64,false,cpu,3,nan\n", "nan"),
    ("calibration", "negative-quota", _json_with(CALIBRATION, ("cpu_quota_us",), -1), "quota"),
    ("calibration", "huge-quota", _json_with(CALIBRATION, ("cpu_quota_us",), 10**23), "quota"),
    ("calibration", "nan-quota", _json_with(CALIBRATION, ("cpu_quota_us",), NAN), "quota"),
    ("calibration", "zero-period", _json_with(CALIBRATION, ("cpu_period_us",), 0), "period"),
    ("calibration", "bad-cpus", _json_with(CALIBRATION, ("cpus",), [-1]), "cpu"),
    ("profile", "negative", _json_with(PROFILE, ("methods", 0, "values"), [-1.0, 2.0]),
     "-1"),
    ("profile", "inf", _json_with(PROFILE, ("methods", 0, "values"), [INF, 2.0]), "inf"),
    ("profile", "nan", _json_with(PROFILE, ("methods", 0, "values"), [NAN, 2.0]), "nan"),
    ("profile", "duplicate-method", _json_with(PROFILE, ("methods", 1, "name"), "int64"),
     "int64"),
    ("variability", "negative", _json_with(VARIABILITY, ("ratios", "int64"), -1.5), "-1.5"),
    ("variability", "inf", _json_with(VARIABILITY, ("ratios", "int64"), INF), "inf"),
    ("variability", "nan", _json_with(VARIABILITY, ("ratios", "int64"), NAN), "nan"),
    ("variability", "zero", _json_with(VARIABILITY, ("ratios", "int64"), 0), "int64"),
    ("predict-apps", "negative", "name,base,target\nfoo,-10,12\n", "-10"),
    ("predict-apps", "nan", "name,base,target\nfoo,nan,12\n", "nan"),
    ("predict-apps", "inf", "name,base,target\nfoo,10,inf\n", "inf"),
    ("predict-apps", "duplicate", "name,base,target\nfoo,10,12\nfoo,11,13\n", "foo"),
]

_SUITE_HEAD = '[study]\nname = "badinput"\nruns = 2\nwarmup = 0\nseed = 1\n'
_WORKLOAD = '\n[[workload]]\nname = "true"\ncommand = "/bin/true"\n'

#: (label, suite text, expected substring): study suites with wrong types or values.
BAD_SUITES: list[tuple[str, str, str]] = [
    ("runs-string", _SUITE_HEAD.replace("runs = 2", 'runs = "ten"') + _WORKLOAD, "runs"),
    ("runs-negative", _SUITE_HEAD.replace("runs = 2", "runs = -1") + _WORKLOAD, "runs"),
    ("runs-float", _SUITE_HEAD.replace("runs = 2", "runs = 2.5") + _WORKLOAD, "runs"),
    ("runs-inf", _SUITE_HEAD.replace("runs = 2", "runs = inf") + _WORKLOAD, "runs"),
    ("runs-huge", _SUITE_HEAD.replace("runs = 2", "runs = 100000000000000000") + _WORKLOAD, "runs"),
    ("warmup-nan", _SUITE_HEAD.replace("warmup = 0", "warmup = nan") + _WORKLOAD, "warmup"),
    ("warmup-negative", _SUITE_HEAD.replace("warmup = 0", "warmup = -3") + _WORKLOAD, "warmup"),
    ("seed-string", _SUITE_HEAD.replace("seed = 1", 'seed = "x"') + _WORKLOAD, "seed"),
    ("seed-float", _SUITE_HEAD.replace("seed = 1", "seed = 1.5") + _WORKLOAD, "seed"),
    ("study-not-table", 'study = 5\n' + _WORKLOAD, "study"),
    ("workload-table", _SUITE_HEAD + '\n[workload]\nname = "true"\ncommand = "/bin/true"\n',
     "workload"),
    ("workload-name-int", _SUITE_HEAD + '\n[[workload]]\nname = 5\ncommand = "/bin/true"\n',
     "name"),
    ("command-int", _SUITE_HEAD + '\n[[workload]]\nname = "x"\ncommand = 5\n', "command"),
    ("args-string", _SUITE_HEAD + '\n[[workload]]\nname = "x"\nbuiltin = "exp_float"\n'
                                  'args = "1000"\n', "args"),
    ("duplicate-workload", _SUITE_HEAD + _WORKLOAD + _WORKLOAD, "workload"),
    ("workers-zero", _SUITE_HEAD + _WORKLOAD + "\n[matrix]\nworkers = [0]\n", "workers"),
    ("workers-string", _SUITE_HEAD + _WORKLOAD + '\n[matrix]\nworkers = ["two"]\n', "workers"),
    ("workers-huge", _SUITE_HEAD + _WORKLOAD + "\n[matrix]\nworkers = [100000000]\n", "workers"),
    ("isolation-int", _SUITE_HEAD + _WORKLOAD + "\n[matrix]\nisolation = [1]\n", "isolation"),
    ("isolation-unknown", _SUITE_HEAD + _WORKLOAD + '\n[matrix]\nisolation = ["vm"]\n',
     "isolation"),
    ("quota-negative", _SUITE_HEAD + _WORKLOAD + "\n[matrix]\ncpu_quota_us = [-1]\n", "quota"),
    ("quota-nan", _SUITE_HEAD + _WORKLOAD + "\n[matrix]\ncpu_quota_us = [nan]\n", "quota"),
    ("affinity-int", _SUITE_HEAD + _WORKLOAD + "\n[matrix]\naffinity = [5]\n", "affinity"),
    # refused with every cell's placement before the study session exists: no row is left
    ("affinity-offline", _SUITE_HEAD + _WORKLOAD + '\n[matrix]\naffinity = ["none", '
     '"cores:4095"]\n', "cpu 4095"),
    ("load-bad", _SUITE_HEAD + _WORKLOAD + '\n[matrix]\nload = ["cpu:-1"]\n', "load"),
    ("matrix-not-table", _SUITE_HEAD + _WORKLOAD + "matrix = 3\n", "matrix"),
    ("unknown-key", _SUITE_HEAD.replace("seed = 1", "seed = 1\nrunz = 3") + _WORKLOAD, "runz"),
]
