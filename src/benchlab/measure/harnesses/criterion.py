"""``--harness criterion``: ``cargo bench`` with criterion.rs writes its results under
``$CRITERION_HOME`` (default ``target/criterion``); each run gets a fresh one.

Narrowing (:meth:`CriterionHarness.narrow`) uses criterion's own filter: the one positional
argument after ``cargo bench``'s ``--``, a regular expression searched in each benchmark's id
(``group/function/value``, the ``full_id`` it reports). The filter given is anchored and
escaped, so it runs exactly the ids named; it replaces the command's own filter (a
``BENCHNAME`` before ``--`` or a filter after it, and ``--exact``), which the named ids, read
from a run under that filter, already matched: the narrowed runs stay within it.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from benchlab.measure.harnesses import Harness, Prepared, read_output, register
from benchlab.measure.harnesses.command_words import SimpleCommand, Word, edited, simple_commands
from benchlab.store.formats import criterion

#: cargo's options (before and after ``bench``) whose value is the next word.
_CARGO_VALUED = frozenset({
    "--message-format", "--color", "--config", "-Z", "-C", "-F", "--features", "-j", "--jobs",
    "--profile", "--target-dir", "--manifest-path", "--lockfile-path", "--exclude"})
#: cargo bench's options whose value is optional: the next word when it is not an option.
_CARGO_OPTIONAL = frozenset({"-p", "--package", "--bin", "--example", "--test", "--bench",
                             "--target"})
#: criterion's options (0.5's command line) whose value is the next word.
_CRITERION_VALUED = frozenset({
    "-c", "--color", "--colour", "-s", "--save-baseline", "-b", "--baseline",
    "--baseline-lenient", "--format", "--profile-time", "--load-baseline", "--sample-size",
    "--warm-up-time", "--measurement-time", "--nresamples", "--noise-threshold",
    "--confidence-level", "--significance-level", "--plotting-backend", "--output-format"})
#: What the Rust regex crate reads as syntax outside a class: escaped in a filter (every
#: version of the crate accepts these escapes; newer ones accept more).
_REGEX_SYNTAX = frozenset("\\.+*?()|[]{}^$")


def id_filter(names: list[str]) -> str:
    """A criterion filter that matches exactly the ids ``names``: ``^(a|b)$``, escaped."""
    escaped = ("".join("\\" + c if c in _REGEX_SYNTAX else c for c in name)
               for name in sorted(set(names)))
    return "^(" + "|".join(escaped) + ")$"


def _takes_value(word: str, valued: frozenset[str], optional: frozenset[str],
                 following: str | None) -> bool:
    """Whether option ``word`` takes the next word (``following``) as its value."""
    if "=" in word:
        return False
    if not word.startswith("--"):  # a cluster of short options: -nv, -ns NAME, -j4
        shorts = [f"-{c}" for c in word[1:]]
        valued_at = next((i for i, s in enumerate(shorts) if s in valued | optional), None)
        if valued_at is None or valued_at < len(shorts) - 1:
            return False
        word = shorts[-1]
    if word in valued:
        return True
    return word in optional and following is not None and not following.startswith("-")


def _positionals(args: list[Word], valued: frozenset[str],
                 optional: frozenset[str] = frozenset()) -> list[Word]:
    """The words of ``args`` that are neither options nor their values."""
    found, skip = [], False
    for i, w in enumerate(args):
        if skip:
            skip = False
        elif w.text.startswith("-") and w.text != "-":
            following = args[i + 1].text if i + 1 < len(args) else None
            skip = _takes_value(w.text, valued, optional, following)
        else:
            found.append(w)
    return found


def _cargo_bench(command: SimpleCommand) -> int | None:
    """The index in ``command.args`` of ``bench`` when the command is ``cargo bench``
    (after ``env``, ``nice`` or a path: any word named cargo), else None."""
    args = command.args
    at = next((i for i, w in enumerate(args) if Path(w.text).name == "cargo"), None)
    if at is None:
        return None
    i = at + 1
    while i < len(args) and args[i].text.startswith(("-", "+")):
        i += 2 if _takes_value(args[i].text, _CARGO_VALUED, frozenset(), None) else 1
    return i if i < len(args) and args[i].text == "bench" else None


def narrowed_command(command: str, names: list[str]) -> str | None:
    """``command`` (a shell line running ``cargo bench``) made to run only the criterion
    benchmarks ``names`` (their ids); None when it runs no ``cargo bench`` or cannot be read."""
    try:
        commands = simple_commands(command)
    except ValueError:
        return None
    found = next(((c, b) for c in commands if (b := _cargo_bench(c)) is not None), None)
    if found is None or not names:
        return None
    cargo, bench = found
    rest = cargo.args[bench + 1:]
    split = next((i for i, w in enumerate(rest) if w.text == "--"), len(rest))
    dropped = [*_positionals(rest[:split], _CARGO_VALUED, _CARGO_OPTIONAL),
               *_positionals(rest[split + 1:], _CRITERION_VALUED),
               *(w for w in rest[split + 1:] if w.text == "--exact")]
    edits = [(w.start, w.end, "") for w in dropped]
    pattern = shlex.quote(id_filter(names))
    if split < len(rest):
        edits.append((rest[split].end, rest[split].end, f" {pattern}"))
    else:
        edits.append((cargo.end, cargo.end, f" -- {pattern}"))
    return edited(command, edits)


class CriterionHarness(Harness):
    """criterion.rs: the command is ``cargo bench ...``; ``CRITERION_HOME`` points at this
    run's own directory, so one run's results never mix with an earlier run's."""

    kind = "criterion"
    primary = criterion.PRIMARY
    narrow_hint = "write the command as `cargo bench ...`, not a script that runs it"

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """The command as given, with ``CRITERION_HOME`` set to a directory of this run."""
        out = workdir / "criterion"
        return Prepared(command=command, env={"CRITERION_HOME": str(out)}, output=out)

    def narrow(self, command: str, names: list[str]) -> str | None:
        """criterion's filter ``'^(a|b)$'`` of the ids ``names`` after ``cargo bench``'s
        ``--`` (added when missing), in place of the command's own filter: exactly those
        run, in every bench target (a libtest target reads it as a substring: none of its
        own benchmarks match). None when the command runs no ``cargo bench``."""
        return narrowed_command(command, names)

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the ``new/`` results criterion wrote."""
        return read_output(self.kind, source,
                           lambda: criterion.parse_criterion(prepared.output, name="criterion"))


register(CriterionHarness())
