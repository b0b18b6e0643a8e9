"""``python -m pypto.runtime.debug.replay <dir> [flags]``: the command line of :mod:`.replaying`.

Import the API from the package (``from pypto.runtime.debug import replay, replay_main``), not from here.
"""

from __future__ import annotations

import sys

from .replaying import main

if __name__ == "__main__":
    sys.exit(main())
