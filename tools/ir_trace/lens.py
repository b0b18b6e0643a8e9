"""The source-line lens: what became of each DSL line, read from a build directory.

Inputs (all optional except the line map; no line map, no lens):

- ``report/line_locs.json``: per dump line, the DSL locations of its ops
  (written by the dump writer beside ``passes_dump/``, schema in
  :func:`pypto.pipeline.dump.line_locs_json`);
- ``ptoas/*.pto``: ops with ``loc("file":line:col)``;
- ``ptoas/*.cpp``: C++ lines after a ``// loc: file:line:col`` comment;
- ``dfx_outputs/incore/<task>_<kernel>/instr_metrics.json``: per instruction its
  pipe, cycles and DSL location (``RunConfig(enable_incore_trace=True)``).

A DSL line is keyed ``<file name>:<line>`` (the base name: ``.pto`` files record
it so, and it keeps the report free of absolute paths). Payload shape::

    {"dsl": ["k.py:34", ...],                 # DSL lines, sorted
     "maps": [str | null per text],            # per text line ";"-joined, "."-joined dsl indices
     "pto": [{"file", "lines": [[line no, dsl idx, text, runs], ...]}],
     "cpp": [{"file", "lines": [[line no, dsl idx, text, runs], ...]}],
     "incore": null | {"runs": [{"dir", "kernel", "core", "task"}],
                       "cycles": {dsl idx: {pipe: cycles}}, "count": {dsl idx: instructions}}}
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .discovery import Dump, IRTraceError
from .highlight import tokenize_lines

LINE_LOCS = Path("report") / "line_locs.json"
INCORE_DIR = Path("dfx_outputs") / "incore"
INSTR_METRICS = "instr_metrics.json"
PIPES = ("MTE2", "MTE1", "CUBE", "VECTOR", "FIXPIPE", "MTE3", "SCALAR")
_PTO_LOC = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)\)')
_CPP_LOC = re.compile(r"^\s*// loc: (.+):(\d+):(\d+)\s*$")


def dsl_key(file: str, line: int | str) -> str:
    """The lens key of a DSL line: ``<base name>:<line>``."""
    return f"{file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}"


def loc_key(loc: str) -> str | None:
    """The lens key of a ``file:line:col`` location (None when malformed)."""
    parts = loc.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return dsl_key(parts[0], int(parts[1]))


def build_dir_of(dump: Dump) -> Path | None:
    """The build directory around a ``passes_dump/`` (None for a bare dump)."""
    path = dump.path.resolve()
    return path.parent if path.name == "passes_dump" else None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise IRTraceError(f"cannot read {path}: {e.strerror or e}") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise IRTraceError(f"invalid {path.name}: not JSON ({e})") from e


def _is_index(i: object, n: int) -> bool:
    """An index into a list of ``n`` (an int, not a bool, ``0 <= i < n``: ``-1`` is no location)."""
    return isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n


def load_line_locs(build: Path | None) -> dict[str, list[list[str]]] | None:
    """Per dump file, per line, its DSL locations; None without ``report/line_locs.json``."""
    path = build / LINE_LOCS if build is not None else None
    if path is None or not path.is_file():
        return None
    data = _json(path)

    def bad(what: str) -> IRTraceError:
        return IRTraceError(f"invalid {LINE_LOCS.name}: {what}")

    if not isinstance(data, dict) or data.get("version") != 1:
        raise bad('expected {"version": 1, "locations": [...], "maps": [...], "files": {...}}')
    locations, maps, files = data.get("locations"), data.get("maps"), data.get("files")
    if not isinstance(locations, list) or not all(isinstance(x, str) for x in locations):
        raise bad('"locations" must be a list of strings')
    if not isinstance(maps, list) or not isinstance(files, dict):
        raise bad('"maps" must be a list and "files" an object')
    out: dict[str, list[list[str]]] = {}
    for name, k in sorted(files.items()):
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(maps):
            raise bad(f"{name}: map index {k!r} out of range")
        per_line = maps[k]
        if not isinstance(per_line, list):
            raise bad(f"map {k} must be a list")
        n = len(locations)
        if not all(isinstance(line, list) and all(_is_index(i, n) for i in line) for line in per_line):
            raise bad(f"map {k}: location indices must be lists of valid indices")
        out[name] = [[locations[i] for i in line] for line in per_line]
    return out


class _Keys:
    """DSL keys collected while reading, numbered once all are known (sorted: determinism)."""

    def __init__(self) -> None:
        self.keys: set[str] = set()

    def add(self, key: str | None) -> str | None:
        if key is not None:
            self.keys.add(key)
        return key

    def index(self) -> dict[str, int]:
        def order(k: str) -> tuple[str, int]:
            file, _, line = k.rpartition(":")
            return file, int(line)

        return {k: i for i, k in enumerate(sorted(self.keys, key=order))}


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise IRTraceError(f"cannot read {path}: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise IRTraceError(f"{path} is not valid UTF-8") from e


def _pto_lines(text: str, keys: _Keys) -> list[tuple[int, str, str]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        found = _PTO_LOC.findall(line)
        if found:
            file, ln, _ = found[-1]
            out.append((n, keys.add(dsl_key(file, int(ln))) or "", line.strip()))
    return out


def _cpp_lines(text: str, keys: _Keys) -> list[tuple[int, str, str]]:
    out = []
    current: str | None = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _CPP_LOC.match(line)
        if m:
            current = keys.add(dsl_key(m.group(1), int(m.group(2))))
            continue
        stripped = line.strip()
        if line.startswith(("}", "#")):
            current = None  # end of a function or of its core section
        if not stripped or stripped in ("{", "}") or stripped.startswith("#"):
            continue
        if current is not None:
            out.append((n, current, line.strip()))
    return out


def _files(build: Path, pattern: str) -> list[Path]:
    return sorted(p for p in build.glob(pattern) if p.is_file())


def lens_inputs(build: Path) -> list[Path]:
    """Every file of ``build`` the lens reads (an output path must name none of them)."""
    root = build / INCORE_DIR
    incore = sorted(root.glob(f"*/{INSTR_METRICS}")) if root.is_dir() else []
    cpp = _files(build, "ptoas/*.cpp") + _files(build, "kernels/*/*.cpp")
    return [build / LINE_LOCS, *_files(build, "ptoas/*.pto"), *cpp, *incore]


def _is_count(n: object) -> bool:
    """A cycle count: a number (not a bool), finite (JSON's ``NaN`` / ``Infinity``, ``1e400`` are not) and >= 0."""
    return isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n) and n >= 0


