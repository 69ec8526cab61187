"""The finite-number parsers of benchlab.units and the Click types built on them (cli/params)."""

from __future__ import annotations

import math

import click
import pytest
from click.testing import CliRunner

from benchlab.cli import params
from benchlab.errors import UserError
from benchlab.units import (
    parse_duration_s,
    parse_finite_float,
    parse_positive_int,
    parse_size_bytes,
)


@pytest.mark.parametrize("text,seconds", [
    ("1.5", 1.5), ("2s", 2.0), ("200ms", 0.2), ("50us", 50e-6), ("50µs", 50e-6), ("10ns", 1e-8),
    ("1m", 60.0), ("2min", 120.0), ("1h", 3600.0), (" 3 ", 3.0), (".5", 0.5), ("1e-3", 1e-3),
    (7, 7.0),
])
def test_durations(text, seconds):
    assert math.isclose(parse_duration_s(text), seconds, rel_tol=1e-12)


@pytest.mark.parametrize("text", ["inf", "nan", "-1", "0", "1e400", "1e23", "abc", "", "1 parsec",
                                  "2 s s", "-0.5ms", "367d", str(367 * 86400), "Infinity"])
def test_bad_durations_are_one_line_user_errors(text):
    with pytest.raises(UserError) as err:
        parse_duration_s(text, what="--timeout")
    assert "\n" not in str(err.value) and "--timeout" in str(err.value)


def test_zero_duration_only_when_allowed():
    assert parse_duration_s("0", allow_zero=True) == 0.0
    with pytest.raises(UserError, match="must be > 0"):
        parse_duration_s("0")


@pytest.mark.parametrize("text,value", [("1", 1), ("10", 10), ("+3", 3), (" 42 ", 42),
                                        ("1000000000", 10**9)])
def test_counts(text, value):
    assert parse_positive_int(text) == value


@pytest.mark.parametrize("text", ["0", "-1", "1e23", "1.5", "nan", "inf", "", "ten", "1000000001",
                                  "٣", "10" * 30])
def test_bad_counts(text):
    with pytest.raises(UserError):
        parse_positive_int(text, what="--runs")


def test_zero_count_when_allowed():
    assert parse_positive_int("0", allow_zero=True) == 0
    with pytest.raises(UserError):
        parse_positive_int("-1", allow_zero=True)


@pytest.mark.parametrize("text,value", [("4096", 4096), ("512K", 512 << 10), ("512M", 512 << 20),
                                        ("1G", 1 << 30), ("1GiB", 1 << 30), ("1.5G", 3 << 29),
                                        ("2t", 2 << 40), ("1MB", 1 << 20)])
def test_sizes(text, value):
    assert parse_size_bytes(text) == value


@pytest.mark.parametrize("text", ["1e26G", "8E", "8192P", str(1 << 63), "0", "-1M", "nan", "inf",
                                  "1X", "", "M", "99999999999999999999999999"])
def test_bad_sizes(text):
    with pytest.raises(UserError):
        parse_size_bytes(text, what="--memory-limit")


def test_largest_size_below_two_to_the_63():
    assert parse_size_bytes(str((1 << 63) - 1)) == (1 << 63) - 1
    assert parse_size_bytes("0", allow_zero=True) == 0


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "NaN", "x", "1e999"])
def test_finite_float_refuses_non_finite(text):
    with pytest.raises(UserError):
        parse_finite_float(text)


def test_finite_float_bounds():
    assert parse_finite_float("0.05", minimum=0, maximum=1) == 0.05
    with pytest.raises(UserError, match="> 0"):
        parse_finite_float("0", minimum=0, exclusive_minimum=True)
    with pytest.raises(UserError, match="<= 1"):
        parse_finite_float("1.5", maximum=1)


@click.command()
@click.option("--timeout", type=params.SECONDS)
@click.option("--runs", type=params.COUNT, default=10)
@click.option("--warmup", type=params.COUNT0, default=1)
@click.option("--memory-limit", type=params.SIZE)
@click.option("--alpha", type=params.PROBABILITY, default=0.05)
@click.option("--ratio", type=params.POSITIVE, default=1.0)
def _probe(**values):
    click.echo(repr(sorted(values.items())))


def test_param_types_convert_good_values():
    result = CliRunner().invoke(_probe, ["--timeout", "200ms", "--runs", "3", "--warmup", "0",
                                         "--memory-limit", "1G", "--alpha", "0.01"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == repr([("alpha", 0.01), ("memory_limit", 1 << 30),
                                          ("ratio", 1.0), ("runs", 3), ("timeout", 0.2),
                                          ("warmup", 0)])


@pytest.mark.parametrize("argv,needle", [
    (["--timeout", "inf"], "--timeout"), (["--runs", "1e23"], "--runs"),
    (["--warmup", "-1"], "--warmup"), (["--memory-limit", "1e26G"], "--memory-limit"),
    (["--alpha", "1"], "--alpha"), (["--alpha", "nan"], "--alpha"), (["--ratio", "0"], "--ratio"),
])
def test_param_types_refuse_with_click_usage_errors(argv, needle):
    result = CliRunner().invoke(_probe, argv)
    assert result.exit_code == 2
    assert f"Invalid value for '{needle}'" in result.output
    assert "Traceback" not in result.output


def test_cpu_lists_are_bounded_before_they_are_expanded():
    """A huge range is refused by its last number, before a set of 10^11 ints is built; the
    largest allowed CPU still parses, and sysfs-style lists are unchanged."""
    import time

    from benchlab.units import MAX_CPU_NUMBER, parse_cpu_list

    assert parse_cpu_list("0,2-3,8-12:2") == (0, 2, 3, 8, 10, 12)
    assert parse_cpu_list(f"{MAX_CPU_NUMBER}") == (MAX_CPU_NUMBER,)
    started = time.monotonic()
    for text in ("0-99999999999", f"{MAX_CPU_NUMBER + 1}", f"0-{10**30}:2"):
        with pytest.raises(UserError, match=f"above {MAX_CPU_NUMBER}") as err:
            parse_cpu_list(text, what="--cpus list")
        assert "\n" not in str(err.value) and "--cpus list" in str(err.value)
    # Generous: expanding 0-99999999999 would take minutes and all memory, refusing takes µs.
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("text", ["-1", "4294967296", str(10**30), "1.5", "1e3", "nan", ""])
def test_seed_type_refuses_what_numpy_would_refuse(text):
    import numpy as np

    with pytest.raises(click.BadParameter):
        params.SEED.convert(text, None, None)
    for good in ("0", "4294967295"):
        np.random.default_rng(params.SEED.convert(good, None, None))  # accepted by numpy too
