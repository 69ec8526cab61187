"""Names of a package loaded from its modules on first use (PEP 562), one way for every package.

``benchlab run`` imports a few packages for one or two names each; importing every module they
re-export would cost milliseconds of each session's start-up (cgroup limits and accounting for a
run without limits, the contention probe and tuning for a run that never tunes). A package lists
where each lazy name lives and sets ``__getattr__ = lazy_names(__name__, table, globals())``.
"""

import importlib
from typing import Any, Callable


def lazy_names(package: str, homes: dict[str, str],
               namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    homes : dict of str to str
        Each lazy name -> the submodule (relative to ``package``) that defines it.
    namespace : dict
        The package's ``globals()``: a loaded name is stored there, so later look-ups do not
        come back through ``__getattr__``.

    Returns
    -------
    callable
        ``__getattr__(name)``: the name's value; AttributeError for a name not in ``homes``.
    """
    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
