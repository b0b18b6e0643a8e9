"""The output directory of one ``compile``.

The default is ``${PYPTO_PROG_BUILD_DIR:-build_output}/<name>_<YYYYmmdd_HHMMSS>_<random>``,
created exclusively so concurrent compiles never share one.
"""

from __future__ import annotations

import os
import secrets
from datetime import datetime
from pathlib import Path

from pypto.core.program import Program

REPORT_DIR = "report"
"""The folder of ``perf_hints.log`` and the compile profile."""


def default_output_dir(program: Program, now: datetime | None = None) -> Path:
    """``${PYPTO_PROG_BUILD_DIR:-build_output}/<name>_<YYYYmmdd_HHMMSS>_<random>``
    (a name only: :func:`make_output_dir` creates it exclusively)."""
    root = os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output"
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    return Path(root) / f"{program.name or 'program'}_{stamp}_{secrets.token_hex(4)}"


def make_output_dir(program: Program, output_dir: str | os.PathLike[str] | None) -> Path:
    """Create the output directory; a default one is new (never shared)."""
    if output_dir is not None:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        return out
    for _ in range(100):
        out = default_output_dir(program)
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            out.mkdir()
            return out
        except FileExistsError:
            continue
    raise RuntimeError("could not create a fresh output directory")
