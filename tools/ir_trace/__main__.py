"""``python -m pypto.tools.ir_trace``: same arguments and exit codes as ``pypto-ir-trace``."""

import sys

from .cli import main

sys.exit(main())
