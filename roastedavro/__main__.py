"""python -m roastedavro: the roastedavro command (see roastedavro.cli)."""

import sys

from roastedavro.cli import main

# guarded: `roastedavro build` starts its workers by spawning Python, which
# imports this module again under another name
if __name__ == "__main__":
    sys.exit(main())
