"""Exceptions raised by roastedavro."""

from __future__ import annotations


class DecodeError(ValueError):
    """Bytes that are not a valid Avro encoding of the schema's record.

    ``offset`` is the position in the input where the problem was found.
    """

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} (at byte offset {offset})")
        self.reason = message
        self.offset = offset

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.offset))


class TruncatedError(DecodeError, EOFError):
    """The bytes end before the value does. Also an ``EOFError``, as Python's
    readers and fastavro say it, so code that reads a stream of values until
    ``EOFError`` stops there too."""


class LengthDecodeError(DecodeError, EOFError):
    """A negative length for bytes or a string. Also an ``EOFError``, as
    fastavro raises it for such bytes (it asks the stream for that many)."""


class IndexDecodeError(DecodeError, IndexError):
    """A union branch or enum symbol index the schema does not have. Also an
    ``IndexError``, as fastavro raises it for such bytes."""


class TextDecodeError(DecodeError, UnicodeDecodeError):
    """A string or map key whose bytes are not UTF-8. Also a
    ``UnicodeDecodeError`` (the bytes in ``object``, the bad byte from
    ``start``), as ``bytes.decode`` raises it."""

    def __init__(self, message: str, offset: int, data: bytes = b"", start: int = 0, end: int = 0):
        UnicodeDecodeError.__init__(self, "utf-8", data, start, end or start + 1, message)
        self.args = (f"{message} (at byte offset {offset})",)
        self.reason = message
        self.offset = offset

    def __str__(self) -> str:
        return self.args[0]

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.offset, self.object, self.start, self.end))


class UnreadableDatumError(DecodeError):
    """A datum that reaches a part of the writer's schema that the reader's
    schema cannot read (a writer's union branch no reader branch takes, an
    enum symbol the reader lacks and has no default for): schema
    resolution's error, found in the data rather than in the schemas."""


class CompileError(Exception):
    """A schema that cannot be compiled, or a toolchain that failed."""


class NotCompiledError(CompileError):
    """A codec asked for with ``build="never"`` that is not built yet (not in
    the module cache, or being built by another thread right now)."""


class DumpError(Exception):
    """Internal: a value that cannot be written, raised from generated code.

    ``path`` collects field names, list indexes and map keys innermost first
    as the error travels up through the generated record functions;
    the public entry points turn it into a marshmallow ``ValidationError``.
    """

    def __init__(self, messages: object, path: list | None = None) -> None:
        super().__init__(messages)
        self.messages = messages if isinstance(messages, (list, dict)) else [messages]
        self.path = path if path is not None else []


class SchemaError(ValueError):
    """An Avro schema that is not valid: the message names where and the rule.

    ``path`` is where in the schema the problem is (e.g. ``Order.lines.items``).
    """

    def __init__(self, message: str, path: str = ""):
        super().__init__(f"{path}: {message}" if path else message)
        self.reason = message
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.path))


class SchemaResolutionError(SchemaError):
    """A writer's and a reader's schema whose data cannot be read across:
    every datum of the writer reaches a part the reader cannot read.

    ``writer_path`` and ``reader_path`` say where, in each schema
    (``shop.Order.lines[].qty``; ``<type>`` marks a union's branch).
    """

    def __init__(self, message: str, writer_path: str = "", reader_path: str = ""):
        where = f"writer's {writer_path or 'root'}, reader's {reader_path or 'root'}"
        super().__init__(f"{message} ({where})")
        self.reason = message
        self.writer_path = writer_path
        self.reader_path = reader_path

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.writer_path, self.reader_path))


class DatumError(ValueError, TypeError):
    """A value that cannot be written as the schema's type (AvroCodec and
    roastedavro.fastavro). A ValueError and a TypeError, as fastavro raises
    both; ``path`` names the field, index or key, outermost first."""

    #: a longer path (deep recursion) is shown by its ends
    SHOWN_PARTS = 24

    def __init__(self, message: str, path: tuple = ()):
        def text(parts: tuple) -> str:
            return "".join(f"[{part!r}]" if not isinstance(part, str) else f".{part}" for part in parts)

        half = self.SHOWN_PARTS // 2
        if len(path) > self.SHOWN_PARTS:
            where = (
                text(path[:half]) + f" ...({len(path) - 2 * half} more)... " + text(path[-half:])
            ).lstrip(".")
        else:
            where = text(path).lstrip(".")
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.path = tuple(path)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.path))
