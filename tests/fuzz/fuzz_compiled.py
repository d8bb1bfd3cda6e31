"""Coverage-guided fuzzing of the compiled codecs: libFuzzer sees the C code.

Build an instrumented copy first (clang, ASan, libFuzzer; see build_instrumented.sh):

    tests/fuzz/build_instrumented.sh /tmp/roastedavro-fuzz
    . /tmp/roastedavro-fuzz/env.sh
    python tests/fuzz/fuzz_compiled.py -max_total_time=3600 -rss_limit_mb=2048 -timeout=10 \\
        /tmp/roastedavro-fuzz/corpus /tmp/roastedavro-fuzz/seeds

The first byte of an input picks one of the schemas of compiled_targets.py
(zero-size items, decimals, recursion, unions, enums and maps, the generic
path through fastavro; single records and many=True), the rest is loaded.
Allowed outcomes: a value (which must dump again, reload to the same value
and dump to the same bytes), roastedavro.DecodeError, marshmallow's
ValidationError. Anything else (another exception, a failed round trip, a
crash or ASan report, an input slower than -timeout, memory over
-rss_limit_mb or one allocation over -malloc_limit_mb) stops the run and
saves the input as crash-*/timeout-*/oom-*.

Without the instrumented build (plain ``python tests/fuzz/fuzz_compiled.py``)
it still runs, seeing only Python coverage, as fuzz_load.py does.

    python tests/fuzz/fuzz_compiled.py --write-seeds DIR    # valid encodings of every target
"""

import os
import pathlib
import sys

# codecs are compiled in this process: the compiler must not run with the
# sanitizer preloaded (the preload is in effect here already)
os.environ.pop("LD_PRELOAD", None)

import atheris  # noqa: E402

with atheris.instrument_imports(include=["roastedavro"]):
    import roastedavro  # noqa: F401

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compiled_targets  # noqa: E402


def test_one_input(data: bytes) -> None:
    compiled_targets.check(data)


def write_seeds(folder: pathlib.Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, (name, data) in enumerate(compiled_targets.seeds()):
        outcome = compiled_targets.check(data)
        if outcome != "value":  # a seed is a valid encoding that round-trips
            raise compiled_targets.Finding(f"seed {name}-{i:03d} gives {outcome}, not a value")
        (folder / f"{name}-{i:03d}").write_bytes(data)


def main() -> None:
    print(
        f"roastedavro from {os.path.dirname(roastedavro.__file__)}; "
        f"instrumented build: {os.environ.get('ROASTEDAVRO_FUZZ_INSTRUMENTED', 'no')}",
        file=sys.stderr,
    )
    compiled_targets.compile_all()
    if "--write-seeds" in sys.argv:
        write_seeds(pathlib.Path(sys.argv[-1]))
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
