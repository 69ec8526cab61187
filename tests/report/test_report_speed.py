"""The report's fast paths give the same numbers as the straightforward ones.

Real SQLite stores written with the store's writer API; the references are independent: SQLite
ordering by the runs' ``seq`` in a join (the query the store used before), numpy's
``np.correlate`` for the ACF, ``scipy.stats.chi2.sf`` for Ljung-Box's p-value and
``scipy.stats.rankdata`` for the ranks of Mann-Whitney's U.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from benchlab.stats.independence import (
    acf,
    check_independence,
    effective_sample_size,
    independence_and_acf,
    ljung_box,
)
from benchlab.stats.rank import average_ranks
from benchlab.store.db import Store
from tests.report.storebuild import add_session

JOINED = ("SELECT b.run_id, b.data FROM sample_blocks b JOIN runs r ON r.id = b.run_id"
          " WHERE r.benchmark_id = ? AND r.warmup = 0 AND r.status IN ('ok', 'imported')"
          " AND b.metric = ? ORDER BY r.seq, b.first_seq")


def _joined(store, bid, metric):
    """(run id, value) per sample, unpacked here from the blocks' bytes (little-endian
    doubles) without the store's reader."""
    return [(run_id, float(v)) for run_id, data in store.conn.execute(JOINED, (bid, metric))
            for v in np.frombuffer(data, dtype="<f8")]


def test_sample_values_keep_run_order_when_runs_were_written_out_of_order(tmp_path):
    """Runs written with seq 5, 1, 3 (ids in the other order), a warm-up and a failed run:
    values come back in seq order, run by run, and leave out the warm-up and failed run."""
    rng = np.random.default_rng(4)
    with Store.open(tmp_path / "s.db") as store:
        ref = store.create_session("run", name="order")
        store.add_metric(ref.id, "lat", unit="ns", origin="stdout")
        store.add_metric(ref.id, "bytes", unit="B", origin="stdout")
        bid = store.add_benchmark(ref.id, "b", position=0, command="./b")
        per_run = {}
        for seq, size in ((5, 7), (1, 3), (3, 11)):
            per_run[seq] = rng.normal(100, 5, size)
            store.add_run(ref.id, bid, seq=seq, iteration=seq, fields={
                "status": "ok", "wall_ns": 1000, "exit_code": 0},
                samples={"lat": per_run[seq], "bytes": np.full(size, 64.0)})
        store.add_run(ref.id, bid, seq=0, iteration=0, warmup=True, fields={
            "status": "ok", "wall_ns": 1000, "exit_code": 0}, samples={"lat": np.ones(4)})
        store.add_run(ref.id, bid, seq=9, iteration=9, fields={
            "status": "failed", "wall_ns": 1000, "exit_code": 1}, samples={"lat": np.ones(2)})
        store.finish_session(ref.id, "complete")

        values, run_ids = store.sample_values(bid, "lat")
        rows = _joined(store, bid, "lat")
        assert values.tolist() == [r[1] for r in rows]
        assert run_ids.tolist() == [r[0] for r in rows] and run_ids.dtype == np.int64
        np.testing.assert_array_equal(values, np.concatenate([per_run[1], per_run[3],
                                                              per_run[5]]))
        assert store.sample_metrics(bid) == ["bytes", "lat"]
        empty, no_ids = store.sample_values(bid, "absent")
        assert empty.size == 0 and no_ids.size == 0
        series = store.resolve_series("order:b", "lat")
        np.testing.assert_array_equal(series.values, values)


def _acf_by_correlate(x: np.ndarray, lag: int) -> np.ndarray:
    dev = x - x.mean()
    full = np.correlate(dev, dev, mode="full")[dev.size - 1:]
    return full[: lag + 1] / full[0]


