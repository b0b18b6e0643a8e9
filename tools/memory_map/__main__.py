"""``python -m pypto.tools.memory_map``: see :mod:`pypto.tools.memory_map.cli`."""

import sys

from .cli import main

sys.exit(main())
