"""hyperfine's command line for ``benchlab run``: the options, their values, and what they mean
for the run plan.

hyperfine 1.18's options that benchlab's own did not already cover are declared here
(:func:`hyperfine_options`), parsed into one :class:`HyperfineOptions`, and translated into the
core's run-plan fields by :meth:`HyperfineOptions.apply`, so ``cli/run.py`` stays a thin caller.
Meanings follow hyperfine:

* commands run through a shell by default (``sh``; ``-S/--shell SHELL`` picks another, a full
  command line such as ``"bash --norc"`` allowed), whose start-up cost is measured and
  subtracted; ``-N`` or ``--shell none`` runs without one, and then a command containing shell
  syntax is refused (:mod:`benchlab.measure.shell_syntax`) instead of silently measuring
  something else;
* ``--input null|FILE`` feeds stdin; ``--output null|pipe|inherit|FILE`` takes stdout (stderr is
  kept by benchlab for failed runs' messages except with ``inherit``); ``--show-output`` is
  ``--output inherit``;
* ``-C/--conclude CMD`` runs after every timing run (once for all commands, or once per
  command), like ``-p/--prepare`` before it;
* ``--reference CMD`` is benchmarked first and is the baseline of the verdict and of the tables'
  Relative column; ``--sort``, ``-u/--time-unit`` and ``--style`` shape the output;
* ``--export-json/-csv/-markdown/-asciidoc/-orgmode FILE`` are written when the run ends, in
  hyperfine's formats (:mod:`benchlab.store.formats`).
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import field
from typing import Any, Callable

import click

from benchlab.cli.output_path import OUTPUT_FILE, OutputPath
from benchlab.errors import UserError
from benchlab.records import record

#: hyperfine export option -> benchlab export format
EXPORTS = {"json": "hyperfine", "csv": "hyperfine-csv", "markdown": "markdown",
           "asciidoc": "asciidoc", "orgmode": "orgmode"}
STYLES = ("auto", "basic", "full", "nocolor", "color", "none")
SORTS = ("auto", "command", "mean-time")
TIME_UNITS = ("microsecond", "millisecond", "second")
COUNTS = ("instructions",)
DEFAULT_SHELL = "sh"


def hyperfine_options(f: Callable) -> Callable:
    """Add hyperfine's options (those ``run`` lacks) to a Click command; the command receives
    them as keyword arguments and builds :class:`HyperfineOptions` with :meth:`~HyperfineOptions.from_kwargs`."""
    options = [
        click.option("-n", "--name", "--command-name", "names", multiple=True,
                     help="Name of a command (once per command; hyperfine's --command-name)."),
        click.option("-S", "--shell", "shell", default=None, metavar="SHELL",
                     help="Shell that runs the commands (default sh; 'bash --norc' allowed; "
                          "'none': no shell). Its start-up cost is measured and subtracted."),
        click.option("-N", "no_shell", is_flag=True,
                     help="No shell (--shell none): a command with shell syntax is an error."),
        click.option("--shell-path", "shell_path", default=None, hidden=True,
                     help="Replaced by -S/--shell SHELL (an error naming it)."),
        click.option("-C", "--conclude", "conclude", multiple=True, metavar="CMD",
                     help="Shell command after every timing run (one for all, or one per command)."),
        click.option("--reference", default=None, metavar="CMD",
                     help="Benchmark CMD first and compare the others against it."),
        click.option("--reference-name", "reference_name", default=None, metavar="NAME",
                     help="Name of the --reference command."),
        click.option("--debug-mode", "debug_mode", is_flag=True, hidden=True,
                     help="hyperfine's fake timings: refused in one line."),
        click.option("--input", "input_", default="null", metavar="null|FILE",
                     help="What the commands read on stdin."),
        click.option("--output", type=OutputPath(keywords=("null", "pipe", "inherit")),
                     default="null", metavar="null|pipe|inherit|FILE",
                     help="Where the commands' stdout goes (FILE: rewritten by every run)."),
        click.option("--show-output", is_flag=True, help="Same as --output inherit."),
        click.option("--sort", type=click.Choice(SORTS), default="auto",
                     help="auto: verdict by speed, tables by command; command; mean-time."),
        click.option("-u", "--time-unit", type=click.Choice(TIME_UNITS), default=None,
                     help="Time unit of the exported tables (default: from the first mean)."),
        click.option("--style", type=click.Choice(STYLES), default="auto",
                     help="basic: no colour, no progress bar; nocolor; color; full; none: silent."),
        *[click.option(f"--export-{kind}", f"export_{kind}", type=OUTPUT_FILE, default=None,
                       metavar="FILE",
                       help=f"Write hyperfine's {kind} export to FILE when the run ends.")
          for kind in EXPORTS],
        click.option("--count", "count", type=click.Choice(COUNTS), default=None,
                     help="Also count each command's instructions under valgrind cachegrind, in "
                          "runs separate from the timed ones (metric 'instructions')."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


class HyperfineCommand(click.Command):
    """A Click command that also takes hyperfine's optional value of ``-i``.

    hyperfine's ``-i``/``--ignore-failure`` is a flag that may carry a value after ``=``:
    ``-i=1,2`` ignores only those exit codes, ``-i=all-non-zero`` all of them. A Click option
    with an optional value would swallow the next argument (``-i 'sleep 1'``), so the ``=`` form
    is rewritten to the hidden ``--ignore-failure-codes VALUE`` before parsing; the bare flag
    stays a flag. Arguments after ``--`` are left alone.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        for pos, arg in enumerate(args):
            if arg == "--":
                out.extend(args[pos:])
                break
            for prefix in ("-i=", "--ignore-failure="):
                if arg.startswith(prefix):
                    out += ["--ignore-failure-codes", arg[len(prefix):]]
                    break
            else:
                out.append(arg)
        return super().parse_args(ctx, out)

    def make_parser(self, ctx: click.Context):
        """Click's parser, minus the "did you mean" search for every short option.

        Click matches ``-q`` as a long option first and, when that fails, builds a NoSuchOption
        whose suggestions come from difflib (imported for it, ~2 ms, then ~0.2 ms per option
        over this command's ~90 names) before it throws it away and matches ``-q`` as a short
        option. A single-dash token's failed long match is answered without suggestions here:
        the same parse, the same errors (a mistyped ``--option`` still gets its suggestion).
        """
        parser = super().make_parser(ctx)
        match_long = getattr(parser, "_match_long_opt", None)
        long_opts = getattr(parser, "_long_opt", None)
        prefixes = getattr(parser, "_opt_prefixes", None)
        if match_long is None or long_opts is None or prefixes is None:
            return parser  # another Click: its own parser as it is

        def match_long_or_short(opt: str, explicit_value, state) -> None:
            if opt not in long_opts and opt[:2] not in prefixes:
                raise click.NoSuchOption(opt, ctx=ctx)  # caught by Click: a short option next
            match_long(opt, explicit_value, state)

        parser._match_long_opt = match_long_or_short
        return parser


