"""What ties the scheduler and workers benchlab starts over SSH (``--cluster ssh:``) to their
client: a Dask preload module, loaded into the remote scheduler (``preload``) and into each
remote nanny (``preload_nanny``) on the hosts.

Dask's ``SSHCluster`` starts them with ``asyncssh`` without a terminal, so sshd sends them no
SIGHUP when the client goes: a client killed with SIGKILL left them running on the hosts for
ever. Their standard input is the SSH channel, which the client never writes to. When the
client ends in any way (it closes the cluster, or its kernel closes the TCP connection of a
client killed with SIGKILL), sshd ends the session and that input reaches end of file. A thread
waits for it, then closes the process's Dask server as SIGTERM does (a nanny's worker goes
with it; a scheduler's workers lose their scheduler and close); the process then exits, and
removes the host's directory of the cluster's certificates on its way out. One that has not
exited :data:`GRACE_S` after the end of file exits at once.

This runs on the hosts: it imports nothing heavy, and nothing of the client's.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import threading
import time
from typing import Any

from benchlab.core.cluster.ssh import REMOTE_NAME

#: After the SSH channel closed: how long a remote process may take to close (s).
GRACE_S = 15.0


def dask_setup(server: Any) -> None:
    """Dask's preload hook (called as ``server`` starts, on its event loop): watch standard
    input, when it is the SSH channel (a pipe or socket), and close ``server`` at its end."""
    directory = certificate_directory()
    if directory is not None:
        atexit.register(remove_directory, directory)
    if not _is_channel(0):
        return  # e.g. /dev/null: no channel to watch (the scheduler's idle timeout remains)
    loop = server.loop  # tornado's IOLoop: add_callback is safe from another thread
    threading.Thread(target=_close_at_end_of_input, args=(server, loop, directory),
                     name="benchlab-ssh-tether", daemon=True).start()


def certificate_directory() -> str | None:
    """This process's directory of the cluster's certificates on the host (the directory of
    Dask's configured CA file), when it is one benchlab made (``/tmp/benchlab-ssh-*``): the
    only directory this module removes."""
    import dask

    ca_file = dask.config.get("distributed.comm.tls.ca-file", None)
    if not ca_file:
        return None
    directory = os.path.dirname(os.path.abspath(ca_file))
    return directory if REMOTE_NAME.match(os.path.basename(directory)) else None


def remove_directory(directory: str) -> None:
    """Remove ``directory`` (a host's certificate directory); nothing if it is gone already."""
    shutil.rmtree(directory, ignore_errors=True)


def _is_channel(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _close_at_end_of_input(server: Any, loop: Any, directory: str | None) -> None:
    try:
        while os.read(0, 4096):
            pass  # the client sends nothing; anything read is ignored
    except OSError:
        pass  # a broken channel is an ended one
    loop.add_callback(server.close)
    time.sleep(GRACE_S)
    if directory is not None:
        remove_directory(directory)
    os._exit(1)
