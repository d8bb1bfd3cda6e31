"""Which tier serves a schema, and when its codec is compiled.

Every schema is served at once by tier 0, the interpreter compiled with the
package (roastedavro._tier0): no C compiler, no wait, within about 15% of a
compiled codec's speed on plain Avro. The compiled codec (tier 1) is an
optimisation; a policy says when to build it:

``eager``
    before the first call (the caller waits for the build or the cache),
    as ``CompiledSchema.compile()`` always does;
``hot``
    in the background, in a child process, once the schema has done enough
    work to repay the build (:data:`HOT_AFTER` bytes written and read); a
    precompiled or cached codec is used as soon as it is found;
``never``
    tier 0, unless a precompiled or cached codec exists.

``ROASTEDAVRO_COMPILE`` sets the policy of every entry point that is not
given one; ``never`` there forbids compiling anywhere (a deployment without
a compiler), whatever a codec asks for. Where no C compiler is installed,
``eager`` and ``hot`` serve from tier 0 (:func:`roastedavro.compiler.compiler_missing`
says why).
"""

from __future__ import annotations

from roastedavro import compiler
from roastedavro.errors import CompileError

#: the compile policies
POLICIES = ("eager", "hot", "never")

#: ``hot``: the bytes a schema's tier-0 codec writes and reads before its
#: compiled codec is built (64 MiB: a few seconds of tier-0 work, in which a
#: busy service shows the schema will stay; the build then runs on another
#: core and each later call saves 10-15%)
HOT_AFTER = 64 << 20


def compile_policy(explicit: str | None = None, default: str = "hot") -> str:
    """The policy of one codec: ``never`` when ROASTEDAVRO_COMPILE says so,
    else ``explicit`` if given, else ROASTEDAVRO_COMPILE's (``auto``:
    ``default``)."""
    if explicit is not None and explicit not in POLICIES:
        raise ValueError(f"compile must be one of {', '.join(POLICIES)}, not {explicit!r}")
    mode = compiler.compile_mode()
    if mode == "never":
        return "never"
    if explicit is not None:
        return explicit
    return default if mode == "auto" else mode


def can_compile() -> bool:
    """Whether codecs can be compiled here (a C compiler, Python's headers and Cython)."""
    return compiler.compiler_missing() is None


__all__ = ["POLICIES", "HOT_AFTER", "compile_policy", "can_compile", "CompileError"]
