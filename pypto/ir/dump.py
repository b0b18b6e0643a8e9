"""THE pass-dump writer: ``passes_dump/00_frontend.py`` and
``passes_dump/NN_after_<PassName>.py``, each the program's DSL text
(``Program.as_python(level)``), written atomically."""

from __future__ import annotations

import os
from pathlib import Path

from pypto.utils.atomic import atomic_write_text

from .passes.base import PyPTOPass
from .program import PassDumpLevel, Program

DUMP_DIR = "passes_dump"
FRONTEND_FILE = "00_frontend.py"


def dump_level(dump_passes: bool | int | PassDumpLevel | None) -> PassDumpLevel:
    """``dump_passes`` as a level: ``True`` -> CONCISE, falsy -> NONE."""
    if dump_passes is None or dump_passes is False:
        return PassDumpLevel.NONE
    if dump_passes is True:
        return PassDumpLevel.CONCISE
    return PassDumpLevel(int(dump_passes))


def dump_file_name(index: int, pass_name: str) -> str:
    """``01_after_OutlineIncoreScopes.py`` (index is the 1-based pass position)."""
    return f"{index:02d}_after_{pass_name}.py"


class DumpWriter:
    """Writes the dumps of one compilation into ``<output_dir>/passes_dump``."""

    def __init__(self, output_dir: str | os.PathLike[str], level: PassDumpLevel = PassDumpLevel.CONCISE):
        self.directory = Path(output_dir) / DUMP_DIR
        self.level = level

    @property
    def enabled(self) -> bool:
        return self.level is not PassDumpLevel.NONE

    def _write(self, name: str, program: Program) -> Path | None:
        if not self.enabled:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / name
        text = program.as_python(self.level)
        atomic_write_text(path, text if text.endswith("\n") else text + "\n")
        return path

    def write_frontend(self, program: Program) -> Path | None:
        """``00_frontend.py``: the program before any pass."""
        return self._write(FRONTEND_FILE, program)

    def write_after(self, index: int, pass_name: str, program: Program) -> Path | None:
        """``NN_after_<PassName>.py``: the program after pass number ``index``."""
        return self._write(dump_file_name(index, pass_name), program)

    def __call__(self, index: int, pass_cls: type[PyPTOPass], program: Program) -> None:
        """The PassManager callback."""
        self.write_after(index, pass_cls.PASS_NAME, program)
