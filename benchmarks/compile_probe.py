"""Times ``compile()`` of one benchmark case in a fresh process; prints one JSON line.

Run by ``benchmarks/run.py`` with ``ROASTEDAVRO_CACHE_DIR`` pointing at a
private temporary folder: the first run builds (cold), the second loads the
cached module (cached). Both also time a second ``compile()`` on a new
instance in the same process (module already imported: code generation only).

    python -m benchmarks.compile_probe CASE [--warm-with OTHER_CASE]

``--warm-with`` compiles another case first, in the same process.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def peak_rss_kib() -> int:
    """This process's peak RSS. VmHWM, not getrusage: on Linux ru_maxrss survives
    fork+exec, so a child started by a big parent reports the parent's peak."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv: list[str]) -> None:
    name = argv[0]
    warm_with = argv[argv.index("--warm-with") + 1] if "--warm-with" in argv else None
    started = time.perf_counter()
    from roastedavro import compiler

    from benchmarks.schemas import CASES

    imported = time.perf_counter() - started
    if warm_with is not None:
        # Cython's compiler imported and its lexer built, as for every compile
        # after a process's first
        CASES[warm_with].schema().compile()
    case = CASES[name]
    schema = case.schema()
    started = time.perf_counter()
    schema.compile()
    compile_s = time.perf_counter() - started
    timing = dict(compiler.last_timing)
    # the module is now in compiler._loaded: a new instance only generates code
    started = time.perf_counter()
    case.schema().compile()
    in_memory_s = time.perf_counter() - started
    # sanity: the codec works
    record = case.record()
    schema.load_compiled(schema.dump_compiled(record))
    print(
        json.dumps(
            {
                "case": name,
                "compile_s": compile_s,
                "built": "cc" in timing,
                "cython_s": timing.get("cython"),
                "cc_s": timing.get("cc"),
                "import_module_s": timing.get("load"),
                "in_memory_recompile_s": in_memory_s,
                "import_s": imported,
                "max_rss_kib": peak_rss_kib(),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
