"""Speed of benchlab's comparison statistics vs R, with the same numbers (prints figures).

1. The JayBeams analysis of vm-results.csv (2 x 100,000 samples): benchlab's compare()
   (seed-compatible with 10,000 bootstrap resamples as the post, and the default flow), and
   the same steps in R (acf, boot(R = 10000) of the sd per group with parallel = "multicore",
   boot.ci, power.t.test, wilcox.test(conf.int = TRUE)), with their results side by side.
2. Hodges-Lehmann estimate with its 95 % interval on 1M x 1M samples (1e12 pairs).

Usage:  .venv/bin/python bench/stats_speed.py [--skip-r] [--data DIR] [--repeat N]
R takes several minutes (the post's analysis: ~3 min, 5.5 GB at 2 x 100k).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from benchlab.report.verdict_text import verdict_text
from benchlab.stats.independence import check_independence
from benchlab.stats.rank import hodges_lehmann, mann_whitney_u
from benchlab.stats.verdict import CompareOptions, compare, estimate_sd

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "data" / "jaybeams"

R_SCRIPT = r"""
suppressPackageStartupMessages({library(boot); library(parallel)})
args <- commandArgs(trailingOnly = TRUE)
tic <- function() proc.time()[["elapsed"]]
t.all <- tic()
data <- read.csv(file = args[[1]], header = FALSE, comment.char = "#",
                 col.names = c("book_type", "nanoseconds"))
data$microseconds <- data$nanoseconds / 1000.0
a <- ts(subset(data, book_type == "array")$microseconds)
m <- ts(subset(data, book_type == "map")$microseconds)
t0 <- tic()
max.acf.array <- max(abs(tail(acf(a, plot = FALSE)$acf, -1)))
max.acf.map <- max(abs(tail(acf(m, plot = FALSE)$acf, -1)))
t.acf <- tic() - t0
t0 <- tic()
sd.estimator <- function(D, i) sd(D[i, "microseconds"])
set.seed(1)
core.count <- detectCores()
b.array <- boot(data = subset(data, book_type == "array"), R = 10000, statistic = sd.estimator,
                parallel = "multicore", ncpus = core.count)
ci.array <- boot.ci(b.array, type = c("perc", "norm", "basic"))
b.map <- boot(data = subset(data, book_type == "map"), R = 10000, statistic = sd.estimator,
              parallel = "multicore", ncpus = core.count)
ci.map <- boot.ci(b.map, type = c("perc", "norm", "basic"))
estimated.sd <- ceiling(max(ci.map$percent[[4]], ci.array$percent[[4]],
                            ci.map$basic[[4]], ci.array$basic[[4]],
                            ci.map$normal[[3]], ci.array$normal[[3]]))
t.boot <- tic() - t0
t0 <- tic()
min.delta <- 1.0 / (3 * 1000.0) * 20000
r10 <- power.t.test(delta = 10 * min.delta, sd = estimated.sd, sig.level = 0.01, power = 0.95)
r1 <- power.t.test(delta = min.delta, sd = estimated.sd, sig.level = 0.01, power = 0.95)
t.power <- tic() - t0
t0 <- tic()
mw <- wilcox.test(microseconds ~ book_type, data = data, conf.int = TRUE)
t.wilcox <- tic() - t0
t.all <- tic() - t.all
cat(sprintf("max_acf %.6f %.6f\n", max.acf.array, max.acf.map))
cat(sprintf("normal_upper %.4f %.4f\n", ci.array$normal[[3]], ci.map$normal[[3]]))
cat(sprintf("estimated_sd %g\n", estimated.sd))
cat(sprintf("power_n %.4f %.4f\n", r10$n, r1$n))
cat(sprintf("wilcox %.10g %.10g %.10g %.10g\n", mw$p.value, mw$estimate, mw$conf.int[1], mw$conf.int[2]))
cat(sprintf("seconds acf=%.2f boot=%.2f power=%.2f wilcox=%.2f total=%.2f\n",
            t.acf, t.boot, t.power, t.wilcox, t.all))
