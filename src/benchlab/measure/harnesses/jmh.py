"""``--harness jmh``: a JMH benchmark jar writes its results as JSON to ``-rf json -rff FILE``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from benchlab.errors import UserError
from benchlab.measure.harnesses import Harness, Prepared, read_output, register
from benchlab.store.formats import jmh

#: A word of a shell line: quoted parts and unquoted characters up to a blank.
_WORD = re.compile(r"""(?:'[^']*'|"[^"]*"|[^\s'"])+""")
#: JMH's options that take a value (``java -jar benchmarks.jar -h``); the rest are flags.
_VALUED = frozenset({"-i", "-bs", "-r", "-wi", "-wbs", "-w", "-to", "-t", "-bm", "-si", "-gc",
                     "-foe", "-v", "-f", "-wf", "-o", "-rff", "-prof", "-tg", "-jvm", "-jvmArgs",
                     "-jvmArgsAppend", "-jvmArgsPrepend", "-tu", "-opi", "-rf", "-wm", "-e",
                     "-p", "-wmb"})
#: JMH's result file options, which this harness sets.
_RESULT_OPTION = re.compile(r"(^|\s)(-rff?)(?=\s|=|$)")


def _arguments_start(words: list[str]) -> int | None:
    """Index of the first argument of JMH's main (after ``org.openjdk.jmh.Main`` or the jar of
    ``-jar``), or None when the line runs JMH some other way (a build tool's task)."""
    if "org.openjdk.jmh.Main" in words:
        return words.index("org.openjdk.jmh.Main") + 1
    if "-jar" in words[:-1]:
        return words.index("-jar") + 2
    return None


class JmhHarness(Harness):
    """JMH: the command runs a benchmark jar (``java -jar target/benchmarks.jar ...``, or
    ``java -cp ... org.openjdk.jmh.Main ...``); ``-rf json -rff FILE`` is added at its end."""

    kind = "jmh"
    primary = jmh.PRIMARY
    #: An average-time (or sample, single-shot) suite gates on its mode's time per operation.
    defaults = jmh.MODES
    narrow_hint = ("run the jar itself (`java -jar benchmarks.jar ...`), not a Maven or "
                   "Gradle task, with no ; && | or redirection in the line")

    def prepare(self, command: str, workdir: Path) -> Prepared:
        """Append the JSON result options to the command."""
        found = _RESULT_OPTION.search(command)
        if found:
            raise UserError(f"--harness jmh sets -rf json -rff FILE itself, and the command "
                            f"already has {found.group(2)}: drop -rf and -rff from it (benchlab "
                            f"import FILE reads a result file JMH wrote on its own)")
        out = workdir / "jmh.json"
        return Prepared(command=f"{command} -rf json -rff {shlex.quote(str(out))}", output=out)

    def narrow(self, command: str, names: list[str]) -> str | None:
        """JMH's benchmark regexps (its positional arguments) replaced by one anchored
        alternation of the methods of ``names`` (``pkg.Class.method``; a name's ``/key=value``
        parameters and mode dropped, so a method's other parameter sets and modes may run too,
        never fewer). None when the line runs JMH otherwise than through its jar or main class,
        or holds shell syntax around it (``;``, ``&&``, ``|``, redirections)."""
        methods = sorted({name.split("/")[0] for name in names})
        words = list(_WORD.finditer(command))
        texts = [w.group() for w in words]
        if not methods or any(re.search(r"[;&|<>()`]", t) for t in texts if t[0] not in "'\""):
            return None
        start = _arguments_start(texts)
        if start is None:
            return None
        kept, at, i = [], 0, start
        while i < len(words):
            text = texts[i]
            if text.startswith("-"):
                i += 2 if text in _VALUED else 1
                continue
            kept.append(command[at:words[i].start()])  # a benchmark regexp: left out
            at = words[i].end()
            i += 1
        pattern = "^(" + "|".join(re.escape(m) for m in methods) + ")$"
        return f"{''.join(kept)}{command[at:].rstrip()} {shlex.quote(pattern)}"

    def parse(self, prepared: Prepared, stdout: str, source: str):
        """Read the JSON file the run wrote."""
        return read_output(self.kind, source, lambda: jmh.parse_jmh(prepared.output, name="jmh"),
                           expected=prepared.output,
                           missing="the command exited 0 but JMH wrote no result file: it did "
                                   "not run JMH's main (java -jar benchmarks.jar ...), or its "
                                   "regexps matched no benchmark")


register(JmhHarness())
