"""A corpus of hostile input files for every import format: each is refused with one line
naming the file (and the line or benchmark), nothing is stored, or — for the few legal ones —
imported exactly. Real files on disk, a real SQLite store; a sample goes through the real CLI."""

from __future__ import annotations

import gzip
import json

import pytest

from benchlab.errors import UserError
from benchlab.store import Store
from benchlab.store.formats import import_path
from tests.conftest import assert_one_line_error, run_cli

HYPERFINE = {"results": [{"command": "a", "mean": 0.1, "stddev": 0.01, "median": 0.1,
                          "user": 0.1, "system": 0.0, "min": 0.09, "max": 0.11,
                          "times": [0.1, 0.09, 0.11], "exit_codes": [0, 0, 0]}]}
PYPERF = {"version": "1.0", "metadata": {"name": "x", "unit": "second"},
          "benchmarks": [{"runs": [{"values": [0.1, 0.2]}], "metadata": {"name": "bm"}}]}
GBENCH = {"context": {"date": "x", "num_cpus": 2},
          "benchmarks": [{"name": "BM_a", "run_type": "iteration", "iterations": 10,
                          "real_time": 2, "cpu_time": 1, "time_unit": "ms"}]}
EXPORT_RUN = {"seq": 0, "iteration": 0, "status": "ok", "wall_ns": 5}
JSON_FORMATS = {
    "hyperfine": (HYPERFINE, ["results", 0, "times", 0], ["results", 0, "command"]),
    "pyperf": (PYPERF, ["benchmarks", 0, "runs", 0, "values", 0],
               ["benchmarks", 0, "metadata", "name"]),
    "gbench": (GBENCH, ["benchmarks", 0, "real_time"], ["benchmarks", 0, "name"]),
}


