"""``@record``: the part of ``dataclasses`` roastedavro's value classes use,
without importing it.

``dataclasses`` imports ``inspect``, ``ast`` and ``dis``: about 1.3 MB of a
process's memory (more than the drop-in's whole margin against fastavro),
for classes whose methods are a few lines each. ``record`` writes the same
methods as ``dataclasses.dataclass`` (``__init__`` with ``__post_init__``,
``__repr__``, ``__eq__``, ``__hash__``, frozen ``__setattr__`` and
``__delattr__``, ``__match_args__``, the class's text signature as its
``__doc__`` when it has none), and the classes stay dataclasses to
``dataclasses``' functions (``fields``, ``replace``, ``asdict``,
``is_dataclass``, subclassing with ``@dataclass``): their
``__dataclass_fields__`` and ``__dataclass_params__`` are made, with
``dataclasses`` imported, when first asked for.
"""

from __future__ import annotations

import reprlib
from typing import Any, Callable, ClassVar, TypeVar, dataclass_transform, get_origin, overload

__all__ = ["record", "field"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_HAS_DEFAULT_FACTORY: Any = type("_HAS_DEFAULT_FACTORY", (), {"__repr__": lambda self: "<factory>"})()


class _Field:
    __slots__ = ("name", "type", "default", "default_factory", "repr", "hash", "compare")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        repr: bool = True,
        hash: bool | None = None,
        compare: bool = True,
    ) -> None:
        self.name: str = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.hash = hash
        self.compare = compare


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
) -> Any:
    """As ``dataclasses.field`` (these options)."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory, repr, hash, compare)


class _Dataclass:
    """``__dataclass_fields__`` or ``__dataclass_params__``, from a twin made
    by ``dataclasses`` (imported then) at the first use."""

    def __init__(self, attribute: str):
        self.attribute = attribute

    def __get__(self, instance: object, owner: Any) -> Any:
        twin = owner.__dict__.get("_record_twin")
        if twin is None:
            import dataclasses

            namespace: dict[str, Any] = {
                "__annotations__": {},
                "__module__": owner.__module__,
                "__qualname__": owner.__qualname__,
            }
            for spec in owner.__record_fields__.values():
                namespace["__annotations__"][spec.name] = spec.type
                options = {"repr": spec.repr, "hash": spec.hash, "compare": spec.compare}
                if spec.default is not MISSING:
                    options["default"] = spec.default
                if spec.default_factory is not MISSING:
                    options["default_factory"] = spec.default_factory
                namespace[spec.name] = dataclasses.field(**options)
            params = owner.__record_params__
            twin = dataclasses.dataclass(eq=params[0], frozen=params[1])(type(owner.__name__, (), namespace))
            type.__setattr__(owner, "_record_twin", twin)
        return getattr(twin, self.attribute)


def _function(name: str, arguments: str, body: list[str], namespace: dict, qualname: str):
    text = f"def {name}({arguments}):\n" + "".join(f"    {line}\n" for line in body)
    exec(text, namespace)
    function = namespace.pop(name)
    function.__qualname__ = f"{qualname}.{name}"
    return function


def _is_class_var(annotation: Any) -> bool:
    if isinstance(annotation, str):  # from __future__ import annotations
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or get_origin(annotation) is ClassVar


_C = TypeVar("_C", bound=type)


# dataclass_transform: type checkers see the classes as dataclasses (their
# __init__, frozen fields); at run time it only sets __dataclass_transform__
@overload
@dataclass_transform(field_specifiers=(field,))
def record(cls: _C, /) -> _C: ...


@overload
def record(cls: None = None, /, *, eq: bool = True, frozen: bool = False) -> Callable[[_C], _C]: ...


def record(cls: Any = None, /, *, eq: bool = True, frozen: bool = False) -> Any:
    """As ``@dataclasses.dataclass`` with these options (init, repr, no order)."""
    if cls is None:
        return lambda cls: _process(cls, eq, frozen)
    return _process(cls, eq, frozen)


def _process(cls: Any, eq: bool, frozen: bool) -> Any:
    fields: dict[str, _Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        fields.update(base.__dict__.get("__record_fields__", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue  # a class attribute, not a field (as in dataclasses)
        value = cls.__dict__.get(name, MISSING)
        spec = value if isinstance(value, _Field) else _Field(default=value)
        if type(spec.default) in (list, dict, set):
            raise ValueError(
                f"mutable default {type(spec.default)} for field {name} is not allowed: use default_factory"
            )
        spec.name, spec.type = name, annotation
        if spec.default is MISSING:
            if name in cls.__dict__:
                delattr(cls, name)  # a default_factory: no class attribute
        else:
            setattr(cls, name, spec.default)
        fields[name] = spec
    cls.__record_fields__ = fields
    cls.__record_params__ = (eq, frozen)
    cls.__dataclass_fields__ = _Dataclass("__dataclass_fields__")
    cls.__dataclass_params__ = _Dataclass("__dataclass_params__")

    specs = list(fields.values())
    namespace: dict[str, Any] = {
        "MISSING": MISSING,
        "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
        "__record_object_setattr": object.__setattr__,
    }
    qualname = cls.__qualname__
    # __init__, as dataclasses writes it
    arguments, body, seen_default = ["self"], [], False
    for spec in specs:
        if spec.default is not MISSING:
            namespace[f"_dflt_{spec.name}"] = spec.default
            arguments.append(f"{spec.name}=_dflt_{spec.name}")
            value = spec.name
            seen_default = True
        elif spec.default_factory is not MISSING:
            namespace[f"_dflt_{spec.name}"] = spec.default_factory
            arguments.append(f"{spec.name}=_HAS_DEFAULT_FACTORY")
            value = f"_dflt_{spec.name}() if {spec.name} is _HAS_DEFAULT_FACTORY else {spec.name}"
            seen_default = True
        else:
            if seen_default:
                raise TypeError(f"non-default argument {spec.name!r} follows default argument")
            arguments.append(spec.name)
            value = spec.name
        body.append(
            f"__record_object_setattr(self, {spec.name!r}, {value})"
            if frozen
            else f"self.{spec.name} = {value}"
        )
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    if "__init__" not in cls.__dict__:
        cls.__init__ = _function("__init__", ", ".join(arguments), body or ["pass"], namespace, qualname)
        cls.__init__.__annotations__ = {spec.name: spec.type for spec in specs} | {"return": None}
    if "__repr__" not in cls.__dict__:
        shown = ", ".join(f"{spec.name}={{self.{spec.name}!r}}" for spec in specs if spec.repr)
        cls.__repr__ = reprlib.recursive_repr()(
            _function(
                "__repr__",
                "self",
                [f'return self.__class__.__qualname__ + f"({shown})"'],
                namespace,
                qualname,
            )
        )
    compared = [spec.name for spec in specs if spec.compare]
    if eq and "__eq__" not in cls.__dict__:
        mine = "".join(f"self.{name}," for name in compared)
        theirs = "".join(f"other.{name}," for name in compared)
        cls.__eq__ = _function(
            "__eq__",
            "self, other",
            [
                "if other.__class__ is self.__class__:",
                f"    return ({mine}) == ({theirs})",
                "return NotImplemented",
            ],
            namespace,
            qualname,
        )
    # __hash__ by dataclasses' table (unsafe_hash=False)
    own_hash = cls.__dict__.get("__hash__", MISSING)
    explicit = not (own_hash is MISSING or (own_hash is None and "__eq__" in cls.__dict__))
    if eq and frozen and not explicit:
        hashed = "".join(
            f"self.{spec.name}," for spec in specs if (spec.compare if spec.hash is None else spec.hash)
        )
        cls.__hash__ = _function("__hash__", "self", [f"return hash(({hashed}))"], namespace, qualname)
    elif eq and not explicit:
        cls.__hash__ = None
    if frozen:
        names = tuple(spec.name for spec in specs)
        namespace["__record_cls"], namespace["__record_names"] = cls, names
        for method, parameters, call in (
            ("__setattr__", "self, name, value", "name, value"),
            ("__delattr__", "self, name", "name"),
        ):
            if method in cls.__dict__:
                raise TypeError(f"Cannot overwrite attribute {method} in class {cls.__name__}")
            setattr(
                cls,
                method,
                _function(
                    method,
                    parameters,
                    [
                        "if type(self) is __record_cls or name in __record_names:",
                        "    from dataclasses import FrozenInstanceError",
                        f'    raise FrozenInstanceError(f"cannot {"assign to" if method == "__setattr__" else "delete"} field {{name!r}}")',
                        f"super(__record_cls, self).{method}({call})",
                    ],
                    namespace,
                    qualname,
                ),
            )
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(spec.name for spec in specs)  # type: ignore[misc]  # a new class's
    if cls.__doc__ is None:
        # dataclasses' (inspect.signature's) text of the signature
        shown_fields = []
        for spec in specs:
            text = f"{spec.name}: {spec.type!r}" if isinstance(spec.type, str) else spec.name
            if spec.default is not MISSING:
                text += f" = {spec.default!r}"
            elif spec.default_factory is not MISSING:
                text += " = <factory>"
            shown_fields.append(text)
        cls.__doc__ = f"{cls.__name__}({', '.join(shown_fields)})"
    return cls
