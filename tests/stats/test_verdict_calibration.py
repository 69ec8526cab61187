"""bench/verdict_calibration.py --quick runs and its figures hold their goals:
the calibration script itself is exercised, on the real verdict_model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_quick_calibration_prints_every_figure_and_no_contradiction():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "verdict_calibration.py"),
                           "--quick", "--families", "lognormal,grid", "--sections", "verdict"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count(": false claims") == 8 and out.count(": power") == 6
    drift = out.split("drift by up to 40 %", 1)[1].splitlines()[1]
    assert drift.strip().startswith("0.0%"), drift  # a 9x difference never "cannot tell"
    assert len(re.findall(r"'N more runs' decides when redrawn at N: fresh", out)) == 2
    # by construction the word never contradicts its own interval
    assert not re.search(r"(decided with 1 inside|word against its interval) +[1-9]", out), out
    assert not re.search(r"wrong direction +[1-9]", out), out


def test_dependence_sections_print_every_cell():
    """Sections 6-9 (grid, AR(1), power beside Mann-Whitney, sequential A/A) run on the real
    verdict and SequentialDesign and print every cell; 3 simulations a cell (a smoke test:
    the figures are in docs/verdict.md)."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "verdict_calibration.py"),
                           "--sections", "dependence", "--sims", "3"], capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert len(re.findall(r"\d: false-claim rate", out)) == 6 + 27
    assert out.count("; Mann-Whitney ") == 12 and len(re.findall(r"; coverage +\d", out)) == 12
    assert len(re.findall(r"alpha=0\.0[15] phi=0\.[035]: ", out)) == 6


@pytest.mark.slow
def test_tradeoff_script_prints_every_knob_trigger_and_frontier_point():
    """bench/verdict_tradeoff.py (the cost of the evidence of dependence, docs/verdict.md)
    runs on the real verdict: 4 simulations a cell (a smoke test)."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "verdict_tradeoff.py"),
                           "--sims", "4"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert len(re.findall(r"n=(12|20): evidence pooled", out)) == 8
    assert len(re.findall(r"_(LEVEL|Z) = [\d.]+ \(n = (12|20)\): power gap", out)) == 12
    assert len(re.findall(r"lambda [\d.]+: AR\(1\) phi 0.3 A/A", out)) == 14
    assert "(shipped 0.1)" in out and "(shipped 0.2)" in out and "(shipped 1.645)" in out