def _with(doc: dict, path: list, value) -> dict:
    out = json.loads(json.dumps(doc))
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _cases() -> list[tuple[str, str, bytes]]:
    """(case id, format, file content) of files that must be refused."""
    cases: list[tuple[str, str, bytes]] = []
    for fmt, (doc, value_at, name_at) in JSON_FORMATS.items():
        text = json.dumps(doc)
        for literal in ("NaN", "Infinity", "-Infinity", "-1", "-0.5", "1e400", "null", '"x"',
                        "true", "[]", "{}"):
            bad = json.dumps(_with(doc, value_at, "@@")).replace('"@@"', literal)
            cases.append((f"{fmt}-value-{literal}", fmt, bad.encode()))
        for name in (None, 5, 2.5, True, "", "   ", [], ["a"], {"a": 1}):
            if fmt == "pyperf" and name in (None, ""):
                continue  # pyperf names a nameless benchmark itself (see LEGAL)
            cases.append((f"{fmt}-name-{name!r}", fmt, json.dumps(_with(doc, name_at, name)).encode()))
        for where, value in (([*value_at[:-1]], None), ([*value_at[:-1]], "1,2"),
                             ([*value_at[:-1]], {"a": 1})):
            if fmt == "gbench":
                break  # a gbench row's value is a scalar, covered above
            cases.append((f"{fmt}-values-{value!r}", fmt, json.dumps(_with(doc, where, value)).encode()))
        cases += [
            (f"{fmt}-deep", fmt, b"[" * 100_000 + b"]" * 100_000),
            (f"{fmt}-deep-object", fmt, b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
            (f"{fmt}-truncated", fmt, text.encode()[:-7]),
            (f"{fmt}-utf16", fmt, text.encode("utf-16")),
            (f"{fmt}-utf16le", fmt, text.encode("utf-16-le")),
            (f"{fmt}-binary", fmt, bytes(range(256)) * 40),
            (f"{fmt}-gzip-corrupt", fmt, gzip.compress(text.encode())[:30] + b"garbage"),
            (f"{fmt}-gzip-truncated", fmt, gzip.compress(text.encode())[:-12]),
            (f"{fmt}-empty", fmt, b""),
            (f"{fmt}-whitespace", fmt, b" \n\t\n"),
            (f"{fmt}-list", fmt, b"[1, 2, 3]"),
            (f"{fmt}-string", fmt, b'"hello"'),
            (f"{fmt}-number", fmt, b"42"),
            (f"{fmt}-null", fmt, b"null"),
            (f"{fmt}-latin1", fmt, json.dumps(_with(doc, name_at, "caf\u00e9"),
                                              ensure_ascii=False).encode("latin-1")),
            (f"{fmt}-nul-inside", fmt, text.encode()[:20] + b"\0" + text.encode()[20:]),
            (f"{fmt}-trailing-garbage", fmt, text.encode() + b" trailing"),
            (f"{fmt}-two-documents", fmt, text.encode() + text.encode()),
            (f"{fmt}-gzip-of-garbage", fmt, gzip.compress(b"not json at all")),
            (f"{fmt}-gzip-of-utf16", fmt, gzip.compress(text.encode("utf-16"))),
            (f"{fmt}-gzip-magic-only", fmt, b"\x1f\x8b"),
            (f"{fmt}-huge-line-garbage", fmt, b"x" * (3 << 20)),
        ]
    neg = _with(GBENCH, ["benchmarks"], GBENCH["benchmarks"] + [
        dict(GBENCH["benchmarks"][0], real_time=-3)])
    cases.append(("gbench-negative-second-row", "gbench", json.dumps(neg).encode()))
    for i, text in enumerate([
            "a,nan\n", "a,NaN\nb,1\n", "a,inf\n", "a,-inf\n", "a,1e999\n", "h,ns\na,-5\n",
            "label,microseconds\na,1\na,-0.001\n", "a,1\n,2\n", '"a\n', "a,1,2\n", "a\n",
            "a,1\nb,two\n", "x\0y,1\n", "a," + "9" * (2 << 20) + "\n", "# only a comment\n",
            "h,ns\n", "", "\n\n\n", '{"results": [}\n', "a;1\nb;2\n", "\ufeffa,\n",
            "a,1\na,-1\n", "a,-0.0001\n"]):
        cases.append((f"csv-{i}-{text[:12]!r}", "csv", text.encode()))
    for fmt, (doc, _, _) in JSON_FORMATS.items():
        key = next(iter(doc))
        twice = json.dumps(doc)[:-1] + f', "{key}": ' + json.dumps(doc[key]) + "}"
        cases.append((f"{fmt}-duplicate-key", fmt, twice.encode()))
    cases += [
        ("csv-utf16", "csv", "a,1\nb,2\n".encode("utf-16")),
        ("csv-utf16le", "csv", "a,1\nb,2\nc,3\nd,4\n".encode("utf-16-le")),
        ("csv-gzip-corrupt", "csv", gzip.compress(b"a,1\n" * 1000)[:-10]),
        ("csv-binary", "csv", bytes(range(256)) * 4),
        ("csv-long-nan", "csv", b"session,benchmark,run,iteration,warmup,status,metric,value,unit\n"
                                b"x,b,0,0,0,ok,wall,nan,ns\n"),
        ("csv-long-negative", "csv", b"session,benchmark,run,iteration,warmup,status,metric,value,unit\n"
                                     b"x,b,0,0,0,ok,wall,-4,ns\n"),
        ("csv-long-short-row", "csv", b"session,benchmark,run,iteration,warmup,status,metric,value,unit\n"
                                      b"x,b,0,0\n"),
        ("csv-long-unterminated-quote", "csv",
         b"session,benchmark,run,iteration,warmup,status,metric,value,unit\n"
         b'x,"b,0,0,0,ok,wall,4,ns\n'),
        ("csv-long-huge-field", "csv",
         b"session,benchmark,run,iteration,warmup,status,metric,value,unit\n"
         b'x,"' + b"b" * 200_000 + b'",0,0,0,ok,wall,4,ns\n'),
        ("json-deep", "json", b'{"format":"benchlab-export","sessions":' + b"[" * 50_000
         + b"]" * 50_000 + b"}"),
        ("json-nan", "json", b'{"format":"benchlab-export","format_version":1,"sessions":[{"uid":'
                             b'"x","benchmarks":[{"name":"n","runs":[{"seq":0,"iteration":0,'
                             b'"status":"ok","wall_ns":NaN}]}]}]}'),
        ("json-negative-wall", "json", json.dumps(
            {"format": "benchlab-export", "format_version": 1, "sessions": [
                {"uid": "x", "benchmarks": [{"name": "n", "runs": [
                    dict(EXPORT_RUN, wall_ns=-5)]}]}]}).encode()),
        ("json-null-name", "json", json.dumps(
            {"format": "benchlab-export", "format_version": 1, "sessions": [
                {"uid": "x", "benchmarks": [{"name": None, "runs": [EXPORT_RUN]}]}]}).encode()),
        ("json-duplicate-benchmark", "json", json.dumps(
            {"format": "benchlab-export", "format_version": 1, "sessions": [
                {"uid": "x", "benchmarks": [{"name": "n", "runs": [EXPORT_RUN]},
                                            {"name": "n", "runs": [dict(EXPORT_RUN, seq=1)]}]}]}
        ).encode()),
    ]
    return cases


CASES = _cases()


def test_corpus_is_large():
    assert len(CASES) >= 150


@pytest.mark.parametrize("case_id,fmt,content", CASES, ids=[c[0] for c in CASES])
def test_hostile_file_is_refused_with_one_line_and_nothing_stored(tmp_path, case_id, fmt,
                                                                   content):
    f = tmp_path / "input.dat"
    f.write_bytes(content)
    with Store.open(tmp_path / "s.db") as store:
        with pytest.raises(UserError) as err:
            import_path(store, f, fmt)
        message = str(err.value)
        assert "\n" not in message and str(f) in message, message
        assert store.sessions() == []
        assert store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    # the same file through auto-detection is refused too, never imported as something else
    with Store.open(tmp_path / "s.db") as store:
        try:
            import_path(store, f, "auto")
        except UserError:
            pass
        else:
            assert fmt == "csv" or case_id.endswith(("-list", "-number", "-string")), case_id


LEGAL = [
    ("hyperfine-same-command-twice", "hyperfine",
     json.dumps(_with(HYPERFINE, ["results"], HYPERFINE["results"] * 2))),
    ("pyperf-nameless-benchmark", "pyperf",
     json.dumps(_with(PYPERF, ["benchmarks", 0, "metadata", "name"], None))),
    ("name-null-is-a-name", "gbench", json.dumps(_with(GBENCH, ["benchmarks", 0, "name"], "null"))),
    ("header-then-values", "csv", "label,value\na,1\n"),
    ("crlf-and-bom", "csv", "\ufeffa,1\r\nb,2\r\n"),
    ("percent-and-underscore-names", "csv", "a%b,1\na_b,2\n"),
]


@pytest.mark.parametrize("case_id,fmt,text", LEGAL, ids=[c[0] for c in LEGAL])
def test_legal_edge_cases_import_exactly(tmp_path, case_id, fmt, text):
    f = tmp_path / "input.dat"
    f.write_text(text, encoding="utf-8")
    with Store.open(tmp_path / "s.db") as store:
        [ref] = import_path(store, f, fmt)
        names = [b["name"] for b in store.benchmarks(ref.id)]
        assert names and all(names)
        if case_id == "percent-and-underscore-names":
            assert list(store.resolve_series("a_b").values) == [2.0]
        if case_id == "hyperfine-same-command-twice":
            assert names == ["a", "a #2"]
        if case_id == "name-null-is-a-name":
            assert names == ["null"]


@pytest.mark.parametrize("case_id", ["csv-0-'a,nan\\n'", "gbench-value--1", "pyperf-utf16",
                                     "hyperfine-gzip-corrupt", "json-deep"])
def test_real_console_script_on_corpus_samples(tmp_path, db_path, case_id):
    [(_, fmt, content)] = [c for c in CASES if c[0] == case_id]
    f = tmp_path / "input.dat"
    f.write_bytes(content)
    assert_one_line_error(run_cli("import", str(f), "--format", fmt, db=db_path), str(f))
    with Store.open(db_path, readonly=True) as store:
        assert store.sessions() == []