def ignore_failure_policy(flag: bool, codes: str | None) -> bool | list[int]:
    """The run plan's ``ignore_failure`` from ``-i`` (``flag``) and ``-i=CODES`` (``codes``):
    True for every non-zero exit (``-i``, ``-i=all-non-zero``), a sorted list of exit codes
    for ``-i=1,2``, False without ``-i``. Raises UserError for anything else."""
    if codes is None:
        return bool(flag)
    text = codes.strip()
    if text == "all-non-zero":
        return True
    try:
        values = sorted({int(part) for part in text.split(",")})
    except ValueError:
        values = []
    if not values or not all(1 <= v <= 255 for v in values):
        raise UserError(f"--ignore-failure={codes!r} is not a list of exit codes; write "
                        f"-i=1,2 (codes 1..255), -i=all-non-zero, or -i alone")
    return values


@record
class HyperfineOptions:
    """The values of hyperfine's options, checked, in the form the run needs.

    ``shell`` is the shell's argv prefix (``["sh"]``, ``["bash", "--norc"]``) or None for no
    shell; ``input_path`` is an absolute path or None (/dev/null); ``output`` is ``null``,
    ``pipe``, ``inherit`` or an absolute file path; ``exports`` maps benchlab export formats to
    absolute paths.
    """

    names: list[str] = field(default_factory=list)
    shell: list[str] | None = field(default_factory=lambda: [DEFAULT_SHELL])
    conclude: list[str] = field(default_factory=list)
    reference: str | None = None
    reference_name: str | None = None
    input_path: str | None = None
    output: str = "null"
    sort: str = "auto"
    time_unit: str | None = None
    style: str = "auto"
    exports: dict[str, str] = field(default_factory=dict)
    count: str | None = None

    _KEYS = ("names", "shell", "no_shell", "shell_path", "conclude", "reference",
             "reference_name", "debug_mode", "input_",
             "output", "show_output", "sort", "time_unit", "style", "count",
             *[f"export_{k}" for k in EXPORTS])

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> "HyperfineOptions":
        """Pop this module's options out of a Click command's ``kwargs`` and check them."""
        v = {k: kwargs.pop(k) for k in cls._KEYS}
        if v["debug_mode"]:
            raise UserError("--debug-mode is hyperfine's test mode, which invents timings; "
                            "benchlab always measures, so drop --debug-mode")
        if v["reference_name"] is not None and v["reference"] is None:
            raise UserError("--reference-name names the --reference command; add "
                            "--reference CMD or drop --reference-name")
        return cls(
            names=list(v["names"]), shell=resolve_shell(v["shell"], v["no_shell"], v["shell_path"]),
            conclude=list(v["conclude"]), reference=v["reference"],
            reference_name=v["reference_name"],
            input_path=_input_path(v["input_"]),
            output=_output(v["output"], v["show_output"]), sort=v["sort"],
            time_unit=v["time_unit"], style=v["style"], count=v["count"],
            exports={EXPORTS[k]: _export_path(k, v[f"export_{k}"]) for k in EXPORTS
                     if v[f"export_{k}"] is not None})

    # -- output style ---------------------------------------------------------------------
    @property
    def quiet(self) -> bool:
        """``--style none``: hyperfine prints nothing at all."""
        return self.style == "none"

    def progress(self, is_tty: bool) -> bool:
        """Whether to draw the progress bar (hyperfine's interactive elements)."""
        return {"auto": is_tty, "full": True, "nocolor": True}.get(self.style, False)

    def plain_tables(self, is_tty: bool) -> bool:
        """Whether the summary is plain aligned text, as wide as its widest cell (a pipe, a CI
        log, ``--style basic``), rather than boxed tables sized to a terminal (``full`` forces
        them, as hyperfine's full style forces its effects)."""
        if self.style == "full":
            return False
        return self.style == "basic" or not is_tty

    @property
    def color(self) -> bool | None:
        """False: no colour; True: force colour; None: decide from the terminal."""
        return {"basic": False, "nocolor": False, "full": True, "color": True}.get(self.style)

    # -- the run plan ---------------------------------------------------------------------
    def commands_with_reference(self, commands: list[str]) -> tuple[list[str], list[str]]:
        """Commands and names with ``--reference`` placed first (as hyperfine benchmarks it).

        A reference equal to one of the commands is not timed twice. Names: one per command,
        or one more for the reference (then the first names the reference); ``--reference-name``
        names the reference (the commands keep theirs, or their command lines).
        """
        names = list(self.names)
        if self.reference is None:
            return list(commands), names
        if self.reference in commands:
            if self.reference_name is None:
                return list(commands), names
            at = commands.index(self.reference)
            if names and len(names) == len(commands) and names[at] != self.reference_name:
                raise UserError(f"the reference is also command {at + 1}, named {names[at]!r} "
                                f"by -n and {self.reference_name!r} by --reference-name; "
                                f"give it one name")
            names = names or list(commands)  # a wrong count is refused with the commands'
            if at < len(names):
                names[at] = self.reference_name
            return list(commands), names
        if self.reference_name is not None:
            if names and len(names) != len(commands):
                raise UserError(f"{len(names)} names (-n) for {len(commands)} commands besides "
                                f"the named --reference; give one -n per command")
            return [self.reference, *commands], [self.reference_name, *(names or commands)]
        if names and len(names) == len(commands):
            names = [self.reference, *names]
        return [self.reference, *commands], names

    def reference_index(self, commands: list[str]) -> int | None:
        """Index of the reference among the commands as planned (None: hyperfine's default)."""
        if self.reference is None:
            return None
        all_commands, _ = self.commands_with_reference(commands)
        return all_commands.index(self.reference)

    def check_commands(self, commands: list[str]) -> None:
        """Refuse shell syntax in commands (after ``{PARAM}`` substitution) run without a shell."""
        if self.shell is None:
            from benchlab.measure.shell_syntax import require_no_shell_syntax

            for command in commands:
                require_no_shell_syntax(command)

    def per_command(self, hooks: list[str], n_commands: int, option: str) -> list[str | None]:
        """One hook per command from hyperfine's 'once for all, or once per command' rule."""
        if not hooks:
            return [None] * n_commands
        if len(hooks) == 1:
            return [hooks[0]] * n_commands
        if len(hooks) != n_commands:
            raise UserError(f"{len(hooks)} {option} commands for {n_commands} commands; give one "
                            f"for all or one per command")
        return list(hooks)

    # -- exports --------------------------------------------------------------------------
    def write_exports(self, store: Any, session_uid: str, reference_name: str | None) -> list[str]:
        """Write every ``--export-*`` file for the finished session; returns the paths (each
        written whole to a temporary file, then renamed, so no half file is left behind)."""
        from benchlab.store.formats import export_sessions

        written = []
        for fmt, path in self.exports.items():
            text = export_sessions(store, [session_uid], fmt, time_unit=self.time_unit,
                                   sort=self.sort, reference=reference_name)
            tmp = f"{path}.benchlab-tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
            written.append(path)
        return written


