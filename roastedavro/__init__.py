"""roastedavro: marshmallow schemas compiled into Cython Avro codecs."""

__version__ = "0.1.0"

from roastedavro.encoders import Encoder, register_encoder  # noqa: E402
from roastedavro.errors import CompileError, DecodeError  # noqa: E402
from roastedavro.flags import CompileFlags  # noqa: E402
from roastedavro.schema import CompiledSchema  # noqa: E402

__all__ = [
    "CompileError",
    "CompileFlags",
    "CompiledSchema",
    "DecodeError",
    "Encoder",
    "__version__",
    "register_encoder",
]
