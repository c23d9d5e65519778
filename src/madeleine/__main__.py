"""``python -m madeleine``: the same command line as ``madeleine``."""

import sys

from madeleine.cli import main

sys.exit(main())
