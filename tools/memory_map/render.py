"""The report: the memory map as a payload inside the shared HTML report shell."""

from __future__ import annotations

from typing import Any

from pypto.reports import fields_of, render_viewer

from .model import Box, FunctionMap, MemoryMap, SpaceMap, Tile

PACKAGE = "pypto.tools.memory_map"


def display_path(mm: MemoryMap) -> str:
    """The dump's name as shown: at most ``<build>/passes_dump/<file>`` (no absolute
    path, so the same dump gives the same page wherever it lives)."""
    parts = mm.dump.parts
    return "/".join(parts[-3:]) if len(parts) >= 3 else "/".join(parts)


def _pass_name(mm: MemoryMap) -> str:
    stem = mm.dump.stem
    _, _, rest = stem.partition("_")
    return rest.removeprefix("after_") if rest else stem


def _tile(t: Tile) -> dict[str, Any]:
    return fields_of(t, skip=("space",))


def _box(b: Box) -> dict[str, Any]:
    return fields_of(b, skip=("space",), label=b.label, conflict=b.conflict, members=[_tile(t) for t in b.members])


def _space(s: SpaceMap) -> dict[str, Any]:
    return fields_of(s, overflow=s.overflow, boxes=[_box(b) for b in s.boxes])


def _function(f: FunctionMap) -> dict[str, Any]:
    return {
        "name": f.name,
        "type": f.func_type,
        "first": f.first_line,
        "last": f.last_line,
        "spaces": [_space(s) for s in f.spaces],
    }


def build_payload(mm: MemoryMap) -> dict[str, Any]:
    """The JSON the viewer reads (deterministic for a given dump and backend)."""
    return {
        "schema": 1,
        "title": f"Memory map: {mm.dump.name}",
        "dump": display_path(mm),
        "pass": _pass_name(mm),
        "backend": mm.backend,
        "backend_assumed": mm.backend_assumed,
        "backend_source": mm.backend_source,
        "lines": mm.lines,
        "short_lines": mm.short_lines,
        "functions": [_function(f) for f in mm.functions],
    }


def render_payload(payload: dict[str, Any]) -> str:
    """The HTML page for an already built payload."""
    return render_viewer(PACKAGE, payload, "what is on chip, where, and for how long")


def render_map(mm: MemoryMap) -> str:
    """The self-contained HTML report of ``mm``: same input, same bytes."""
    return render_payload(build_payload(mm))