@pytest.mark.parametrize("kind", ["white", "ar1", "walk", "ties"])
def test_one_acf_serves_the_check_ljung_box_and_the_correlogram(kind):
    rng = np.random.default_rng(11)
    n = 5000
    x = {"white": rng.normal(size=n), "walk": np.cumsum(rng.normal(size=n)),
         "ties": np.round(rng.normal(size=n), 1)}.get(kind)
    if x is None:
        x = np.empty(n)
        x[0] = 0.0
        e = rng.normal(size=n)
        for i in range(1, n):
            x[i] = 0.6 * x[i - 1] + e[i]
    report, r = independence_and_acf(x)
    assert report == check_independence(x)
    np.testing.assert_allclose(r, _acf_by_correlate(x, report.max_lag), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(r, acf(x, report.max_lag))
    q = n * (n + 2) * np.sum(r[1:] ** 2 / (n - np.arange(1, r.size)))
    assert report.ljung_box.statistic == pytest.approx(q, rel=1e-12)
    assert report.ljung_box.p_value == pytest.approx(sps.chi2.sf(q, report.max_lag),
                                                     rel=1e-12, abs=1e-300)
    assert report.ljung_box == ljung_box(x, report.max_lag)
    # effective n by every lag (the definition), against the truncation the check uses
    full = _acf_by_correlate(x, n - 1)
    nonpos = np.flatnonzero(full[1:] <= 0)
    k_end = int(nonpos[0]) + 1 if nonpos.size else full.size
    expected = n / (1 + 2 * full[1:k_end].sum())
    assert report.effective_n == pytest.approx(expected, rel=1e-9)
    assert effective_sample_size(x) == pytest.approx(expected, rel=1e-9)


def test_average_ranks_are_scipys():
    rng = np.random.default_rng(2)
    for a in (rng.integers(0, 4, 200).astype(float), rng.normal(size=300),
              np.array([2.0, 2.0, 2.0]), np.array([7.0]),
              rng.integers(0, 900, 60_000).astype(float)):  # ties by the hundred, unstable sort
        np.testing.assert_array_equal(average_ranks(a), sps.rankdata(a))


def test_a_single_benchmark_report_does_not_import_scipy_stats(tmp_path):
    """scipy.stats costs about a second of start-up; one series needs none of it (the
    comparison and the history import it when they run)."""
    db = tmp_path / "one.db"
    with Store.open(db) as store:
        add_session(store, {"lat": np.random.default_rng(3).lognormal(0, 0.05, 5000) * 1e4},
                    name="one", program_metric="lat")
    code = ("import sys\nfrom benchlab.store.db import Store\n"
            "from benchlab.report.output import write_report\n"
            f"with Store.open({str(db)!r}) as s:\n"
            f"    write_report(s, ['one'], {str(tmp_path / 'r.html')!r})\n"
            "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    assert Path(tmp_path / "r.html").stat().st_size > 100_000


@pytest.mark.parametrize("n", [1, 5, 6, 10, 30, 31, 101, 2000])
def test_median_order_interval_is_scipys_quantile_test_interval(n):
    from benchlab.stats.median_interval import median_order_interval

    x = np.random.default_rng(n).lognormal(0, 0.3, n)
    got = median_order_interval(x, 0.95)
    ci = sps.quantile_test(x, q=float(np.median(x)), p=0.5).confidence_interval(0.95)
    s = np.sort(x)
    k = got.k
    assert got.coverage == pytest.approx(1 - 2 * sps.binom.cdf(k - 1, n, 0.5), rel=1e-12)
    if np.isnan(ci.low):  # n too small for 95 %: the range, and the coverage it has
        assert (got.low, got.high, k) == (s[0], s[-1], 1) and got.coverage < 0.95
    else:
        assert (got.low, got.high) == (ci.low, ci.high)
        assert got.coverage >= 0.95 > 1 - 2 * sps.binom.cdf(k, n, 0.5)  # k is the largest


def test_history_page_says_how_its_intervals_are_made(tmp_path):
    from benchlab.report.history import build_history, history_section
    from benchlab.stats.median_interval import median_order_interval

    rng = np.random.default_rng(8)
    with Store.open(tmp_path / "h.db") as store:
        for i in range(3):
            add_session(store, {"parse": 1e6 * rng.lognormal(0, 0.01, 25)}, name=f"n{i}")
        h = build_history(store, "parse")
        for p in h.points:
            values = store.resolve_series(f"{p.session_uid}:parse").values
            iv = median_order_interval(values)
            assert (p.low, p.high) == (iv.low, iv.high)
    assert "order statistics" in history_section(h).paragraphs[0]
    assert "no bootstrap" in history_section(h).paragraphs[0]


def test_show_reads_each_series_once(tmp_path, monkeypatch, capsys):
    """``show`` summarises each program series and judges the verdict's on the same values:
    the store reads each (benchmark, metric) once, and the verdict is printed."""
    from benchlab.cli.main import main

    rng = np.random.default_rng(8)
    with Store.open(tmp_path / "s.db") as store:
        uid = add_session(store, {"a": rng.normal(100, 5, 40), "b": rng.normal(120, 5, 40)},
                          name="two", program_metric="latency")
    reads: list[tuple[int, str]] = []
    read = Store.sample_values

    def counted(self, benchmark_id, metric):
        reads.append((benchmark_id, metric))
        return read(self, benchmark_id, metric)

    monkeypatch.setattr(Store, "sample_values", counted)
    main(["show", uid, "--db", str(tmp_path / "s.db")])
    assert "faster" in capsys.readouterr().out
    assert len(reads) == 2 and len(set(reads)) == 2
