"""The bad-input corpus as data: one :class:`Case` per command line a user must not be hurt by.

Each case runs the real console script in a fresh directory with a copy of a prepared store and
must end in exit 2, one ``benchlab: error:`` line naming the problem (``expect``, compared
case-insensitively; for a file, its name), no traceback, the store's content unchanged, no
session left ``running`` and no ``benchlab-*`` temporary directory left behind.

Placeholders in ``argv``: ``{db}`` the case's store, ``{in}`` the case's input file, ``{dir}``
the case's directory, ``{big}`` the shared 50 MB one-line file, ``{profile}`` a valid profile
JSON, ``{out}`` a path in the case directory.

``area`` names who must make a failing case pass (the final report groups by it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.badinput import makers

# Who fixes what: the options and checks of a run, the readers and the database, the machine
# mechanisms, the statistics, the machine documents (profiles, calibrations), the CLI front end.
RUN, STORE, CONTROL, STATS, MACHINES, CLI = ("core/run options", "store/readers", "control",
                                             "stats", "machines", "cli")


@dataclass(frozen=True)
class Case:
    """One bad command line and what its one-line error must name."""

    id: str
    argv: tuple[str, ...]
    expect: str
    area: str
    store: str = "filled"           # filled | corrupt | readonly-dir | none
    input: tuple | None = None      # ("spoil", reader, spoil) | ("text", suffix, text) | ("dir", {})
    store_may_change: bool = False  # only for files the measured program writes mid-session
    marks: tuple = field(default=(), compare=False)


CASES: list[Case] = []


def _add(*cases: Case) -> None:
    CASES.extend(cases)


# --- numbers: inf, nan, huge, negative, zero, not a number, for every numeric option ---------

_FAST_RUN = ("run", "-q", "-r", "2", "--db", "{db}")
_GENERIC = {"inf": "inf", "nan": "nan", "huge": "1e23", "neg": "-1", "zero": "0", "text": "ten",
            "empty": ""}


def _numeric(command: tuple[str, ...], option: str, kinds: str, area: str,
             tail: tuple[str, ...] = (), values: dict[str, str] | None = None) -> None:
    table = dict(_GENERIC, **(values or {}))
    for kind in kinds.split():
        value = table[kind]
        name = "-".join(c for c in command if not c.startswith("-") and c not in ("{db}",))
        # The option as the user typed it, without dashes: deeper layers may word it "timeout".
        _add(Case(f"num-{name.split('-')[0]}{option}-{kind}", (*command, option, value, *tail),
                  option.lstrip("-"), area))


TRUE = ("/bin/true",)
_numeric(("run", "-q", "--db", "{db}"), "--runs", "inf nan huge neg zero text empty", RUN, TRUE)
for _opt in ("--warmup",):
    _numeric(_FAST_RUN, _opt, "inf nan huge neg", RUN, TRUE)
for _opt in ("--min-runs", "--max-runs"):
    _numeric(("run", "-q", "--db", "{db}"), _opt, "inf nan huge neg zero", RUN, TRUE)
for _opt in ("--min-time", "--max-time", "--timeout"):
    _numeric(_FAST_RUN, _opt, "inf nan huge neg zero", RUN, TRUE)
_numeric(_FAST_RUN, "--seed", "nan neg big", RUN, TRUE, {"big": str(10**30)})
_numeric(_FAST_RUN, "--workers", "inf nan huge neg zero", RUN, TRUE)
for _opt in ("--cpu-quota", "--cpu-period"):
    _numeric(_FAST_RUN + ("--isolation", "cgroup"), _opt, "inf nan huge neg zero", CONTROL, TRUE)
_numeric(_FAST_RUN + ("--isolation", "cgroup"), "--cpu-weight", "nan huge neg zero over", CONTROL,
         TRUE, {"over": "10001"})
_numeric(_FAST_RUN + ("--isolation", "cgroup"), "--memory-limit",
         "inf nan neg zero huge g26 e23g", CONTROL, TRUE,
         {"huge": "99999999999999999999999G", "g26": "1e26G", "e23g": "8E", "neg": "-1M"})
_numeric(_FAST_RUN + ("--isolation", "cgroup"), "--cpuset", "neg huge", CONTROL, TRUE,
         {"neg": "-1", "huge": "0-99999999999"})
_numeric(_FAST_RUN, "--affinity", "neg huge list", CONTROL, TRUE,
         {"neg": "core:-1", "huge": "core:1e23", "list": "cores:0-99999999999"})
_numeric(_FAST_RUN, "--load", "inf nan neg huge", CONTROL, TRUE,
         {"inf": "cpu:inf", "nan": "spin:nan", "neg": "cpu:-1", "huge": "memcpy:1e23"})
_UD = ("run", "-q", "--max-runs", "4", "--until-decided", "-n", "x", "-n", "y", "--db", "{db}")
_numeric(_UD, "--alpha", "inf nan neg zero one", STATS, ("/bin/true", "/bin/true"), {"one": "1"})
_numeric(_UD, "--equivalence-margin", "inf nan neg", STATS, ("/bin/true", "/bin/true"))
_numeric(_UD, "--look-every", "nan huge neg zero", STATS, ("/bin/true", "/bin/true"))
for _kind, (_low, _high) in {"nan": ("nan", "2"), "inf": ("1", "inf"), "huge": ("0", "1e23"),
                             "reversed": ("5", "1")}.items():
    _add(Case(f"num-run-P-{_kind}", _FAST_RUN + ("-P", "x", _low, _high, "/bin/echo {x}"),
              "-P", RUN))
for _kind, _step in {"zero": "0", "nan": "nan", "neg": "-1", "inf": "inf"}.items():
    _add(Case(f"num-run-D-{_kind}", _FAST_RUN + ("-P", "x", "1", "3", "-D", _step,
                                                 "/bin/echo {x}"), "step", RUN))
_add(Case("num-run-L-empty", _FAST_RUN + ("-L", "x", "", "/bin/echo {x}"), "-L", RUN))

_CMP = ("compare", "--db", "{db}", "jb:a", "jb:b")
_numeric(_CMP, "--alpha", "inf nan neg zero one", STATS, values={"one": "1"})
_numeric(_CMP, "--power", "inf nan neg one", STATS, values={"one": "1"})
for _opt in ("--min-effect", "--min-effect-percent"):
    _numeric(_CMP, _opt, "inf nan neg", STATS)
_numeric(_CMP, "--iterations", "nan huge neg zero", STATS)
_numeric(_CMP, "--clock-ghz", "inf nan neg zero", STATS)
_numeric(_CMP, "--resamples", "nan huge neg zero", STATS)
_numeric(_CMP, "--seed", "neg big", STATS, values={"big": str(10**30)})
_numeric(("analyze", "--db", "{db}", "jb:a"), "--mad-k", "inf nan neg zero", STATS)
_numeric(("analyze", "--db", "{db}", "jb:a"), "--seed", "neg big", STATS,
         values={"big": str(10**30)})

_PROF = ("profile", "--no-progress", "--methods", "int64", "--db", "{db}")
_numeric(_PROF, "--duration", "inf nan huge neg zero", MACHINES)
_numeric(_PROF, "--repeat", "nan huge neg zero", MACHINES)
_numeric(_PROF, "--target-cv", "inf nan neg", MACHINES)
_numeric(_PROF, "--max-repeat", "nan neg zero", MACHINES)
_numeric(_PROF, "--time-budget", "inf nan neg zero", MACHINES)
_numeric(_PROF, "--cpu-quota", "nan neg zero huge", MACHINES)
_numeric(_PROF, "--cpu-period", "nan neg zero", MACHINES)
_numeric(_PROF, "--nice", "nan low high", MACHINES, values={"low": "-21", "high": "20"})
_numeric(_PROF, "--cpus", "neg huge", MACHINES, values={"huge": "0-99999999999"})
_CAL = ("calibrate", "--base", "{profile}", "--methods", "int64", "-o", "{out}", "--db", "{db}")
_numeric(_CAL, "--period", "nan neg zero huge", MACHINES)
_numeric(_CAL, "--duration", "nan neg zero", MACHINES)
_numeric(_CAL, "--repeat", "nan one huge", MACHINES, values={"one": "1"})
_numeric(_CAL, "--max-trials", "nan one huge", MACHINES, values={"one": "1"})
_numeric(_CAL, "--cpus", "neg huge", MACHINES, values={"huge": "0-99999999999"})
_numeric(("demo", "--db", "{db}"), "--runs", "inf nan huge neg two", RUN, values={"two": "2"})
_numeric(("demo", "--db", "{db}"), "--warmup", "nan neg", RUN)
_numeric(("demo", "--db", "{db}"), "--size", "nan huge neg zero", RUN)
_numeric(("demo", "--db", "{db}"), "--seed", "neg big", RUN, values={"big": str(10**30)})
_numeric(("list", "--db", "{db}"), "--limit", "nan huge neg zero", CLI)
_numeric(_PROF, "--seed", "neg big", MACHINES, values={"big": str(10**30)})
_numeric(_CMP, "--conf-level", "inf nan neg zero one", STATS, values={"one": "1"})
_HIST = ("history", "--db", "{db}", "a")
_numeric(_HIST, "--alpha", "inf nan neg zero one", STATS, values={"one": "1"})
_numeric(_HIST, "--min-effect-percent", "inf nan neg huge", STATS)
# click checks options before the command reads its bundle, so the bundle need not exist.
_numeric(("reproduce", "--db", "{db}", "missing.benchlab.tar.gz"), "--tolerance",
         "inf nan neg zero huge", STATS)
_numeric(("study", "report", "--db", "{db}", "jb"), "--resamples", "nan huge neg zero", STATS)
_numeric(("predict", "--profile-ratio", "{in}"), "--target", "inf nan neg", MACHINES, ("10",))
for _kind, _value in {"inf": "inf", "nan": "nan", "neg": "-10", "zero": "0"}.items():
    _add(Case(f"num-predict-app-{_kind}", ("predict", "--profile-ratio", "{in}", "--target", "5",
                                           "--", _value), "app", MACHINES))

# The predict cases need a valid variability document as their {in}.
CASES[:] = [c if not c.id.startswith("num-predict") else
            Case(c.id, c.argv, c.expect, c.area,
                 input=("text", ".json", makers.VALID["variability"][0])) for c in CASES]

# --- every reader fed every spoiled input -----------------------------------------------------

READERS: dict[str, tuple[tuple[str, ...], str]] = {
    "csv": (("import", "--format", "csv", "{in}", "--db", "{db}"), STORE),
    "auto": (("import", "{in}", "--db", "{db}"), STORE),
    "hyperfine": (("import", "--format", "hyperfine", "{in}", "--db", "{db}"), STORE),
    "pyperf": (("import", "--format", "pyperf", "{in}", "--db", "{db}"), STORE),
    "gbench": (("import", "--format", "gbench", "{in}", "--db", "{db}"), STORE),
    "json": (("import", "--format", "json", "{in}", "--db", "{db}"), STORE),
    "metric": (("import", "--format", "metric", "--metric", makers.METRIC_OPTION, "{in}", "--db",
                "{db}"), STORE),
    "varsys16": (("import", "--format", "varsys16", "{in}", "--db", "{db}"), STORE),
    "calibration": (("run", "-q", "-r", "2", "--calibration", "{in}", "--db", "{db}",
                     "/bin/true"), MACHINES),
    "profile": (("variability", "{in}", "{profile}", "--db", "{db}"), MACHINES),
    "calibrate-base": (("calibrate", "--base", "{in}", "--methods", "int64", "-o", "{out}", "--db", "{db}"), MACHINES),
    "variability": (("predict", "--profile-ratio", "{in}", "--target", "5", "10"), MACHINES),
    "predict-apps": (("predict", "--profile-ratio", "{variability}", "{in}"), MACHINES),
    "suite": (("study", "run", "{in}", "--db", "{db}"), RUN),
    # The measured program writes the samples file; the run copies the spoiled file there.
    "samples-csv": (("run", "-q", "-r", "2", "--samples-csv", "{out}", "--db", "{db}",
                     "cp {in} {out}"), STORE),
}
_VALID_OF = {"calibrate-base": "profile"}

for _reader, (_argv, _area) in READERS.items():
    for _spoil in makers.SPOILS:
        if _reader == "samples-csv" and _spoil in ("directory", "missing"):
            continue  # cp would fail: that is a failing program, not a bad samples file
        _expect = ("out.csv" if _reader == "samples-csv" else
                   "bigline" if _spoil == "bigline" else
                   # auto takes a directory for program outputs: it must ask for --metric
                   "metric" if (_reader, _spoil) == ("auto", "directory") else f"{_spoil}.")
        _add(Case(f"file-{_reader}-{_spoil}", _argv, _expect, _area, input=("spoil", _VALID_OF.get(_reader, _reader), _spoil),
                  store_may_change=_reader == "samples-csv"))

# --- values no measurement has ----------------------------------------------------------------

_SUFFIX = {r: makers.VALID[r][1] for r in makers.VALID}
for _reader, _label, _text, _token in makers.BAD_VALUES:
    _argv, _area = READERS[_reader]
    _add(Case(f"value-{_reader}-{_label}", _argv, _token or "case-input", _area,
              input=("text", _SUFFIX[_reader], _text)))
for _label, _text, _token in makers.BAD_SUITES:
    _add(Case(f"suite-{_label}", READERS["suite"][0], _token, RUN, input=("text", ".toml", _text)))

# --- selectors, database paths, unknown options, outputs onto the store -----------------------

for _name in ("%", "_", "null", "jb%", "j_"):
    _add(Case(f"select-show-{_name}", ("show", _name, "--db", "{db}"), _name, STORE))
    _add(Case(f"select-export-{_name}", ("export", _name, "--db", "{db}"), _name, STORE))
for _series in ("%:a", "jb:%", "_:_", "null:a"):
    _add(Case(f"select-analyze-{_series}", ("analyze", _series, "--db", "{db}"),
              _series.split(":")[0] if _series.split(":")[0] != "jb" else "%", STORE))
_add(Case("select-compare-percent", ("compare", "jb:%", "jb:a", "--db", "{db}"), "%", STORE))
_add(Case("select-compare-underscore", ("compare", "jb:a", "jb:_", "--db", "{db}"), "_", STORE))

for _cmd in (("list",), ("show", "jb"), ("export",), ("import", "{in}"), ("run", "-r", "2",
             "/bin/true"), ("compare", "jb:a", "jb:b"), ("analyze", "jb:a"),
             ("study", "run", "--builtin")):
    _tag = "-".join(c for c in _cmd[:2] if c.isalpha())
    _add(Case(f"db-empty-{_tag}", (*_cmd, "--db", ""), "--db", STORE,
              input=("text", ".csv", makers.JAYBEAMS_CSV) if "{in}" in _cmd else None))
    _add(Case(f"db-corrupt-{_tag}", (*_cmd, "--db", "{db}"), "store.db", STORE, store="corrupt",
              input=("text", ".csv", makers.JAYBEAMS_CSV) if "{in}" in _cmd else None))
    _add(Case(f"db-directory-{_tag}", (*_cmd, "--db", "{dir}"), "casedir", STORE,
              input=("text", ".csv", makers.JAYBEAMS_CSV) if "{in}" in _cmd else None))
    # SQLite's in-memory name would become a file ':memory:' in the current directory.
    _add(Case(f"db-memory-{_tag}", (*_cmd, "--db", ":memory:"), ":memory:", STORE,
              input=("text", ".csv", makers.JAYBEAMS_CSV) if "{in}" in _cmd else None))
for _cmd in (("import", "{in}"), ("run", "-r", "2", "/bin/true")):
    _add(Case(f"db-readonly-dir-{_cmd[0]}", (*_cmd, "--db", "{db}"), "storedir", STORE,
              store="readonly-dir", input=("text", ".csv", makers.JAYBEAMS_CSV)
              if "{in}" in _cmd else None))

for _cmd in (("run", "/bin/true"), ("list",), ("show", "jb"), ("export",), ("import", "x.csv"),
             ("compare", "jb:a", "jb:b"), ("analyze", "jb:a"), ("env",), ("system",),
             ("system", "tune"), ("profile",), ("variability", "a", "b"), ("calibrate",),
             ("predict", "1"), ("study", "run"), ("demo",)):
    _add(Case(f"opt-unknown-{'-'.join(_cmd[:2]).replace('/', '').replace('.', '')}",
              (*_cmd, "--frobnicate", "--db", "{db}") if _cmd[0] not in ("env", "system")
              else (*_cmd, "--frobnicate"), "--frobnicate", CLI))
_add(Case("opt-unknown-command", ("frobnicate",), "frobnicate", CLI))
_add(Case("opt-missing-value", ("run", "--runs"), "--runs", CLI))
_add(Case("opt-no-command", ("run", "--db", "{db}"), "command", CLI))

for _suffix in ("", "-wal", "-shm"):
    _add(Case(f"out-export-onto-store{_suffix or '-db'}",
              ("export", "-o", "{db}" + _suffix, "--db", "{db}"), "store", STORE))
_add(Case("out-samples-csv-onto-store", ("run", "-r", "2", "--samples-csv", "{db}", "--db", "{db}",
                                         "/bin/true"), "store", RUN))
_add(Case("out-samples-csv-onto-wal", ("run", "-r", "2", "--samples-csv", "{db}-wal", "--db",
                                       "{db}", "/bin/true"), "store", RUN))
_add(Case("out-profile-onto-store", ("profile", "--methods", "int64", "-o", "{db}", "--db", "{db}"),
          "store", MACHINES))
_add(Case("out-calibrate-onto-store", ("calibrate", "--base", "{profile}", "--methods", "int64", "-o", "{db}", "--db",
                                       "{db}"), "store", MACHINES))

# --- names that are not what they look like, files that are someone else's ---------------------

# a libpq keyword string is a PostgreSQL database, never a file named after it (and its password)
_add(Case("db-keywords-malformed", ("list", "--db", "a=b c"), "not a usable PostgreSQL", STORE))
_add(Case("db-keywords-unreachable", ("run", "-q", "-r", "1", "/bin/true", "--db",
                                      "host=127.0.0.1 port=1 dbname=x user=u password=S3cret"),
          "cannot connect to PostgreSQL", STORE))
# benchlab removes the samples file before each run: a file already there is someone's
_add(Case("samples-csv-existing-file", ("run", "-q", "-r", "2", "--samples-csv", "{in}", "--db",
                                        "{db}", "/bin/true"), "already exists", RUN,
          input=("text", ".csv", "a,1\nimportant,3\n")))
_add(Case("metric-harness-name", ("run", "-q", "-r", "2", "--metric", r"wall=(\d+)", "--db",
                                  "{db}", "echo 5"), "--metric wall", RUN))
_add(Case("value-varsys16-header-only", READERS["varsys16"][0], "no rows", MACHINES,
          input=("text", ".csv", makers.VARSYS16_HEADER)))
_add(Case("value-csv-quote-never-closed", READERS["csv"][0], "never closed", STORE,
          input=("text", ".csv", 'label,value\na,1\n"open,5\nb,6\n')))
_add(Case("isolation-image-option", ("run", "-q", "-r", "1", "--isolation", "podman:--privileged",
                                     "--db", "{db}", "/bin/true"), "cannot begin with '-'",
          CONTROL))
_add(Case("isolation-wrap-missing", ("run", "-q", "-r", "1", "--isolation",
                                     "wrap:no-such-isolator {cmd}", "--db", "{db}", "/bin/true"),
          "not an executable here", CONTROL))

_ids = [c.id for c in CASES]
assert len(_ids) == len(set(_ids)), sorted({i for i in _ids if _ids.count(i) > 1})
