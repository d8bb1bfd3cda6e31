"""How many examples the long randomized tests draw.

Tests marked ``fuzz`` (random schemas compiled one by one, random evolved
pairs read by Java, damaged bytes) draw a quarter of their examples in the
default run, so the README's test command stays near ten minutes on two
cores while every property still runs; with ``ROASTEDAVRO_FUZZ=1`` they draw
all of them. CI runs ``ROASTEDAVRO_FUZZ=1 pytest -m fuzz`` after the default
run of its first leg.
"""

from __future__ import annotations

import os

#: the full counts (CI's long run, or a developer who asks for it)
FUZZ = os.environ.get("ROASTEDAVRO_FUZZ") == "1"


def examples(full: int, default: int | None = None) -> int:
    """``full`` under ROASTEDAVRO_FUZZ=1, else ``default`` (a quarter of
    ``full``, at least 2)."""
    if FUZZ:
        return full
    return default if default is not None else max(2, full // 4)
