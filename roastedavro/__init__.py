"""roastedavro: marshmallow schemas compiled into Cython Avro codecs."""

from __future__ import annotations

__version__ = "0.1.0"

# The C runtime is built when the package is installed: a source tree imported
# as it is (Python started in the repository root) has none. Its presence is
# checked without importing it (it imports marshmallow and fastavro): the public
# names below are imported on first use, so `roastedavro count` and other light
# commands start without the compiler machinery.
import importlib  # noqa: E402
import importlib.util  # noqa: E402

if importlib.util.find_spec("roastedavro._runtime") is None:
    raise ImportError(
        f"roastedavro's C runtime (roastedavro._runtime) cannot be imported from {__path__[0]}: "
        "no compiled module of that name is there. It is built when the package is installed: run `pip install .` (or "
        "`pip install -e .` for development) in the source tree. If roastedavro is installed "
        "already, this Python is importing the source tree instead (the current folder or "
        "PYTHONPATH is the repository root): run it from another folder.",
        name="roastedavro._runtime",
    )

#: public name -> the module it is imported from on first use
_LAZY = {
    "CompatibilityResult": "roastedavro.avro.compatibility",
    "Incompatibility": "roastedavro.avro.compatibility",
    "check_compatibility": "roastedavro.avro.compatibility",
    "check_mode": "roastedavro.avro.compatibility",
    "AvroCodec": "roastedavro.codec",
    "SchemaStore": "roastedavro.codec",
    "Encoder": "roastedavro.encoders",
    "register_encoder": "roastedavro.encoders",
    "CompileError": "roastedavro.errors",
    "DecodeError": "roastedavro.errors",
    "SchemaError": "roastedavro.errors",
    "SchemaResolutionError": "roastedavro.errors",
    "CompileFlags": "roastedavro.flags",
    "CompiledSchema": "roastedavro.schema",
}

# the names imported on first use, as type checkers see them (at run time
# TYPE_CHECKING is False: nothing is imported here)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from roastedavro.avro.compatibility import (
        CompatibilityResult,
        Incompatibility,
        check_compatibility,
        check_mode,
    )
    from roastedavro.codec import AvroCodec, SchemaStore
    from roastedavro.encoders import Encoder, register_encoder
    from roastedavro.errors import CompileError, DecodeError, SchemaError, SchemaResolutionError
    from roastedavro.flags import CompileFlags
    from roastedavro.schema import CompiledSchema
del TYPE_CHECKING


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        # a submodule (roastedavro.avro, roastedavro.codec...), as when the
        # names above were imported eagerly and brought their modules along
        if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module 'roastedavro' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AvroCodec",
    "CompatibilityResult",
    "Incompatibility",
    "CompileError",
    "CompileFlags",
    "CompiledSchema",
    "DecodeError",
    "SchemaError",
    "SchemaResolutionError",
    "Encoder",
    "SchemaStore",
    "__version__",
    "check_compatibility",
    "check_mode",
    "register_encoder",
]
