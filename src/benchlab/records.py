"""``@record``: a dataclass whose methods are not compiled when its module is imported.

Python 3.11's ``@dataclass`` writes ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__setattr__``, ``__delattr__``, ``__hash__``) as source text and compiles each with ``exec``
as the class is created: 0.25-0.7 ms a class, ~14 % of the instructions of a whole
``benchlab run -q -N -r 1`` for the ~17 dataclasses on its path (start-up). A
``@record`` class is a real dataclass (``dataclasses.fields``, ``asdict``, ``replace`` and
``is_dataclass`` work on it; ``__match_args__`` is set) whose methods are shared functions over
its fields, built without compiling anything: the same behaviour (``tests/test_startup.py``
compares them with ``@dataclass``'s), ~20x cheaper to create. Its ``__init__`` takes ~1 us more
per instance than ``@dataclass``'s, so classes made many times per run stay plain ``@dataclass``.

A class may write its own ``__init__`` (as with ``@dataclass(init=False)``). Not supported
(refused at decoration): ``InitVar`` and keyword-only fields, an own ``__repr__`` or ``__eq__``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["record"]

_MISSING = dataclasses.MISSING


def record(cls: type | None = None, /, *, frozen: bool = False) -> Any:
    """``@dataclass`` or ``@dataclass(frozen=True)`` (with ``eq`` and ``repr``), made without
    compiling source at import; use as ``@record`` or ``@record(frozen=True)``."""
    if cls is None:
        return lambda klass: _make(klass, frozen)
    return _make(cls, frozen)


def _make(cls: type, frozen: bool) -> type:
    if any(name in cls.__dict__ for name in ("__repr__", "__eq__")):
        raise TypeError(f"@record {cls.__name__}: defines its own __repr__/__eq__; "
                        f"use @dataclass")
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    # InitVar fields are kept out of fields() and marked by a private name of dataclasses; read
    # it softly, so a Python that renames it loses this refusal, not the import of benchlab
    initvar = getattr(dataclasses, "_FIELD_INITVAR", None)
    if initvar is not None and any(getattr(f, "_field_type", None) is initvar
                                   for f in cls.__dict__["__dataclass_fields__"].values()):
        raise TypeError(f"@record {cls.__name__}: InitVar fields are not supported")
    if any(f.kw_only for f in fields):
        raise TypeError(f"@record {cls.__name__}: keyword-only fields are not supported")
    if "__init__" not in cls.__dict__:  # its own __init__ stays, as @dataclass(init=False)'s
        cls.__init__ = _init_of(cls, fields, frozen)
    cls.__repr__ = _repr_of([f.name for f in fields if f.repr])
    compared = tuple(f.name for f in fields if f.compare)
    cls.__eq__ = _eq_of(compared)
    if frozen:
        names = frozenset(f.name for f in fields)
        cls.__setattr__, cls.__delattr__ = _frozen_of(cls, names)
    if "__hash__" not in cls.__dict__:  # an explicit __hash__ stays, as with @dataclass
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        cls.__hash__ = _hash_of(hashed) if frozen else None  # as @dataclass: eq, not frozen
    return cls


def _init_of(cls: type, fields: tuple[dataclasses.Field, ...], frozen: bool):
    init = [f for f in fields if f.init]
    names = tuple(f.name for f in init)
    known = frozenset(names)
    defaults = {f.name: f.default for f in init if f.default is not _MISSING}
    factories = [(f.name, f.default_factory) for f in fields
                 if f.default_factory is not _MISSING]
    required = [name for name in names if name not in defaults
                and name not in {n for n, _ in factories}]
    required_set = frozenset(required)
    post_init = hasattr(cls, "__post_init__")
    # the values go into the instance's __dict__ in field order, as @dataclass's __init__ puts
    # them (a frozen one through object.__setattr__, which ends there too)
    direct = "__slots__" not in cls.__dict__ and not any(
        hasattr(getattr(cls, name, None), "__set__") for name in known)
    assign = object.__setattr__ if frozen else setattr
    order = names + tuple(name for name, _ in factories if name not in known)  # init=False last
    # a copy of this dict updated with the arguments keeps field order: one C-level copy and
    # update per instance instead of a Python loop over the fields (made once per run)
    template = {name: defaults.get(name, _MISSING) for name in order}
    qualname = f"{cls.__qualname__}.__init__"

    def __init__(self, *args, **kwargs) -> None:
        if args:
            if len(args) > len(names):
                raise TypeError(f"{qualname}() takes {len(names) + 1} positional arguments "
                                f"but {len(args) + 1} were given")
            for key in kwargs:
                if key in names[:len(args)]:
                    raise TypeError(f"{qualname}() got multiple values for argument {key!r}")
            kwargs.update(zip(names, args))
        if not kwargs.keys() <= known:
            key = min(kwargs.keys() - known)
            raise TypeError(f"{qualname}() got an unexpected keyword argument {key!r}")
        if not required_set <= kwargs.keys():
            name = next(name for name in required if name not in kwargs)
            raise TypeError(f"{qualname}() missing 1 required positional argument: "
                            f"{name!r}")
        values = template.copy()
        values.update(kwargs)
        for name, factory in factories:
            if name not in kwargs:
                values[name] = factory()
        if direct:
            self.__dict__.update(values)
        else:
            for name in order:
                assign(self, name, values[name])
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = qualname
    return __init__


def _repr_of(names: list[str]):
    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _eq_of(names: tuple[str, ...]):
    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (tuple(getattr(self, name) for name in names)
                    == tuple(getattr(other, name) for name in names))
        return NotImplemented

    return __eq__


def _hash_of(names: tuple[str, ...]):
    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in names))

    return __hash__


def _frozen_of(cls: type, names: frozenset[str]):
    def __setattr__(self, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__
