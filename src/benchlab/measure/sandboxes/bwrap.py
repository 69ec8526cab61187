"""bubblewrap as a sandbox (``--isolation bwrap``).

The whole host read-only, fresh /dev and /proc, and a private, empty, writable /tmp, /var/tmp
and /dev/shm (tmpfs, sticky like the host's) that vanish with the run: a program cannot write a
file of the host's (a stranger's bundle overwrote one in /tmp). New PID, IPC, UTS and network
namespaces; the sandbox dies with its parent.
"""

from __future__ import annotations

from benchlab.measure.sandboxes import PRIVATE_DIRS, Sandbox, kept_dirs

#: ``--as-pid-1``: the program is its PID namespace's init, waited for by bwrap itself, so its
#: CPU time reaches the harness's rusage (with bwrap's own init in between it does not: 0 s of
#: user time).
BWRAP_ARGS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
              "--perms", "01777", "--tmpfs", "/tmp", "--perms", "01777", "--tmpfs", "/var/tmp",
              "--perms", "01777", "--tmpfs", "/dev/shm",
              "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts", "--unshare-net",
              "--die-with-parent")


class Bubblewrap(Sandbox):
    """bwrap: read-only host, private temporary directories, new namespaces."""

    name = "bwrap"
    missing = ("bwrap (bubblewrap) is not installed here; apt-get install bubblewrap, or "
               "choose another --isolation")

    def argv(self, argv: list[str], *, worker: int, meta_path: str | None,
             keep: tuple[str, ...]) -> list[str]:
        """``bwrap`` with :data:`BWRAP_ARGS`, each kept directory bound writable at its path."""
        binds = [a for d in kept_dirs(keep, PRIVATE_DIRS) for a in ("--bind", d, d)]
        return ["bwrap", *BWRAP_ARGS, *binds, "--", *argv]


SANDBOX = Bubblewrap()
