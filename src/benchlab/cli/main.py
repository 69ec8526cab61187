"""The ``benchlab`` command: a lazy Click group; each command lives in its own module.

Start-up time is part of the interface (``--version`` and ``--help`` in 0.15 s), so this
module imports nothing heavy at module level, not even Click:

- ``COMMANDS`` is a static table: command name -> (module under ``benchlab.cli``, one-line help).
  ``--help`` prints it without importing a single command module; a command's module (and the
  numpy/store/measure layers behind it) is imported only when that command is invoked.
  ``tests/test_startup.py`` checks the table against every command's real help.
- ``benchlab --version`` alone is answered before Click is imported.
- Ctrl-C at any point after the interpreter starts exits 130 with one line, no traceback.

Every module named in the table exposes ``commands``, a list of Click commands or groups.
"""

from __future__ import annotations

import sys

from benchlab import __version__, python_interrupts

# name -> (module in benchlab.cli, one-line help). Keep in step with the commands' docstrings.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "Measure COMMANDS, each run stored as soon as it ends."),
    "demo": ("demo", "Build bundled C sorts and compare them, measured and stored, in well under "
                     "a minute."),
    "compare": ("compare", "Compare A against baseline B: is A faster, slower, equivalent, or "
                           "undecided?"),
    "analyze": ("analyze", "Analyse each SERIES ([SESSION:]BENCHMARK[/METRIC], or a session with "
                           "one benchmark)."),
    "list": ("listing", "List the sessions in the database, newest first, with their commands."),
    "show": ("show", "Show a session (default: the newest): timings of each benchmark, the "
                     "verdict between them, failed runs with their stderr, environment, protocol "
                     "and metrics."),
    "import": ("import_export", "Import results of another tool (or raw program outputs) "
                                "as a new session."),
    "export": ("import_export", "Export sessions (uid, id or name; default: the newest "
                                "session)."),
    "study": ("study", "Run a stability study (a matrix of workloads x isolation x workers x "
                       "affinity x load)."),
    "env": ("env", "Show the machine, kernel settings and software a benchmark would be measured "
                   "in."),
    "system": ("system", "Check this machine for benchmarking: governor, boost, SMT, ASLR, swap, "
                         "THP, load, isolated CPUs, perf_event_paranoid, VM/container, "
                         "clocksource and real CPU contention."),
    "profile": ("profile", "Profile this machine: stress-ng bogo-ops/s per method, repeated and "
                           "interleaved."),
    "variability": ("variability", "Speedup of TARGET over BASE per method (each a profile JSON "
                                   "file or a profile in the store)."),
    "calibrate": ("calibrate", "Search the cgroup CPU quota so the chosen microbenchmarks run as "
                               "fast as on BASE."),
    "report": ("report", "Write a report of SELECTORS: sessions, or series as "
                         "[SESSION:]NAME[/METRIC]."),
    "history": ("history", "Every session of benchmark NAME in time order: median, interval, "
                          "steps, environment."),
    "cluster": ("cluster_certs", "Set up a team's Dask cluster: TLS certificates "
                                 "(docs/cluster.md)."),
    "delete": ("tidy", "Delete SESSIONs (uid, id or name) with their runs and samples, in one "
                       "transaction."),
    "rename": ("tidy", "Give SESSION (uid, id or name) the name NAME."),
    "store": ("store", "Work on whole stores: copy sessions between SQLite files and PostgreSQL "
                       "databases."),
    "predict": ("predict", "Bounds of an application's result on TARGET from its result on BASE; "
                           "flags results outside."),
    "bundle": ("bundle", "Bundle sessions (data, protocols, sources, digests, profile, report) "
                         "into one file."),
    "ab": ("ab", "Measure COMMANDS on two revisions side by side and gate: did head get "
                 "slower?"),
    "gate": ("gate", "Gate a fresh run of COMMANDS (or --candidate SESSION) against --baseline."),
    "bisect": ("bisect", "Find the first commit between --good and --bad whose COMMAND got "
                         "slower."),
    "reproduce": ("bundle", "Reproduce a bundle: its analysis byte for byte, or its measurement "
                            "here, judged."),
}

