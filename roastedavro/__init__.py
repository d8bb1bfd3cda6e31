"""roastedavro: marshmallow schemas compiled into Cython Avro codecs."""

__version__ = "0.1.0"

# The C runtime is built when the package is installed: a source tree imported
# as it is (Python started in the repository root) has none.
try:
    from roastedavro import _runtime  # noqa: E402, F401
except ImportError as error:
    raise ImportError(
        f"roastedavro's C runtime (roastedavro._runtime) cannot be imported from {__path__[0]}: "
        f"{error}. It is built when the package is installed: run `pip install .` (or "
        "`pip install -e .` for development) in the source tree. If roastedavro is installed "
        "already, this Python is importing the source tree instead (the current folder or "
        "PYTHONPATH is the repository root): run it from another folder.",
        name="roastedavro._runtime",
    ) from error

from roastedavro.avro.compatibility import (  # noqa: E402
    CompatibilityResult, Incompatibility, check_compatibility, check_mode,
)
from roastedavro.codec import AvroCodec, SchemaStore  # noqa: E402
from roastedavro.encoders import Encoder, register_encoder  # noqa: E402
from roastedavro.errors import CompileError, DecodeError, SchemaError, SchemaResolutionError  # noqa: E402
from roastedavro.flags import CompileFlags  # noqa: E402
from roastedavro.schema import CompiledSchema  # noqa: E402

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
