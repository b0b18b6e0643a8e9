"""Finding and validating the snapshots of a pass dump.

A dump is a directory of numbered snapshots, ``00_frontend.py`` then
``NN_after_<Pass>.py`` (or ``NN_*.mlir`` from ``pypto-opt --dump-passes``),
indices contiguous from 0, valid UTF-8. A same-stem ``.log`` is the pass's
warning text; an optional ``validation.json`` holds per-pass numeric verdicts
(schema in docs/ir_trace.md). Files without a numeric prefix are ignored.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.reports.cli import ReportError

FORMATS = ("auto", "py", "mlir")
FIRST_PY = ("00_frontend.py", "00_input.py")
VALIDATION_FILE = "validation.json"
_NUMBERED = {"py": re.compile(r"^(\d+)_(.*)\.py$"), "mlir": re.compile(r"^(\d+)_(.*)\.mlir$")}
_AFTER = re.compile(r"^after_(.+)$")
_FAILED = re.compile(r"^failed_(.+)$")
"""A failed compile's ``NN_failed_<Pass>.py`` (the failing pass's input): shown as that pass, marked failed."""


class IRTraceError(ReportError):
    """Bad dump contents or an I/O failure: reported as one line, exit 1."""


@dataclass(frozen=True)
class Snapshot:
    """One snapshot file: its position, pass name, text and warning text."""

    index: int
    file: str
    name: str
    text: str
    warning: str | None = None
    warning_file: str | None = None


@dataclass(frozen=True)
class TensorVerdict:
    """One tensor's numeric comparison after a pass."""

    name: str
    passed: bool
    max_abs_diff: float | None
    message: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The validation of one snapshot: ``pass``, ``fail`` or ``error``."""

    status: str
    tensors: tuple[TensorVerdict, ...] = ()
    message: str | None = None


@dataclass(frozen=True)
class Dump:
    """A validated dump: its snapshots in order and their verdicts by file name."""

    path: Path
    fmt: str
    snapshots: list[Snapshot]
    verdicts: dict[str, Verdict] = field(default_factory=dict)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise IRTraceError(f"cannot read {path}: {e.strerror or e}") from e


def _decode(path: Path) -> str:
    try:
        return _read(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise IRTraceError(f"{path.name} is not valid UTF-8") from e


def _list(directory: Path) -> list[str]:
    if not directory.exists():
        raise IRTraceError(f"input directory does not exist: {directory}")
    if not directory.is_dir():
        raise IRTraceError(f"input path is not a directory: {directory}")
    try:
        return sorted(os.listdir(directory))
    except OSError as e:
        raise IRTraceError(f"cannot read {directory}: {e.strerror or e}") from e


def detect_format(names: list[str], directory: Path) -> str:
    """``py`` or ``mlir``, from the numbered snapshot files present."""
    has = {fmt: any(rx.match(n) for n in names) for fmt, rx in _NUMBERED.items()}
    if has["py"] and has["mlir"]:
        raise IRTraceError(f"both .py and .mlir snapshots in {directory}; choose one with --format")
    return "mlir" if has["mlir"] else "py"


def _pass_name(fmt: str, index: int, label: str, name: str) -> str:
    m = _AFTER.match(label)
    if m:
        return m.group(1)
    failed = _FAILED.match(label)
    if failed:
        return f"{failed.group(1)} (failed)"
    if index == 0 or fmt == "mlir":
        return label
    raise IRTraceError(f"malformed snapshot name {name}; expected NN_after_PassName.py")


def _entries(directory: Path, names: list[str], fmt: str) -> list[tuple[int, str, str]]:
    """``(index, file, pass name)`` in order, checking names, duplicates and gaps."""
    found: dict[int, list[tuple[str, str]]] = {}
    for name in names:
        m = _NUMBERED[fmt].match(name)
        if m and (directory / name).is_file():
            index = int(m.group(1))
            found.setdefault(index, []).append((name, _pass_name(fmt, index, m.group(2), name)))
    for index, files in sorted(found.items()):
        if len(files) > 1:
            raise IRTraceError(f"duplicate snapshot index {index:02d}: {', '.join(f for f, _ in files)}")
    first = found.get(0)
    if fmt == "py" and (first is None or first[0][0] not in FIRST_PY):
        raise IRTraceError(f"missing 00_frontend.py in {directory}")
    if first is None:
        raise IRTraceError(f"missing snapshot 00_*.mlir in {directory}")
    ordered = sorted(found)
    for prev, cur in zip(ordered, ordered[1:], strict=False):
        if cur != prev + 1:
            raise IRTraceError(
                f"missing snapshot index {prev + 1:02d} between {found[prev][0][0]} and {found[cur][0][0]}"
            )
    return [(i, found[i][0][0], found[i][0][1]) for i in ordered]


DUMP_DIR = "passes_dump"


_CHUNK = re.compile(r"^chunk_\d+$")
"""A ``pypto-opt --split-input-file --dump-passes DIR`` chunk's folder: ``DIR/chunk_00``, ..."""


