"""``python -m snacks_core.cli``: the ``snacks`` command."""

import sys

from . import main

sys.exit(main())