def _incore(build: Path, keys: _Keys) -> tuple[list[dict[str, Any]], list[tuple[str, str, int]]] | None:
    """The in-core runs and ``(dsl key, pipe, cycles)`` per instruction; None without records."""
    root = build / INCORE_DIR
    paths = sorted(root.glob(f"*/{INSTR_METRICS}")) if root.is_dir() else []
    if not paths:
        return None
    runs: list[dict[str, Any]] = []
    cycles: list[tuple[str, str, int]] = []
    for path in paths:
        data = _json(path)
        where = f"{path.parent.name}/{INSTR_METRICS}"
        if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("instructions"), list):
            raise IRTraceError(f'invalid {where}: expected {{"version": 1, "instructions": [...]}}')
        runs.append(
            {
                "dir": path.parent.name,
                "kernel": data.get("kernel"),
                "core": data.get("core"),
                "task": data.get("task_id"),
            }
        )
        for k, ins in enumerate(data["instructions"]):
            if not isinstance(ins, dict):
                raise IRTraceError(f"invalid {where}: instruction {k} is not an object")
            pipe, n, loc = ins.get("pipe"), ins.get("cycles"), ins.get("dsl_loc")
            if not isinstance(pipe, str) or not _is_count(n):
                raise IRTraceError(
                    f'invalid {where}: instruction {k} needs a "pipe" string and numeric "cycles" (finite, >= 0)'
                )
            if loc is not None and not isinstance(loc, str):
                raise IRTraceError(f'invalid {where}: instruction {k} "dsl_loc" must be a string or null')
            key = keys.add(loc_key(loc)) if loc else None
            if key is not None:
                cycles.append((key, pipe, int(n)))
    return runs, cycles


def _encode_map(per_line: Sequence[Sequence[str]], index: dict[str, int]) -> str:
    parts = []
    for locs in per_line:
        ids = sorted({index[k] for k in (loc_key(x) for x in locs) if k is not None and k in index})
        parts.append(".".join(map(str, ids)))
    return ";".join(parts)


def build_lens(dump: Dump, pass_texts: Sequence[int], n_texts: int) -> dict[str, Any] | None:
    """The lens payload of ``dump`` (``pass_texts``: the text index of each snapshot)."""
    build = build_dir_of(dump)
    line_locs = load_line_locs(build)
    if line_locs is None or build is None:
        return None
    keys = _Keys()
    for per_line in line_locs.values():
        for locs in per_line:
            for loc in locs:
                keys.add(loc_key(loc))
    pto = [(p, _pto_lines(_read_text(p), keys)) for p in _files(build, "ptoas/*.pto")]
    cpp_paths = _files(build, "ptoas/*.cpp") or _files(build, "kernels/*/*.cpp")
    cpp = [(p, _cpp_lines(_read_text(p), keys)) for p in cpp_paths]
    incore = _incore(build, keys)
    index = keys.index()

    maps: list[str | None] = [None] * n_texts
    for snap, ti in zip(dump.snapshots, pass_texts, strict=True):
        per_line = line_locs.get(snap.file)
        if maps[ti] is None and per_line is not None and len(per_line) == len(snap.text.splitlines()):
            maps[ti] = _encode_map(per_line, index)

    def section(found: list[tuple[Path, list[tuple[int, str, str]]]], fmt: str) -> list[dict[str, Any]]:
        out = []
        for path, lines in found:
            runs = tokenize_lines([t for _, _, t in lines], fmt)
            rows = [[n, index[k], t, r] for (n, k, t), r in zip(lines, runs, strict=True)]
            out.append({"file": f"{path.parent.name}/{path.name}", "lines": rows})
        return out

    incore_json: dict[str, Any] | None = None
    if incore is not None:
        runs, per_ins = incore
        cyc: dict[str, dict[str, int]] = {}
        count: dict[str, int] = {}
        for key, pipe, n in per_ins:
            i = str(index[key])
            cyc.setdefault(i, {})
            cyc[i][pipe] = cyc[i].get(pipe, 0) + n
            count[i] = count.get(i, 0) + 1
        incore_json = {"runs": runs, "cycles": cyc, "count": count}
    return {
        "dsl": list(index),
        "maps": maps,
        "pto": section(pto, "mlir"),
        "cpp": section(cpp, "cpp"),
        "incore": incore_json,
        "pipes": list(PIPES),
    }