def _refuse_chunk_root(path: Path, names: list[str]) -> None:
    """A folder with no snapshot but ``chunk_NN`` folders is a split run's dump root: name a chunk (the
    report of one input), not 'missing 00_frontend.py'."""
    if any(_NUMBERED[f].match(n) for f in _NUMBERED for n in names):
        return
    chunks = [n for n in names if _CHUNK.match(n) and (path / n).is_dir()]
    if chunks:
        raise IRTraceError(
            f"{path} holds no snapshot but the chunk folders of a split input ({', '.join(chunks[:3])}"
            f"{', ...' if len(chunks) > 3 else ''}): give one of them, e.g. {path / chunks[0]}"
        )


def discover(directory: str | os.PathLike[str], fmt: str = "auto") -> Dump:
    """Read and validate the dump in ``directory`` (a dump, or a build directory with ``passes_dump/``)."""
    path = Path(directory)
    if (path / DUMP_DIR).is_dir():
        path = path / DUMP_DIR
    names = _list(path)
    _refuse_chunk_root(path, names)
    if fmt == "auto":
        fmt = detect_format(names, path)
    snapshots: list[Snapshot] = []
    name_set = set(names)
    for index, file, pass_name in _entries(path, names, fmt):
        text = _decode(path / file)
        stem = file.rsplit(".", 1)[0]
        log = next((n for n in (f"{stem}.log", f"{file}.log") if n in name_set and (path / n).is_file()), None)
        warning = _read(path / log).decode("utf-8", errors="replace") if log else None
        snapshots.append(Snapshot(index, file, pass_name, text, warning, log))
    verdicts = load_validation(path / VALIDATION_FILE, [s.file for s in snapshots])
    return Dump(path, fmt, snapshots, verdicts)


# ---- validation.json -------------------------------------------------------


def _bad(what: str) -> IRTraceError:
    return IRTraceError(f"invalid {VALIDATION_FILE}: {what}")


def _tensor(file: str, name: str, raw: Any) -> TensorVerdict:
    if not isinstance(raw, dict) or raw.get("status") not in ("pass", "fail"):
        raise _bad(f'{file}: tensor {name!r} needs "status": "pass" or "fail"')
    diff = raw.get("max_abs_diff")
    if diff is not None and (isinstance(diff, bool) or not isinstance(diff, int | float)):
        raise _bad(f'{file}: tensor {name!r} "max_abs_diff" must be a number or null')
    if isinstance(diff, float) and math.isnan(diff):
        diff = None
    message = raw.get("message")
    return TensorVerdict(name, raw["status"] == "pass", diff, message if isinstance(message, str) else None)


def _verdict(file: str, raw: Any) -> Verdict:
    if not isinstance(raw, dict):
        raise _bad(f"{file}: expected an object")
    tensors_raw = raw.get("tensors", {})
    if not isinstance(tensors_raw, dict):
        raise _bad(f'{file}: "tensors" must be an object')
    tensors = tuple(_tensor(file, n, t) for n, t in sorted(tensors_raw.items()))
    error = raw.get("error")
    if error is not None and not isinstance(error, str):
        raise _bad(f'{file}: "error" must be a string')
    if error is not None:
        status = "error"
    elif not tensors:
        raise _bad(f"{file}: no tensors and no error")
    else:
        status = "pass" if all(t.passed for t in tensors) else "fail"
    return Verdict(status, tensors, error)


def load_validation(path: Path, files: list[str]) -> dict[str, Verdict]:
    """Verdicts by snapshot file from ``validation.json`` (empty when absent)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(_decode(path))
    except json.JSONDecodeError as e:
        raise _bad(f"not JSON ({e.msg} at line {e.lineno})") from e
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("snapshots"), dict):
        raise _bad('expected {"version": 1, "snapshots": {...}}')
    known = set(files)
    verdicts: dict[str, Verdict] = {}
    for file, raw in sorted(data["snapshots"].items()):
        if file not in known:
            raise _bad(f"unknown snapshot {file}")
        verdicts[file] = _verdict(file, raw)
    return verdicts
