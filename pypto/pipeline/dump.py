"""THE pass-dump writer (``passes_dump/``), pl-dsl.md §5.

- ``00_frontend.py``: the program before any pass;
- ``NN_after_<PassName>.py``: after pass number ``NN`` (the position actually
  run), each the program's DSL text (``Program.as_python(level)``);
- ``NN_after_<PassName>.log``: only when the pass emitted warnings, one
  located warning each (:func:`format_warning_log`);
- ``<output_dir>/report/line_locs.json`` (beside ``passes_dump/``, whose file
  names stay upstream's): the line map of every dump, written by
  :meth:`DumpWriter.close` (schema in :func:`line_locs_json`): per printed
  line, the DSL locations of the ops on it, so tools (``pypto-ir-trace``'s
  source-line lens) can follow one kernel line through every pass;
- on a failure, ``NN_failed_<PassName>.py`` (the failing pass's input, i.e.
  the previous dump's text) and ``reproducer`` (see :mod:`pypto.pipeline.reproducer`).

Every file is written atomically (``atomic_write_text``): never seen half written. The files are
written as the passes run, in the compile's own thread (one temporary file, one ``write``, one
rename each; a writer thread cost more CPU in hand-offs than it saved).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from pypto.core.dsl_printer import FunctionTextCache
from pypto.core.program import PassDumpLevel, Program
from pypto.diagnostics import Diagnostic
from pypto.errors import InvalidArgumentError
from pypto.passes.base import PyPTOPass
from pypto.utils.atomic import atomic_write_text

from .pass_runner import dump_file_name
from .reproducer import format_reproducer

DUMP_DIR = "passes_dump"
FRONTEND_FILE = dump_file_name(0, None, initial="frontend")
REPRODUCER_FILE = "reproducer"
LINE_LOCS_DIR = "report"
LINE_LOCS_FILE = "line_locs.json"
LINE_LOCS_VERSION = 1


def line_locs_json(files: dict[str, list[list[str]]]) -> str:
    """The text of ``line_locs.json``: ``{"version": 1, "locations": [loc, ...],
    "maps": [[[loc index, ...] per line], ...], "files": {dump file: map index}}``.
    A location is ``file:line:col``; identical maps (unchanged passes) are stored once."""
    locations: dict[str, int] = {}
    maps: list[list[list[int]]] = []
    map_index: dict[str, int] = {}
    out_files: dict[str, int] = {}
    by_object: dict[int, int] = {}  # id of a map list (``files`` holds it) -> its index: an unchanged pass's map
    for name, per_line in files.items():
        index = by_object.get(id(per_line))
        if index is None:
            encoded = [[locations.setdefault(loc, len(locations)) for loc in line] for line in per_line]
            key = json.dumps(encoded, separators=(",", ":"))
            if key not in map_index:
                map_index[key] = len(maps)
                maps.append(encoded)
            index = by_object[id(per_line)] = map_index[key]
        out_files[name] = index
    payload = {"version": LINE_LOCS_VERSION, "locations": list(locations), "maps": maps, "files": out_files}
    return json.dumps(payload, sort_keys=True, separators=(",", ":")) + "\n"


def dump_level(dump_passes: bool | int | PassDumpLevel | None) -> PassDumpLevel:
    """``dump_passes`` as a level: ``True`` -> CONCISE, falsy -> NONE."""
    if dump_passes is None or dump_passes is False:
        return PassDumpLevel.NONE
    if dump_passes is True:
        return PassDumpLevel.CONCISE
    try:
        return PassDumpLevel(int(dump_passes))
    except (TypeError, ValueError):
        levels = ", ".join(f"PassDumpLevel.{m.name}" for m in PassDumpLevel)
        raise InvalidArgumentError(f"dump_passes={dump_passes!r}: expected True, False or one of {levels}") from None


def display_path(filename: str) -> str:
    """A source path relative to the working directory when it is below it."""
    if not os.path.isabs(filename):
        return filename
    rel = os.path.relpath(filename)
    return filename if rel.startswith("..") else rel


def format_warning_log(d: Diagnostic) -> str:
    """One warning of a pass ``.log`` (pl-dsl.md §5): the diagnostic rendered
    with its path relative to the working directory; without a location or
    source line, ``<relpath>: warning: <msg> [<rule>]``."""
    return d.render(display_path)


class DumpWriter:
    """Writes the dumps of one compilation into ``<output_dir>/passes_dump``.

    Remembers the last text written (the next pass's input), which a failure
    writes as ``NN_failed_<Pass>.py``."""

    def __init__(self, output_dir: str | os.PathLike[str], level: PassDumpLevel = PassDumpLevel.CONCISE):
        self.directory = Path(output_dir) / DUMP_DIR
        self.level = level
        self.last_text: str | None = None
        self.last_locs: list[list[str]] = []
        self.line_locs: dict[str, list[list[str]]] = {}
        self._fresh: bool | None = None  # whether this writer created the dump folder (None: not yet made)
        self._texts = FunctionTextCache()  # functions a pass left unchanged are not printed again
        self._last_path: Path | None = None  # the file of the last dump written (``last_text``)

    @property
    def texts(self) -> FunctionTextCache | None:
        """The function texts of the dumps written so far (None when dumps are off)."""
        return self._texts if self.enabled else None

    @property
    def enabled(self) -> bool:
        return self.level is not PassDumpLevel.NONE

    def text(self, program: Program) -> str:
        """The dump text of a program at this writer's level."""
        text = program.as_python(self.level)
        return text if text.endswith("\n") else text + "\n"

    def text_locs(self, program: Program) -> tuple[str, list[list[str]]]:
        """The dump text and its line map (DSL locations per printed line)."""
        text, locs = program.as_python_locs(self.level, cache=self._texts)
        return (text, locs) if text.endswith("\n") else (text + "\n", locs)

    def _write_text(self, name: str, text: str, directory: Path | None = None) -> Path:
        """Write one file atomically; in a dump folder this writer created, each name is new."""
        if self._fresh is None:
            try:
                self.directory.mkdir(parents=True)
                self._fresh = True
            except FileExistsError:
                self._fresh = False
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
        path = (directory or self.directory) / name
        atomic_write_text(path, text, durable=False, new=self._fresh and directory is None)
        if directory is None and text is self.last_text:
            self._last_path = path
        return path

    def close(self) -> None:
        """Write ``line_locs.json`` (the dumps are already on disk)."""
        if self.line_locs:
            line_locs, self.line_locs = self.line_locs, {}
            self._write_text(LINE_LOCS_FILE, line_locs_json(line_locs), self.directory.parent / LINE_LOCS_DIR)

    def _write(self, name: str, program: Program) -> Path | None:
        if not self.enabled:
            return None
        self.last_text, self.last_locs = self.text_locs(program)
        self.line_locs[name] = self.last_locs
        return self._write_text(name, self.last_text)

    def write_frontend(self, program: Program) -> Path | None:
        """``00_frontend.py``: the program before any pass."""
        return self._write(FRONTEND_FILE, program)

    def write_after(self, index: int, pass_name: str, program: Program, unchanged: bool = False) -> Path | None:
        """``NN_after_<PassName>.py``: the program after pass number ``index``;
        ``unchanged`` (the pass is known to be the identity) reuses the last
        text instead of printing again."""
        if unchanged and self.enabled and self.last_text is not None:
            name = dump_file_name(index, pass_name)
            self.line_locs[name] = self.last_locs
            path = self._link_last(name)
            return path if path is not None else self._write_text(name, self.last_text)
        return self._write(dump_file_name(index, pass_name), program)

    def _link_last(self, name: str) -> Path | None:
        """``name`` as a hard link to the last dump written (the same bytes), in a dump folder this
        writer created (no old file of that name); None when that cannot be done here (then the text
        is written). A link is one system call where writing a file atomically is five (open, chmod,
        write, close, rename), and it appears whole, as a renamed file does: most passes of the
        default pipeline change nothing."""
        last = self._last_path
        if not self._fresh or last is None:
            return None
        path = self.directory / name
        try:
            os.link(last, path)
        except OSError:
            return None
        return path

    def write_log(self, index: int, pass_name: str, warnings: Sequence[Diagnostic]) -> Path | None:
        """``NN_after_<PassName>.log`` with the pass's warnings (none: no file)."""
        if not self.enabled or not warnings:
            return None
        text = "\n".join(format_warning_log(d) for d in warnings) + "\n"
        return self._write_text(dump_file_name(index, pass_name, suffix=".log"), text)

    def write_failure(
        self,
        index: int,
        pass_name: str,
        error: BaseException,
        remaining: Sequence[type[PyPTOPass]],
        options: dict[str, object],
    ) -> tuple[Path, Path] | None:
        """``NN_failed_<Pass>.py`` (the failing pass's input) and ``reproducer``."""
        if not self.enabled or self.last_text is None:
            return None
        failed = self._write_text(dump_file_name(index, pass_name, "failed"), self.last_text)
        repro_text = format_reproducer(self.last_text, remaining, index, error, options)
        repro = self._write_text(REPRODUCER_FILE, repro_text)
        return failed, repro

    def __call__(self, index: int, pass_cls: type[PyPTOPass], program: Program) -> None:
        """The PassManager callback (legacy form)."""
        self.write_after(index, pass_cls.PASS_NAME, program)
