"""``python -m phy.cli``: the ``linkmodel`` command."""

import sys

from . import main

sys.exit(main())
