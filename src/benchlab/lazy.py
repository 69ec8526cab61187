"""Names of a package loaded from its modules on first use (PEP 562), one way for every package.

``benchlab run`` imports a few packages for one or two names each; importing every module they
re-export would cost milliseconds of each session's start-up (cgroup limits and accounting for a
run without limits, the contention probe and tuning for a run that never tunes). A package lists
where each lazy name lives and sets ``__getattr__ = lazy_names(__name__, table, globals())``.

A module's regular expression that ``run`` never uses (a parser of an option it was not given)
is a :func:`lazy_pattern`: compiled when first used (~0.6 M instructions each at import).
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


class LazyPattern:
    """A regular expression compiled on first use; otherwise used as the ``re.Pattern`` it
    stands for (``.match``, ``.fullmatch``, ``.search``, ``.sub``, ``.pattern``, ...).

    Each attribute is looked up on the compiled pattern once and kept on this object, so later
    uses cost what the pattern's own method costs.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and the like probe dunders: not the pattern's
            raise AttributeError(name)
        import re  # re's own cache: one compile however many attributes are used

        value = getattr(re.compile(self._source, self._flags), name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy_pattern({self._source!r})"


def lazy_pattern(pattern: str, flags: int = 0) -> LazyPattern:
    """``re.compile(pattern, flags)`` made when first used instead of at import."""
    return LazyPattern(pattern, flags)
