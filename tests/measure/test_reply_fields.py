"""The exec helper's result line read into fields (split in C, one pass, for a
line of ``key=value`` pairs; the pair-by-pair reading for any other line). Real lines of the
real helper, and lines it could write on an error."""

from __future__ import annotations

from benchlab.measure.spawn import SpawnRequest, helper_client
from benchlab.measure.spawn.helper_client import _reply_fields
from benchlab.measure.spawn.rusage import measurement_from_fields


def _pairwise(text: str) -> dict[str, str]:
    fields = {}
    for pair in text.split():
        key, _, value = pair.partition("=")
        fields[key] = value
    return fields


def test_reply_fields_read_as_pair_by_pair():
    lines = [
        "status=ok exit=0 signal=-1 wall_ns=412345 user_ns=0 sys_ns=350000 maxrss_kib=1536 "
        "minflt=71 majflt=0 nvcsw=1 nivcsw=0 start_mono_ns=5 end_mono_ns=412350 "
        "start_unix_ns=1700000000000000000 stage=none index=0 errno=0 descendants=0 cpus=0,1\n",
        "status=error stage=exec index=0 errno=2\n",
        "status=ok cpus= flag novalue=a=b\n",  # an empty value, a bare word, a second '='
        "",
    ]
    for line in lines:
        assert _reply_fields(line) == _pairwise(line)


def test_a_real_run_measures_as_before():
    """One run of /bin/true through the real helper: fields in, a measurement out."""
    request = SpawnRequest(argv=["/bin/true"])
    server = helper_client.thread_helper()
    fields = server.run(helper_client._helper_tokens(request), None)
    m = measurement_from_fields(request, fields)
    assert (m.status, m.exit_code, m.signal, m.method) == ("ok", 0, None, "exec-helper")
    assert m.wall_ns == int(fields["wall_ns"]) > 0 and m.end_mono_ns > m.start_mono_ns
    assert m.cpus == (None if fields["cpus"] == "-"
                      else tuple(int(c) for c in fields["cpus"].split(",")))
    failed = measurement_from_fields(request, _reply_fields("status=failed exit=3 signal=-1\n"))
    assert (failed.status, failed.exit_code, failed.signal, failed.wall_ns) == ("failed", 3, None, 0)
    killed = measurement_from_fields(request, _reply_fields("status=signaled exit=-1 signal=9\n"))
    assert (killed.exit_code, killed.signal) == (None, 9)


def _read_field_by_field(f: dict[str, str]) -> dict:
    """What an ok line measured before the direct reading (every field by get with 0)."""
    get = f.get
    exit_code = int(get("exit", 0))
    term_signal = int(get("signal", 0))
    cpus = get("cpus", "-")
    return dict(
        status="ok", exit_code=None if exit_code < 0 else exit_code,
        signal=term_signal if term_signal > 0 else None,
        **{name: int(get(key, 0)) for name, key in (
            ("wall_ns", "wall_ns"), ("user_ns", "user_ns"), ("sys_ns", "sys_ns"),
            ("max_rss_kib", "maxrss_kib"), ("minflt", "minflt"), ("majflt", "majflt"),
            ("nvcsw", "nvcsw"), ("nivcsw", "nivcsw"), ("start_mono_ns", "start_mono_ns"),
            ("end_mono_ns", "end_mono_ns"), ("start_unix_ns", "start_unix_ns"))},
        error=None, method="exec-helper",
        cpus=None if cpus in ("-", "") else tuple(int(c) for c in cpus.split(",")),
        descendants_killed=int(get("descendants", 0)))


def test_an_ok_line_measures_as_read_field_by_field():
    """An ok run's line is read by subscription; the values are those of
    reading each field with a default, for complete lines and for lines missing numbers."""
    full = ("status=ok exit=0 signal=-1 wall_ns=412345 user_ns=7 sys_ns=350000 maxrss_kib=1536 "
            "minflt=71 majflt=2 nvcsw=1 nivcsw=4 start_mono_ns=5 end_mono_ns=412350 "
            "start_unix_ns=1700000000000000000 stage=none index=0 errno=0 descendants={d} "
            "cpus={c}\n")
    lines = [full.format(d=0, c="-"), full.format(d=3, c="0,1"), full.format(d=0, c=""),
             "status=ok exit=0 wall_ns=9\n", "status=ok\n"]
    request = SpawnRequest(argv=["/bin/true"])
    for line in lines:
        fields = _reply_fields(line)
        m = measurement_from_fields(request, fields)
        assert {k: getattr(m, k) for k in _read_field_by_field(fields)} == \
            _read_field_by_field(fields), line