"""


def load(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """array and map timings (ns) from a JayBeams results file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = np.loadtxt(path, delimiter=",", comments="#", dtype=str)
    values = rows[:, 1].astype(np.float64)
    return values[rows[:, 0] == "array"], values[rows[:, 0] == "map"]


def timed(func, *args, **kwargs):
    t0 = time.perf_counter()
    out = func(*args, **kwargs)
    return out, time.perf_counter() - t0


def run_r(path: Path) -> dict[str, list[float]] | None:
    if shutil.which("Rscript") is None:
        print("   R: Rscript not found, skipped")
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as f:
        f.write(R_SCRIPT)
    t0 = time.perf_counter()
    proc = subprocess.run(["Rscript", f.name, str(path)], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    Path(f.name).unlink()
    if proc.returncode != 0:
        print(f"   R failed: {proc.stderr.strip().splitlines()[-1:]}")
        return None
    out: dict[str, list[float]] = {"wall": [wall]}
    for line in proc.stdout.splitlines():
        key, *vals = line.split()
        if key == "seconds":
            out[key] = [float(v.split("=")[1]) for v in vals]
        else:
            out[key] = [float(v) for v in vals]
    return out


def seed_analysis(data_dir: Path, skip_r: bool) -> None:
    path = data_dir / "vm-results.csv"
    if not path.is_file():
        print(f"1. skipped: {path} is absent")
        return
    a, m = load(path)
    print(f"1. The JayBeams analysis of {path.name}: {a.size} + {m.size} samples")
    seed_opts = CompareOptions(iterations=20_000, clock_ghz=3.0, jaybeams_compatible=True,
                               bootstrap_resamples=10_000, seed=1)
    compat, t_compat = timed(compare, a, m, name_a="array", name_b="map", options=seed_opts)
    default, t_default = timed(compare, a, m, name_a="array", name_b="map",
                               options=CompareOptions(iterations=20_000, clock_ghz=3.0))
    _, t_acf = timed(lambda: (check_independence(a), check_independence(m)))
    _, t_boot10k = timed(estimate_sd, {"array": a, "map": m}, jaybeams_compatible=True,
                         n_resamples=10_000, seed=1)
    _, t_boot2k = timed(estimate_sd, {"array": a, "map": m}, n_resamples=2_000, seed=1)
    _, t_mw = timed(mann_whitney_u, a, m)
    _, t_hl = timed(hodges_lehmann, a, m)
    hl = compat.hodges_lehmann
    print("   benchlab (seed-compatible, B = 10,000):")
    print(f"     max |ACF| array={compat.independence_a.max_abs_acf:.4f} "
          f"map={compat.independence_b.max_abs_acf:.4f}; sd estimate "
          f"{compat.sd_estimate.value / 1e3:g} us; power n = {compat.plan_10x.n_t_test:.1f} / "
          f"{compat.plan_1x.n_t_test:.1f} -> {compat.plan_10x.n_required} / "
          f"{compat.plan_1x.n_required}")
    print(f"     p = {compat.p_value:g}; HL = {hl.estimate / 1e3:.4f} us, 95% CI "
          f"[{hl.ci_low / 1e3:.4f}, {hl.ci_high / 1e3:.4f}] us")
    print(f"     sd bound {compat.sd_estimate.bound / 1e3:.2f} us ± "
          f"{compat.sd_estimate.monte_carlo_error / 1e3:.2f} us (Monte-Carlo SD)")
    print(f"     verdict: {verdict_text(compat)}")
    print(f"   benchlab default flow (B = 2,000, robust spread {default.spread / 1e3:.1f}"
          f" us, {default.spread_method}): {verdict_text(default)}")
    print(f"   benchlab seconds: compat total {t_compat:.2f}, default total {t_default:.2f} "
          f"(acf {t_acf:.2f}, sd bootstrap B=10k {t_boot10k:.2f}, B=2k {t_boot2k:.2f}, "
          f"Mann-Whitney {t_mw:.2f}, HL+CI {t_hl:.2f})")
    if skip_r:
        print("   R: skipped (--skip-r)")
        return
    r = run_r(path)
    if r is None:
        return
    print("   R (the JayBeams steps):")
    print(f"     max |ACF| {r['max_acf'][0]:.4f} {r['max_acf'][1]:.4f}; normal upper bounds "
          f"{r['normal_upper'][0]:.3f} {r['normal_upper'][1]:.3f} -> sd "
          f"{r['estimated_sd'][0]:g}; power n {r['power_n'][0]:.1f} / {r['power_n'][1]:.1f}")
    p, est, lo, hi = r["wilcox"]
    print(f"     p = {p:g}; HL = {est:.4f} us, 95% CI [{lo:.4f}, {hi:.4f}] us "
          f"(|diff| to benchlab: {abs(est - hl.estimate / 1e3):.1e}, "
          f"{abs(lo - hl.ci_low / 1e3):.1e}, {abs(hi - hl.ci_high / 1e3):.1e})")
    acf_s, boot_s, power_s, wilcox_s, total_s = r["seconds"]
    print(f"   R seconds: total {total_s:.1f} (acf {acf_s:.2f}, boot {boot_s:.1f}, power "
          f"{power_s:.2f}, wilcox.test conf.int {wilcox_s:.1f}); Rscript wall {r['wall'][0]:.1f}")
    print(f"   speed-up: seed-compatible {total_s / t_compat:.1f}x, default flow "
          f"{total_s / t_default:.1f}x; Mann-Whitney + HL interval {wilcox_s / (t_mw + t_hl):.1f}x")


#: Hodges-Lehmann + 95 % CI on 1M x 1M, CPU seconds measured before (docs/analysis.md,
#: 2026-12-07 at load 17-21; the console script's first call, a binary search per row).
HL_MILLION_BEFORE_S = 1.09


def hl_million(repeat: int) -> None:
    """Hodges-Lehmann with its 95 % interval on 1M x 1M samples, each call cold (the memory of
    selected differences emptied), wall and CPU seconds, beside the figure measured before."""
    from benchlab.stats.rank import forget_remembered

    rng = np.random.default_rng(1)
    n = 1_000_000
    x = np.round(rng.lognormal(13.0, 0.3, n))
    y = np.round(rng.lognormal(13.02, 0.3, n))
    xf, yf = rng.lognormal(0.0, 0.3, n), rng.lognormal(0.02, 0.3, n)
    print(f"2. Hodges-Lehmann + 95% CI on {n:,} x {n:,} (1e12 pairwise differences), "
          f"median of {repeat}, each cold; before: {HL_MILLION_BEFORE_S} s of CPU")
    cases = (("integer ns (a table lookup per row)", (x, y)),
             ("their logarithms, as the verdict (a search per row)", (np.log(x), np.log(y))),
             ("floats spanning 20x (a search and a repair per row)", (xf, yf)))
    for label, (u, v) in cases:
        walls, cpus = [], []
        for _ in range(repeat):
            forget_remembered()
            cpu0 = time.process_time()
            result, seconds = timed(hodges_lehmann, u, v)
            cpus.append(time.process_time() - cpu0)
            walls.append(seconds)
        print(f"   {label}: wall {np.median(walls):.2f} s, CPU {np.median(cpus):.2f} s; "
              f"estimate {result.estimate:.6g}, CI [{result.ci_low:.6g}, {result.ci_high:.6g}]"
              f"  " + ("OK (< 2 s)" if np.median(cpus) < 2 else "SLOWER THAN 2 s"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-r", action="store_true", help="do not run the R comparison")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="directory with vm-results.csv (default ../shared/data/jaybeams)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the 1M x 1M timing")
    args = parser.parse_args()
    hl_million(args.repeat)
    seed_analysis(args.data, args.skip_r)


if __name__ == "__main__":
    main()
