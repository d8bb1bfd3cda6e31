"""python -m roastedavro: the roastedavro command (see roastedavro.cli)."""

import sys

from roastedavro.cli import main

sys.exit(main())