_INTERRUPTED = 130


def _error_line(text: str) -> None:
    sys.stderr.write(f"benchlab: error: {' '.join(str(text).split())}\n")


def _build_group():
    """The Click group (imported here, not at module level, so ``--version`` never loads Click)."""
    import click

    class LazyGroup(click.Group):
        """Imports a command's module only when the command is invoked; one-line errors, exit 2."""

        def list_commands(self, ctx):
            return sorted(set(COMMANDS) | set(self.commands))

        def get_command(self, ctx, name):
            if name in self.commands:
                return self.commands[name]
            if name not in COMMANDS:
                return None
            import importlib

            module = importlib.import_module(f"benchlab.cli.{COMMANDS[name][0]}")
            for command in module.commands:
                self.commands.setdefault(command.name, command)
            if name not in COLLECTION_HELD_UNTIL_STARTED:
                collect_again()
            return self.commands.get(name)

        def resolve_command(self, ctx, args):
            # Click's own message names the typo but not the fix; list the real commands.
            if args and args[0] not in COMMANDS and args[0] not in self.commands \
                    and not args[0].startswith("-"):
                raise click.UsageError(
                    f"no command {args[0]!r}; the commands are: {', '.join(self.list_commands(ctx))}",
                    ctx)
            return super().resolve_command(ctx, args)

        def format_commands(self, ctx, formatter):
            # The static table, so --help imports no command module (and none of numpy/scipy).
            rows = [(name, self.commands[name].get_short_help_str(1000)
                     if name in self.commands else COMMANDS[name][1])
                    for name in self.list_commands(ctx)]
            if not rows:
                return
            width = formatter.width - 6 - max(len(name) for name, _ in rows)
            from click.utils import make_default_short_help

            with formatter.section("Commands"):
                formatter.write_dl([(n, make_default_short_help(h, width)) for n, h in rows])

        def main(self, *args, **kwargs):  # noqa: D401 - Click hook
            kwargs.setdefault("standalone_mode", False)
            return _run_reporting(super().main, *args, **kwargs)

    @click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, prog_name="benchlab")
    def cli() -> None:
        """benchlab: rigorous, reproducible performance measurement."""

    return cli


def _run_reporting(main, *args, **kwargs):
    """Run Click's ``main``; every error ends as one line and its exit status (usage errors
    and UserError 2, or the error's own; Ctrl-C 130), a closed pipe as success."""
    import click

    from benchlab.errors import UserError

    try:
        return _discarding_unused_stores(main, *args, **kwargs)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _exit_interrupted()
    except click.UsageError as exc:
        hint = f" (see: {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        _error_line(exc.format_message() + hint)
        sys.exit(2)
    except click.ClickException as exc:
        _error_line(exc.format_message())
        sys.exit(2)
    except UserError as exc:
        _error_line(str(exc))
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # The reader went away (``benchlab list | head``): not an error of ours.
        sys.exit(0)


def _discarding_unused_new_stores_cleanup() -> None:
    common = sys.modules.get("benchlab.cli.common")  # loaded only if a command opened a store
    if common is not None:
        common.discard_unused_new_stores()


def _discarding_unused_stores(main, *args, **kwargs):
    """Run the command; when it fails or is interrupted, remove any store it created and left
    empty (bad input leaves nothing behind, even a store opened before the input was checked)."""
    try:
        return main(*args, **kwargs)
    except BaseException as exc:
        if not (isinstance(exc, SystemExit) and exc.code in (0, None)):
            _discarding_unused_new_stores_cleanup()
        raise


_group = None


def __getattr__(name: str):
    # ``from benchlab.cli.main import cli`` (tests, CliRunner) still works, built on first use.
    global _group
    if name == "cli":
        if _group is None:
            _group = _build_group()
        return _group
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _exit_interrupted() -> None:
    """One line and exit 130 for Ctrl-C, or 128 + N for a signal N the core turned into one.

    The core (``benchlab.core.session.interruptible``) makes SIGTERM act as Ctrl-C; when it
    arrives before any session exists to report it, the signal is still known there.
    """
    session_mod = sys.modules.get("benchlab.core.session")
    signum = getattr(getattr(session_mod, "_Received", None), "signum", None)
    try:
        sys.stderr.write("benchlab: interrupted\n")
    finally:
        sys.exit(128 + signum if signum else _INTERRUPTED)


