"""Size of benchlab's base install and the time of ``uv tool install`` from the wheel.

Builds the wheel (``uv build``), then for the base install and for ``[all]``: a fresh venv with
the wheel installed by ``uv pip install`` (counts the installed distributions and the
site-packages size, bytecode not compiled, as pip leaves it), and ``uv tool install`` of the
wheel into a throw-away tool directory, timed, with uv's cache warm (the first pass fills it;
the figure is the second pass, as on a machine that installed anything recent before) and cold
(``--no-cache``: every wheel downloaded from PyPI). Goals: base <= 150 MB and <= 15 packages.

Usage:  .venv/bin/python bench/install_size.py [--cold]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_MB, GOAL_PACKAGES = 150, 15
# Measured before scipy left the base install (load 9.8).
BEFORE_SCIPY_LEFT = "183 MB, 9 packages (numpy, scipy, rich, click, pyyaml and theirs)"


def uv(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run uv (fatal on failure)."""
    proc = subprocess.run(["uv", *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"install_size: uv {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return proc


def tree_mb(path: Path) -> float:
    """Apparent size of every file under ``path``, in MB (10^6 bytes)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                total += os.path.getsize(full)
    return total / 1e6


def venv_install(wheel: Path, extra: str, tmp: Path) -> tuple[int, float, list[str], float]:
    """(distributions installed, site-packages MB, their names, MB once bytecode is compiled
    as pip does) for ``wheel[extra]``."""
    venv = tmp / f"venv{extra or '-base'}"
    uv("venv", "-q", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    spec = f"{wheel}[{extra}]" if extra else str(wheel)
    uv("pip", "install", "-q", "--python", str(python), spec)
    names = uv("pip", "freeze", "--python", str(python)).stdout.splitlines()
    site = next((venv / "lib").glob("python3*/site-packages"))
    size = tree_mb(site)
    subprocess.run([str(python), "-m", "compileall", "-q", "-j", "0", str(site)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return len(names), size, names, tree_mb(site)


def tool_install_s(wheel: Path, extra: str, tmp: Path, cold: bool) -> float:
    """Wall seconds of ``uv tool install`` of the wheel into a fresh tool directory."""
    env = dict(os.environ, UV_TOOL_DIR=str(tmp / "tools"), UV_TOOL_BIN_DIR=str(tmp / "bin"))
    spec = f"{wheel}[{extra}]" if extra else str(wheel)
    args = ["tool", "install", "-q", "--force", "--python", sys.executable, spec]
    if cold:
        args.insert(2, "--no-cache")
    shutil.rmtree(tmp / "tools", ignore_errors=True)
    start = time.perf_counter()
    uv(*args, env=env)
    elapsed = time.perf_counter() - start
    check = subprocess.run([str(tmp / "bin" / "benchlab"), "--version"], capture_output=True,
                           text=True)
    if check.returncode != 0:
        sys.exit(f"install_size: the installed tool does not run: {check.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true",
                        help="also time uv tool install with no cache (downloads from PyPI)")
    args = parser.parse_args()
    if shutil.which("uv") is None:
        sys.exit("install_size: uv is not installed; run scripts/setup.sh")
    with tempfile.TemporaryDirectory(prefix="install-size-") as tmp_name:
        tmp = Path(tmp_name)
        uv("build", "-q", "--wheel", "-o", str(tmp / "dist"), str(REPO))
        wheel = next((tmp / "dist").glob("benchlab-*.whl"))
        print(f"wheel: {wheel.name}, {wheel.stat().st_size / 1e6:.2f} MB; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'install':10} {'packages':>8} {'size':>9} {'with .pyc':>10} {'tool install (warm)':>20}"
              f"{'  (cold)' if args.cold else ''}")
        for extra in ("", "all"):
            count, size, names, compiled = venv_install(wheel, extra, tmp)
            tool_install_s(wheel, extra, tmp, cold=False)  # fills uv's cache
            warm = tool_install_s(wheel, extra, tmp, cold=False)
            cold = f"  {tool_install_s(wheel, extra, tmp, cold=True):6.1f} s" if args.cold else ""
            label = f"[{extra}]" if extra else "base"
            goal = ""
            if not extra:
                ok = size <= GOAL_MB and count <= GOAL_PACKAGES
                goal = (f"   goal <= {GOAL_MB} MB, <= {GOAL_PACKAGES} packages: "
                        f"{'met' if ok else 'NOT met'} (with scipy: {BEFORE_SCIPY_LEFT})")
            print(f"{label:10} {count:8d} {size:7.0f} MB {compiled:7.0f} MB {warm:18.2f} s{cold}{goal}")
            if not extra:
                print("  base packages: " + ", ".join(n.split("==")[0].split(" @ ")[0]
                                                      for n in names))
                heavy = sorted(((tree_mb(p), p.name) for p in
                                next((tmp / "venv-base" / "lib").glob("python3*/site-packages"))
                                .iterdir() if p.is_dir()), reverse=True)[:4]
                print("  largest: " + ", ".join(f"{name} {mb:.0f} MB" for mb, name in heavy))


if __name__ == "__main__":
    main()