def resolve_shell(shell: str | None, no_shell: bool, shell_path: str | None) -> list[str] | None:
    """The shell's argv prefix for ``-S/--shell``, ``-N`` and the older ``--shell-path``.

    Checks that the shell exists and behaves like a shell (``SHELL -c 'exit 3'`` exits 3), so a
    command given where the shell belongs (``--shell true``, the old flag's spelling) is an error
    rather than a benchmark of ``true -c COMMAND``.
    """
    if no_shell:
        if shell not in (None, "none"):
            raise UserError(f"-N runs without a shell but --shell {shell} asks for one; "
                            f"drop one of them")
        return None
    if shell_path is not None:
        raise UserError("--shell-path is now -S/--shell SHELL (hyperfine's option); commands run "
                        "through sh by default, so drop --shell-path or write --shell SHELL")
    given = shell
    if given == "none":
        return None
    if given in (None, "default"):
        given = DEFAULT_SHELL
    try:
        argv = shlex.split(given)
    except ValueError as exc:
        raise UserError(f"cannot parse --shell {given!r} ({exc}); fix the quoting") from None
    if not argv or shutil.which(argv[0]) is None:
        raise UserError(f"shell {given!r} not found; give an installed shell to -S/--shell "
                        f"(e.g. sh, bash), or -N for none")
    import subprocess  # only for -S SHELL (~2 ms of start-up otherwise)

    try:
        probe = subprocess.run([*argv, "-c", "exit 3"], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=10)
        behaves = probe.returncode == 3
    except (OSError, subprocess.TimeoutExpired):
        behaves = False
    if not behaves:
        raise UserError(f"{given!r} does not behave like a shell ('{given} -c \"exit 3\"' did not "
                        f"exit 3); -S/--shell takes the shell (as in hyperfine), commands run "
                        f"through sh by default")
    return argv


def _input_path(where: str) -> str | None:
    if where == "null":
        return None
    path = os.path.abspath(where)
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise UserError(f"--input {where}: no readable file there; give null or an existing file")
    return path


def _output(where: str, show_output: bool) -> str:
    if show_output:
        if where not in ("null", "inherit"):
            raise UserError(f"--show-output is --output inherit, but --output {where} was given; "
                            f"drop one of them")
        return "inherit"
    if where in ("null", "pipe", "inherit"):
        return where
    path = os.path.abspath(where)
    _check_writable(path, "--output")
    return path


def _export_path(kind: str, path: str) -> str:
    full = os.path.abspath(path)
    _check_writable(full, f"--export-{kind}")
    return full


def _check_writable(path: str, option: str) -> None:
    parent = os.path.dirname(path)
    if os.path.isdir(path):
        raise UserError(f"{option} {path}: is a directory; give a file path")
    if not os.path.isdir(parent):
        raise UserError(f"{option} {path}: directory {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UserError(f"{option} {path}: not writable; choose another path")


__all__ = ["hyperfine_options", "HyperfineOptions", "resolve_shell", "EXPORTS"]