#: Commands that leave nothing behind when they return: every file they write is closed; their
#: stores, helper processes and cgroups go with the atexit handlers. A successful one ends with
#: ``os._exit`` instead of the interpreter's teardown (~12 ms of CPU: freeing every module and
#: object one by one).
FAST_EXIT_COMMANDS = frozenset({"run", "show", "compare", "list"})


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run ``benchlab`` with ``argv`` (default ``sys.argv[1:]``).

    Exits 0 on success, 2 on bad input (one ``benchlab: error:`` line), 130 on Ctrl-C. Called
    as the console script (``argv`` None), a successful command of :data:`FAST_EXIT_COMMANDS`
    ends the process at once (:func:`_exit_now`); called with ``argv`` it returns, as a library
    function must.
    """
    if argv is not None:
        _main(list(argv))
        return
    _hold_collection()
    args = sys.argv[1:]
    _main(args)
    if args and args[0] in FAST_EXIT_COMMANDS:
        _exit_now()


def _hold_collection() -> None:
    """No cyclic garbage collection while the command line starts: importing Click and a
    command's modules allocates objects by the hundred thousand, which triggered ~35 collections
    (~4 ms of CPU) that found nothing to free. :func:`collect_again` ends the pause."""
    import gc

    global _collection_held
    gc.disable()
    _collection_held = True


_collection_held = False

#: Commands that end the start-up's pause themselves (:func:`collect_again`) once their session
#: has started: its set-up imports ~30 more modules (cgroups, probes, the verdict), which
#: triggered ~7 collections that found nothing to free.
COLLECTION_HELD_UNTIL_STARTED = frozenset({"run"})


def collect_again() -> None:
    """Once the command's module is imported (or, for :data:`COLLECTION_HELD_UNTIL_STARTED`,
    its session started): what start-up made is moved out of the
    collector's sight (``gc.freeze``: it lives until exit anyway) and collection resumes, so a
    long session's garbage is still collected."""
    global _collection_held
    if _collection_held:
        import atexit
        import gc

        gc.freeze()
        atexit.register(gc.unfreeze)  # the interpreter's own exit then collects them as before
        gc.enable()
        _collection_held = False


def _exit_now() -> None:
    """End the process with status 0 without the interpreter's teardown, once everything a
    command left open is flushed, closed and cleaned up; returns (to the normal exit) when
    another thread still runs or the output cannot be flushed.

    In order: stdout and stderr flushed; the atexit handlers run (every store still open is
    closed, so SQLite checkpoints and removes its WAL; the exec helpers are closed and reaped;
    cgroups, containers and temporary directories are removed); the streams flushed again;
    ``os._exit(0)``.
    """
    import threading

    if threading.active_count() > 1:
        return  # a thread the teardown would join (a cluster client's, say): exit normally
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed pipe or stream: the normal exit reports it as Python does
    import atexit
    import os

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(0)


def _main(args: list[str]) -> None:
    """:func:`main`'s work: parse ``args``, run the command, turn Ctrl-C into exit 130."""
    try:
        python_interrupts()  # from here on Ctrl-C is KeyboardInterrupt, handled below
        if args == ["--version"]:
            # Same text as click.version_option, without importing Click (~35 ms).
            sys.stdout.write(f"benchlab, version {__version__}\n")
            sys.stdout.flush()
            return
        __getattr__("cli")(args=args, prog_name="benchlab")
    except KeyboardInterrupt:
        # Ctrl-C while modules are still importing, before Click's own handler is running.
        _exit_interrupted()
    except RuntimeError as exc:
        # Ctrl-C during an import, inside a class's __set_name__ (platform's cached_property),
        # reaches us wrapped: "Error calling __set_name__ ..." caused by the KeyboardInterrupt.
        if isinstance(exc.__cause__, KeyboardInterrupt):
            _exit_interrupted()
        raise


if __name__ == "__main__":
    main()
