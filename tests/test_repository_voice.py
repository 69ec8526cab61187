"""The repository speaks of the project: what benchlab does and why, not how or by whom it was
built, and nothing of one machine.

Every text file under ``src``, ``docs``, ``tests``, ``bench`` and ``scripts`` (and the README and
CONTRIBUTING.md) is
read line by line; a line fails when it holds

- a **machine path**: ``/work/...`` or ``/root/...``, or a checkout under ``/tmp``
  (``/tmp/NAME/src/``, ``.../tests/``, ``.../docs/``, ``.../bench/``, ``.../.venv/``);
- a **word of a team's process**: "engineer(s)", "the lead", helpers in the sense of people
  ("other helpers", "a helper session"), a ticket number ("issue 12", "issues 8 and 19"), a
  numbered stage of work ("stop 3"), or a source document by number ("seed 001": the methods
  have names, docs/sources.md).

"exec helper", "build helpers" and "the helper's result line" are the product's words and do
not match. Exceptions are exact: a file and the text its line holds, with the reason; an entry
that no longer matches anything is reported (a warning) so that it leaves the list.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED_DIRS = ("src", "docs", "tests", "bench", "scripts")
SCANNED_FILES = ("README.md", "CONTRIBUTING.md")
TEXT_SUFFIXES = {".py", ".md", ".c", ".h", ".R", ".toml", ".sh", ".txt", ".yml", ".yaml",
                 ".json", ".sql", ".html", ".j2", ".cfg", ".ini", ".in"}
THIS_FILE = "tests/test_repository_voice.py"

_WORD = r"(?<![\w-])"
RULES: dict[str, re.Pattern[str]] = {
    "a machine path": re.compile(r"(?<![\w.~$-])/(?:work|root)/"
                                 r"|/tmp/[\w.-]+/(?:src|tests|docs|bench|\.venv)/"),
    "a word of a team's process": re.compile(
        _WORD + r"(?:[Ee]ngineers?\b|[Tt]he lead\b"
        r"|(?:other|several|parallel|fellow) helpers\b"
        r"|helpers? (?:sessions?|briefs?|teams?)\b|CONTRIBUTING-helpers)"),
    "a ticket number": re.compile(_WORD + r"[Ii]ssues? #?\d+"),
    "a numbered stage of work": re.compile(
        _WORD + r"[Ss]top \d+\b(?!\s*(?:[mµu]?s|min|h|%|x|runs?|seconds?)\b)"),
    "a source document by number (name the method: docs/sources.md)":
        re.compile(_WORD + r"[Ss]eed[ -]00\d\b"),
}

#: (file, text its line holds) -> why the line stays.
ALLOWED: dict[tuple[str, str], str] = {
    ("tests/install/test_fresh_debian_subset.py", "PYTHONPATH=/root/fresh-check"):
        "the path inside the throw-away Debian chroot that scripts/fresh-debian-check.sh "
        "builds, which the test checks the script uses",
    ("scripts/fresh-debian-check.sh", "PYTHONPATH=/root/fresh-check"):
        "root's home inside the throw-away Debian chroot the script builds, not this machine's",
    ("scripts/fresh-debian-check.sh", "cd /root/benchlab &&"):
        "root's home inside the throw-away Debian chroot the script builds, not this machine's",
}

#: Files exempt until their owner rewrites them (none now: the CI feature's wording is done).
CI_FILES_PENDING: tuple[str, ...] = ()


def _text_files():
    paths = [ROOT / name for name in SCANNED_FILES if (ROOT / name).is_file()]
    for top in SCANNED_DIRS:
        paths += [p for p in sorted((ROOT / top).rglob("*"))
                  if p.is_file() and p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts]
    for path in paths:
        rel = path.relative_to(ROOT).as_posix()
        if rel != THIS_FILE:
            yield rel, path


def findings(rel: str, text: str) -> list[tuple[int, str, str]]:
    """(line number, what, line) for each line of ``text`` that breaks a rule, exceptions of
    :data:`ALLOWED` for file ``rel`` left out."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        for what, rule in RULES.items():
            if rule.search(line) and not any(f == rel and held in line for f, held in ALLOWED):
                out.append((number, what, line.strip()))
    return out


def test_no_machine_path_or_process_word_in_src_docs_and_tests():
    problems, pending_used, allowed_used = [], set(), set()
    for rel, path in _text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        allowed_used |= {key for key in ALLOWED if key[0] == rel and key[1] in text}
        found = findings(rel, text)
        if found and rel in CI_FILES_PENDING:
            pending_used.add(rel)
            continue
        problems += [f"{rel}:{n}: {what}: {line[:120]}" for n, what, line in found]
    for rel in sorted(set(CI_FILES_PENDING) - pending_used):
        warnings.warn(f"tests/test_repository_voice.py: {rel} is listed as pending but is "
                      f"clean now (or gone): remove it from CI_FILES_PENDING", stacklevel=1)
    for key in sorted(set(ALLOWED) - allowed_used):
        warnings.warn(f"tests/test_repository_voice.py: exception {key} matches nothing now: "
                      f"remove it", stacklevel=1)
    assert not problems, "\n".join(problems)


def test_no_file_is_named_after_a_ticket_or_a_document_number():
    """A module or test file says what it holds: ``test_issue15_run_checks.py`` tells a
    newcomer nothing. (The bench scripts of the OS-features report keep their published names.)"""
    named = re.compile(r"issue_?\d|seed_?00\d", re.I)
    bad = [rel for rel, _ in _text_files()
           if rel.startswith(("src/", "docs/", "tests/")) and named.search(Path(rel).name)]
    assert not bad, bad


def test_each_rule_catches_what_it_names_and_spares_the_product_words():
    """The rules on lines a repository could hold: each bad line is caught by its rule, and
    the product's own words ("exec helper", "build helpers", "stop the session", "seed 42",
    "/tmp/benchlab-reproduce-p<pid>", "~/.local") are not."""
    bad = {
        "cd /work/main": "a machine path",
        "stored in /root/.local/share/benchlab": "a machine path",
        "python /tmp/checkout/src/benchlab/x.py": "a machine path",
        "working conventions of the engineers who work in parallel": "a word of a team's process",
        "run by the lead on the quiet machine": "a word of a team's process",
        "several helpers edit different files": "a word of a team's process",
        "(issue 19 item 4: the fixed cost)": "a ticket number",
        "Start-up (issues 8 and 19)": "a ticket number",
        "the figures of stop 3": "a numbered stage of work",
        "seed 001's order book": "a source document by number (name the method: "
                                 "docs/sources.md)",
    }
    for line, what in bad.items():
        assert [w for _, w, _ in findings("x.md", line)] == [what], line
    good = ["the exec helper's result line", "build helpers (other modules are listed)",
            "Shared helpers are public names of their package", "stop the session",
            "--seed 42 fixes the order", "seed-19 session", "/tmp/benchlab-reproduce-p<pid>-*",
            "~/.local/share/benchlab/benchlab.db", "the JayBeams analysis", "a tissue 3",
            "$HOME/work/x", "sessions stop 2 s after"]
    for line in good:
        assert findings("x.md", line) == [], line


def test_an_allowed_line_is_allowed_in_its_file_only():
    line = 'assert "${FRESH_TEST_ARGS:+PYTHONPATH=/root/fresh-check}" in text'
    assert findings("tests/install/test_fresh_debian_subset.py", line) == []
    assert [w for _, w, _ in findings("tests/other.py", line)] == ["a machine path"]
