"""The bad-input corpus's machinery: the shared files, a case's input, the store digest, the runner.

The template store is made by the real console script (an import of a small jaybeams CSV named
``jb`` with benchmarks ``a`` and ``b``), so it is whatever today's schema is. Each case gets a
byte copy of it in its own directory: cases never share a database.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.badinput import makers
from tests.conftest import BENCHLAB

# benchlab refuses bad input in about a second; a case still running after this was not refused.
# 60 s, not 12: on a loaded CI machine (load 4-8 on 2 CPUs) importing the command's modules alone
# can take several seconds, and a refused case must never be mistaken for a hang.
CASE_TIMEOUT_S = 60.0


@dataclass
class Shared:
    """Files made once per session and read (never written) by every case."""

    root: Path
    template_db: Path
    big_line: Path
    profile: Path
    variability: Path
    valid: dict[str, tuple[str, str]]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([BENCHLAB, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"preparing the corpus: benchlab {' '.join(args)} failed:\n"
                           f"{proc.stderr[-2000:]}")
    return proc


def prepare_shared(root: Path) -> Shared:
    """Make the template store and the shared files under ``root`` (once per session)."""
    rng = random.Random(1)
    jb = root / "jb.csv"
    jb.write_text("".join(f"{label},{v:.4f}\n" for label, mu in (("a", 10.0), ("b", 10.5))
                          for v in (rng.gauss(mu, 0.2) for _ in range(30))))
    template = root / "template.db"
    _cli("import", "--format", "csv", str(jb), "--name", "jb", "--db", str(template), cwd=root)
    exported = _cli("export", "--format", "json", "--db", str(template), cwd=root).stdout
    # Imported under a fresh uid, so only the spoiled part (not a duplicate session) is at fault.
    doc = json.loads(exported)
    doc["sessions"][0]["uid"] = "badc0de1"
    valid = dict(makers.VALID, json=(json.dumps(doc, indent=1), ".json"))
    big = root / "bigline.dat"
    makers.write_big_line(big)
    profile = root / "valid-profile.json"
    profile.write_text(makers.VALID["profile"][0])
    variability = root / "valid-variability.json"
    variability.write_text(makers.VALID["variability"][0])
    return Shared(root, template, big, profile, variability, valid)


def make_input(spec: tuple | None, case_id: str, casedir: Path, shared: Shared) -> Path | None:
    """Create the case's input file (or directory) from its spec; the path for ``{in}``."""
    if spec is None:
        return None
    if spec[0] == "text":
        _, suffix, text = spec
        # A neutral name: a case id like value-csv-nan would put "nan" in every message.
        path = casedir / f"case-input{suffix}"
        path.write_text(text)
        return path
    _, reader, spoil = spec
    text, suffix = shared.valid[reader]
    if spoil == "gzip-corrupt":
        suffix += ".gz"
    path = casedir / f"{spoil}.{reader}{suffix}"
    if spoil == "bigline":
        return shared.big_line
    if spoil == "directory":
        path.mkdir()
    elif spoil != "missing":
        path.write_bytes(makers.spoiled(spoil, text))
    return path


def corrupt_page_two(db: Path) -> None:
    """Overwrite the database's second page (bytes 4096..8191 at the default page size)."""
    with sqlite3.connect(db) as con:
        page = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(db, "r+b") as f:
        f.seek(page)
        f.write(random.Random(2).randbytes(page))


def store_state(db: Path, raw: bool) -> tuple[str, int]:
    """(digest of the store's content, sessions left 'running') without touching ``db``.

    The file and its -wal are copied to a scratch directory and read there (a write left in the
    WAL counts); ``raw`` digests the bytes instead (a corrupted store cannot be dumped).
    """
    if not db.exists():
        return "absent", 0
    if raw:
        h = hashlib.sha256(db.read_bytes())
        wal = Path(f"{db}-wal")
        h.update(wal.read_bytes() if wal.exists() else b"")
        return h.hexdigest(), 0
    with tempfile.TemporaryDirectory(prefix="badinput-digest-") as tmp:
        copy = Path(tmp) / "copy.db"
        shutil.copyfile(db, copy)
        if Path(f"{db}-wal").exists():
            shutil.copyfile(f"{db}-wal", f"{copy}-wal")
        con = sqlite3.connect(copy)
        try:
            h = hashlib.sha256()
            for line in con.iterdump():
                h.update(line.encode())
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            running = (con.execute("SELECT count(*) FROM sessions WHERE status='running'")
                       .fetchone()[0] if "sessions" in tables else 0)
        finally:
            con.close()
    return h.hexdigest(), running


def run_case(argv: list[str], cwd: Path, env: dict[str, str],
             timeout: float = CASE_TIMEOUT_S) -> subprocess.CompletedProcess:
    """Run the real console script in its own process group; kill the whole group on timeout
    (a bad value that is not refused may start something long: that is a failure, not a hang)."""
    proc = subprocess.Popen([BENCHLAB, *argv], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace",
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += f"\n[badinput] still running after {timeout:.0f} s: killed"
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
