"""``python -m pipebounds``: the command line (same as the ``pipebounds`` script)."""

import sys

from .cli import main

sys.exit(main())
