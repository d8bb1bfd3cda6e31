"""Options that change how a schema is compiled or how its codec behaves, and
the file name ending of the extension modules codecs are built as."""

from __future__ import annotations

from roastedavro._record import field, record
import importlib.machinery
import os

#: the file name ending of an extension module here (sysconfig's EXT_SUFFIX,
#: without importing sysconfig and its platform data)
EXT_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


#: the optimisation levels a codec may be compiled at
OPTIMIZE_LEVELS = ("-O0", "-Og", "-O1", "-O2", "-O3", "-Os")


def default_optimize() -> str:
    """The optimisation level of codecs whose flags name none:
    ``ROASTEDAVRO_OPTIMIZE`` where it is set (read when the flags are made),
    else ``-O1``."""
    level = os.environ.get("ROASTEDAVRO_OPTIMIZE", "").strip()
    if not level:
        return "-O1"
    if level not in OPTIMIZE_LEVELS:
        raise ValueError(f"ROASTEDAVRO_OPTIMIZE must be one of {' '.join(OPTIMIZE_LEVELS)}, not {level!r}")
    return level


@record(frozen=True)
class CompileFlags:
    """Options for ``CompiledSchema.compile`` (and ``AvroCodec``'s ``flags``).

    - ``optimize``: the C compiler's optimisation level, ``"-O1"`` by
      default. The hot primitives live in the runtime (built with -O2 at
      install), so the generated glue runs as fast at -O1 and compiles in
      about half the time of -O2. With ``"-O1"``, a module whose C exceeds
      4 MB (a schema of thousands of fields) is compiled at ``-Og``, in half
      the time. ``"-Og"`` compiles every module so: about three quarters of
      the C compiler's time, for dumps that take about 1.4× and loads 1.15×
      the time of ``-O1``'s. ``"-O0"`` takes the C compiler 40-55 % less
      time than ``-O1``, for dumps 2-4× and loads 1.5-2× as slow: for test
      suites and development, where compiling is most of the time. The environment
      variable ``ROASTEDAVRO_OPTIMIZE`` sets the level of flags that name
      none (``ROASTEDAVRO_OPTIMIZE=-O0`` for a test run).
    - ``max_depth``: how deeply records may nest (in recursive schemas)
      before dump raises ``ValidationError`` and load raises ``DecodeError``
      (500 by default, at most 10,000). Keeps hostile or cyclic input from
      exhausting the C stack. Values of fields that go through fastavro
      (``Raw`` with a complex type, ``Function``, ``Method``, fields without
      an encoder) count records, arrays and maps, and are held to fewer
      levels where the calling thread's C stack has no room for
      ``max_depth`` levels of fastavro's recursion (about 1,900 levels in an
      8 MB stack, 190 in 1 MB): fastavro has no limit of its own.
    - ``max_items``: the most items one array or map block may announce on
      load (100,000,000 by default).
    - ``item_allowance``: how many items one message may announce beyond its
      length in bytes, across all its arrays, maps and blocks, on the
      compiled and the generic path and in ``many=True`` lists (1,000,000 by
      default). Items that take no bytes (nulls, empty records,
      ``Constant(None)``) could otherwise let a few bytes announce billions
      of them: with this budget, a message of n bytes decodes at most
      n + item_allowance items, so its cost is proportional to its length
      (times what one item of the schema costs). Exceeding it is a
      ``DecodeError``; raise it for messages that legitimately hold more
      zero-size items.
    - ``annotate``: keep Cython's HTML annotation next to the cached module
      (for profiling generated code with ``cython -a``-style reports).
    - ``validate``: ``False`` skips marshmallow's validators (field
      validators, ``@validates``, ``@validates_schema``) on load, for trusted
      input: such schemas then load on the compiled path. Hooks still run.
    """

    optimize: str = field(default_factory=default_optimize)
    max_depth: int = 500
    max_items: int = 100_000_000
    item_allowance: int = 1_000_000
    annotate: bool = False
    validate: bool = True

    def __post_init__(self) -> None:
        if self.optimize not in OPTIMIZE_LEVELS:
            raise ValueError(f"optimize must be one of {' '.join(OPTIMIZE_LEVELS)}, not {self.optimize!r}")
        if not 1 <= self.max_depth <= 10_000:
            raise ValueError("max_depth must be between 1 and 10000")
        if not 1 <= self.max_items <= 2**62:
            raise ValueError("max_items must be between 1 and 2**62")
        if not 0 <= self.item_allowance <= 2**62:
            raise ValueError("item_allowance must be between 0 and 2**62")

    def build_key(self) -> str:
        """The part of the flags that changes the compiled binary."""
        return f"{self.optimize} annotate={self.annotate}"
