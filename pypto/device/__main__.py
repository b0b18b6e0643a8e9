"""``python -m pypto.device [FILE|-|NAME]``: the same as ``python -m pypto.target``."""

from __future__ import annotations

import sys

from pypto.target.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
