"""``python -m probecast.tui`` is the ``probecast`` command."""

import sys

from .main import main

sys.exit(main())
