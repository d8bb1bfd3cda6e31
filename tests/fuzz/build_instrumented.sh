#!/usr/bin/env bash
# Builds a copy of roastedavro whose C code libFuzzer sees, for tests/fuzz/fuzz_compiled.py.
#
#   tests/fuzz/build_instrumented.sh [OUT]        # OUT defaults to /tmp/roastedavro-fuzz
#   . OUT/env.sh                                  # PYTHONPATH, CC, LD_PRELOAD, ASAN_OPTIONS, cache
#   python tests/fuzz/fuzz_compiled.py -max_total_time=3600 -rss_limit_mb=2048 -timeout=10 OUT/corpus OUT/seeds
#
# What it does, all under OUT (the working tree and its installed runtime are left alone):
#   src/     the committed tree at REV (default HEAD), with the C runtime (_runtime.pyx) built by
#            clang with -fsanitize=address,fuzzer-no-link (coverage counters, comparison tracing, ASan)
#   asan_with_fuzzer.so
#            clang's ASan runtime and libFuzzer merged into one preloadable library, as atheris's
#            own installer does when it is built from source (the PyPI wheels do not ship it):
#            the generated code's coverage callbacks then reach libFuzzer, and atheris sees a
#            preloaded libFuzzer and uses it instead of its built-in copy
#   env.sh   what to source before running: the copy first on PYTHONPATH, CC set so that every
#            generated codec is compiled with the same instrumentation, a private module cache
#   seeds/   the target's seed corpus, written by fuzz_compiled.py --write-seeds (this also builds
#            every codec the target uses, so the fuzzing run starts at once)
#
# Needs clang and compiler-rt (Debian: apt-get install clang; the sanitizer and libFuzzer
# archives come with libclang-rt-<version>-dev), and a Python with roastedavro's requirements
# and atheris installed (PYTHON, default python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel)"
out="${1:-/tmp/roastedavro-fuzz}"
rev="${REV:-HEAD}"
python="${PYTHON:-python3}"
clang="${CLANG:-clang}"
clangxx="${CLANGXX:-clang++}"
sanitize="${SANITIZE:-address,fuzzer-no-link}"
arch="$(uname -m)"

runtime_dir="$("$clang" --print-runtime-dir)"
libfuzzer="$runtime_dir/libclang_rt.fuzzer_no_main-$arch.a"
asan="$runtime_dir/libclang_rt.asan-$arch.a"
for archive in "$libfuzzer" "$asan"; do
  [[ -f "$archive" ]] || { echo "missing $archive (install clang's compiler-rt)" >&2; exit 1; }
done

# OUT is replaced: only a folder this script made before (or an empty or missing one)
if [[ -e "$out" && ! -f "$out/REVISION" && -n "$(ls -A "$out")" ]]; then
  echo "$out exists and was not made by this script; give another folder" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/src" "$out/cache"
git -C "$repo" archive --format=tar "$rev" | tar -x -C "$out/src"
git -C "$repo" rev-parse "$rev" > "$out/REVISION"

# 1. the C runtime, instrumented (setup.py's own -O2 stays; CFLAGS adds to it)
(
  cd "$out/src"
  CC="$clang" LDSHARED="$clang -shared" CFLAGS="-fsanitize=$sanitize -g" \
    "$python" setup.py -q build_ext --inplace > "$out/build_runtime.log" 2>&1
) || { cat "$out/build_runtime.log" >&2; exit 1; }
runtime_so="$(ls "$out"/src/roastedavro/_runtime*.so)"
symbols="$(nm -D "$runtime_so")"
grep -q __sanitizer_cov_8bit_counters_init <<< "$symbols" \
  || { echo "$runtime_so has no coverage instrumentation" >&2; exit 1; }
[[ "$sanitize" != *address* ]] || grep -q __asan_init <<< "$symbols" \
  || { echo "$runtime_so has no ASan instrumentation" >&2; exit 1; }

# 2. ASan + libFuzzer as one preloadable library; ASan's preinit object registers itself through
#    .preinit_array, which a shared library cannot carry: dropped, as atheris does
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$asan" "$work/asan.a"
chmod u+w "$work/asan.a"
preinit="$(ar t "$work/asan.a" | grep preinit || true)"
[[ -z "$preinit" ]] || ar d "$work/asan.a" $preinit
"$clangxx" -shared -o "$out/asan_with_fuzzer.so" \
  -Wl,--whole-archive "$libfuzzer" "$work/asan.a" -Wl,--no-whole-archive -lpthread -ldl

# 3. the environment for runs
cat > "$out/env.sh" <<EOF
# source this before running tests/fuzz/fuzz_compiled.py or tests/fuzz/replay_stats.py
export PYTHONPATH="$out/src\${PYTHONPATH:+:\$PYTHONPATH}"
export ROASTEDAVRO_CACHE_DIR="$out/cache"
export CC="$clang -fsanitize=$sanitize"
export LD_PRELOAD="$out/asan_with_fuzzer.so"
# Python's own allocations bypass pymalloc so that ASan checks them too; CPython leaks
# by design at exit; a huge allocation is reported by libFuzzer's -malloc_limit_mb
export PYTHONMALLOC=malloc
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:handle_segv=1:handle_abort=1"
export ROASTEDAVRO_FUZZ_INSTRUMENTED="$out"
EOF

# 4. the seed corpus; builds every codec the target uses with the instrumented compiler
(
  . "$out/env.sh"
  "$python" "$here/fuzz_compiled.py" --write-seeds "$out/seeds"
)
codecs="$(ls "$out"/cache/*.so | wc -l)"
echo "built $out from $(cat "$out/REVISION") ($codecs instrumented codecs, $(ls "$out/seeds" | wc -l) seeds)"
echo "run:  . $out/env.sh && $python $here/fuzz_compiled.py -max_total_time=600 -rss_limit_mb=2048 -timeout=10 $out/corpus $out/seeds"
