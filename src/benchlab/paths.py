"""Where benchlab keeps its per-user cache: one rule, read by every layer that caches.

The cache holds what benchlab can always make again: compiled binaries (the exec helper and
the workloads, ``bin/``), remembered probe answers (``probes/``), stores checked whole
(``checked-stores/``) and the build trees of ``ab`` and ``bisect`` (``builds/``). Deleting it
costs only the time to remake them.
"""

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """The user's benchlab cache directory (not created here).

    ``$BENCHLAB_CACHE`` when set and not empty, else ``$XDG_CACHE_HOME/benchlab`` when that is
    set and not empty, else ``~/.cache/benchlab``. An empty variable counts as unset, as the XDG
    base directory specification says for ``XDG_CACHE_HOME``. Read on every call (no memory of an
    earlier answer), so a changed environment takes effect at once.
    """
    root = os.environ.get("BENCHLAB_CACHE")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "benchlab"
