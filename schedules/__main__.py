"""``python -m schedules`` runs the ``pipebounds`` command line."""

import sys

from .cli import main

sys.exit(main())
