"""``python -m pypto.tools.deps_viewer DEPS_JSON [--func-names FILE] [-o PATH]``: the text view of a
``deps.json`` (runtime-dfx-formats.md §4).

Writes ``deps_viewer.txt`` next to the input (atomically) and prints its path::

    SUMMARY
      source_deps_json: <path>
      tasks: N                 (ids in tasks[] and on edges)
      unique_task_edges: N     (distinct (pred, succ) pairs)
      annotated_edges: N       (edge rows, duplicates included)
      tensors: N
      perf_sidecar: yes|no     (a sibling chip_swimlane_records.json was read: core_type per task)
      func_name_map: yes|no    (some task's name resolved from --func-names / the newest name_map*.json)

    TASK INDEX
    TASK <id> kind=submit|dummy|alloc func_id=[a,b,c]|none [SPMD block num = N] fanin=X fanout=Y

    === TASK <id> kind=... func_id=... ===
    FANIN n
      <- <id>
    FANOUT n
      -> <id>

``<id>`` is the local id, or ``(ring, local)`` for every task once one is off ring 0. kind: ``submit``
has a kernel id >= 0, ``dummy`` has none, ``alloc`` is an edge end not listed in ``tasks``.

Exit codes: 0 written, 1 a bad input or I/O failure (one line ``deps_viewer: error: <file>: <what>``),
2 argument errors. The HTML view (Graphviz) is not implemented.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pypto.utils.atomic import atomic_write_text

PROG = "deps_viewer"
OUTPUT_NAME = "deps_viewer.txt"


class DepsViewerError(Exception):
    """A bad input or an I/O failure: one line, exit 1."""


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DepsViewerError(f"{path}: cannot read: {e.strerror or e}") from e
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DepsViewerError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from e


def _u64(value: Any, where: str, path: Path) -> int:
    """A uint64 written as a JSON string (a plain integer is accepted too)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise DepsViewerError(f"{path}: {where}: expected a uint64 as a JSON string, got {json.dumps(value)}")
    try:
        v = int(value)
    except ValueError:
        raise DepsViewerError(f"{path}: {where}: expected a uint64 as a JSON string, got {json.dumps(value)}") from None
    if not 0 <= v < 1 << 64:
        raise DepsViewerError(f"{path}: {where}: {v} is not a uint64")
    return v


def _list(doc: dict[str, Any], key: str, path: Path, required: bool) -> list[Any]:
    if key not in doc:
        if required:
            raise DepsViewerError(f"{path}: expected a top-level '{key}' list")
        return []
    if not isinstance(doc[key], list):
        raise DepsViewerError(f"{path}: '{key}': expected a list, got {type(doc[key]).__name__}")
    return doc[key]


def load_deps(path: Path) -> tuple[dict[int, dict[str, Any]], list[tuple[int, int]], int, int]:
    """``(tasks by raw id, edge rows as (pred, succ), tensor count, annotated edge count)``; a
    :class:`DepsViewerError` names the file and the entry that is wrong."""
    doc = _load_json(path)
    if not isinstance(doc, dict):
        raise DepsViewerError(f"{path}: expected an object {{tasks, tensors, edges}}, got {type(doc).__name__}")
    tasks: dict[int, dict[str, Any]] = {}
    for i, t in enumerate(_list(doc, "tasks", path, False)):
        if not isinstance(t, dict):
            raise DepsViewerError(f"{path}: tasks[{i}]: expected an object")
        if "task_id" not in t:
            raise DepsViewerError(f"{path}: tasks[{i}]: missing 'task_id'")
        kid = t.get("kernel_ids", [-1, -1, -1])
        if not isinstance(kid, list) or not all(isinstance(k, int) and not isinstance(k, bool) for k in kid):
            raise DepsViewerError(f"{path}: tasks[{i}].kernel_ids: expected a list of integers [aic,aiv0,aiv1]")
        bn = t.get("block_num", 1)
        if not isinstance(bn, int) or isinstance(bn, bool):
            raise DepsViewerError(f"{path}: tasks[{i}].block_num: expected an integer")
        tasks[_u64(t["task_id"], f"tasks[{i}].task_id", path)] = t
    rows: list[tuple[int, int]] = []
    for i, e in enumerate(_list(doc, "edges", path, True)):
        if not isinstance(e, dict):
            raise DepsViewerError(f"{path}: edges[{i}]: expected an object")
        for key in ("pred", "succ"):
            if key not in e:
                raise DepsViewerError(f"{path}: edges[{i}]: missing '{key}'")
        rows.append((_u64(e["pred"], f"edges[{i}].pred", path), _u64(e["succ"], f"edges[{i}].succ", path)))
    tensors = _list(doc, "tensors", path, False)
    return tasks, rows, len(tensors), len(rows)


def _slots(task: dict[str, Any] | None) -> list[int]:
    kid = list((task or {}).get("kernel_ids") or [])[:3]
    return kid + [-1] * (3 - len(kid))


def find_name_map(deps_path: Path) -> Path | None:
    """The newest ``name_map*.json`` beside ``deps_path`` (ties: the last name)."""
    found = sorted(deps_path.parent.glob("name_map*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    return found[-1] if found else None


def load_func_names(path: Path) -> dict[int, str]:
    """func_id -> name from a §1 name map (``callable_id_to_name``) or a flat ``{"<id>": "<name>"}``."""
    doc = _load_json(path)
    table = doc.get("callable_id_to_name", doc) if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        raise DepsViewerError(f'{path}: expected a name map {{"callable_id_to_name": {{"<func_id>": "<name>"}}}}')
    out: dict[int, str] = {}
    for k, v in table.items():
        try:
            out[int(k)] = str(v)
        except ValueError:
            raise DepsViewerError(f"{path}: callable_id_to_name: key {json.dumps(k)} is not a func_id") from None
    return out


def load_core_types(deps_path: Path) -> dict[int, str] | None:
    """Raw task id -> ``aic`` / ``aiv`` / ``mix`` from a sibling ``chip_swimlane_records.json`` (None
    when there is none or it cannot be read: a warning, not an error)."""
    path = deps_path.parent / "chip_swimlane_records.json"
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        types = doc["metadata"]["core_types"]
        seen: dict[int, set[str]] = {}
        for row in doc["aicore_tasks"]:
            seen.setdefault(int(row[1]), set()).add(str(types[int(row[0])]))
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        print(f"{PROG}: warning: {path}: not read ({type(e).__name__}: {e})", file=sys.stderr)
        return None
    return {tid: (next(iter(s)) if len(s) == 1 else "mix") for tid, s in seen.items()}


def render_text(deps_path: Path, func_names: dict[int, str] | None = None) -> str:
    """The text view of ``deps_path`` (see the module docstring)."""
    tasks, rows, n_tensors, n_annotated = load_deps(deps_path)
    core_types = load_core_types(deps_path)
    pairs = sorted(set(rows))
    nodes = sorted(set(tasks) | {p for p, _ in pairs} | {s for _, s in pairs})
    multi_ring = any((n >> 32) & 0xFF for n in nodes)

    def fmt(n: int) -> str:
        ring, local = (n >> 32) & 0xFF, n & 0xFFFFFFFF
        return f"({ring}, {local})" if multi_ring else str(local)

    fanin: dict[int, set[int]] = {n: set() for n in nodes}
    fanout: dict[int, set[int]] = {n: set() for n in nodes}
    for p, s in pairs:
        fanin[s].add(p)
        fanout[p].add(s)
    named = bool(func_names) and any(
        k >= 0 and k in func_names for t in tasks.values() for k in _slots(t)
    )  # fmt: skip

    def labels(n: int) -> str:
        t = tasks.get(n)
        slots = _slots(t)
        if t is None:
            kind, fid = "alloc", "func_id=none"
        elif any(k >= 0 for k in slots):
            kind, fid = "submit", "func_id=[" + ",".join(str(k) for k in slots) + "]"
        else:
            kind, fid = "dummy", "func_id=none"
        block = int(t.get("block_num", 1)) if t is not None else 1
        spmd = f" SPMD block num = {block}" if block > 1 else ""
        return f"kind={kind} {fid}{spmd}"

    lines = [
        "SUMMARY",
        f"  source_deps_json: {deps_path}",
        f"  tasks: {len(nodes)}",
        f"  unique_task_edges: {len(pairs)}",
        f"  annotated_edges: {n_annotated}",
        f"  tensors: {n_tensors}",
        f"  perf_sidecar: {'yes' if core_types is not None else 'no'}",
        f"  func_name_map: {'yes' if named else 'no'}",
        "",
        "TASK INDEX",
    ]
    lines += [f"TASK {fmt(n)} {labels(n)} fanin={len(fanin[n])} fanout={len(fanout[n])}" for n in nodes]
    for n in nodes:
        lines += ["", f"=== TASK {fmt(n)} {labels(n)} ===", f"FANIN {len(fanin[n])}"]
        lines += [f"  <- {fmt(p)}" for p in sorted(fanin[n])]
        lines.append(f"FANOUT {len(fanout[n])}")
        lines += [f"  -> {fmt(s)}" for s in sorted(fanout[n])]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description="The text view of a dep_gen deps.json task graph.")
    p.add_argument("deps_json", metavar="DEPS_JSON", help="dfx_outputs/deps.json")
    p.add_argument("--func-names", metavar="FILE", help="name map (default: the newest sibling name_map*.json)")
    p.add_argument("-o", "--output", metavar="PATH", help=f"output (default: {OUTPUT_NAME} beside DEPS_JSON)")
    return p


def run(args: argparse.Namespace) -> Path:
    """Write the text view; returns its path."""
    deps = Path(args.deps_json)
    if not deps.is_file():
        raise DepsViewerError(f"{deps}: no such file (expected a deps.json)")
    names_path = Path(args.func_names) if args.func_names else find_name_map(deps)
    names = load_func_names(names_path) if names_path is not None else None
    text = render_text(deps, names)
    out = Path(args.output) if args.output else deps.parent / OUTPUT_NAME
    try:
        atomic_write_text(out, text)
    except OSError as e:
        raise DepsViewerError(f"{out}: cannot write: {e.strerror or e}") from e
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """The command: 0 written (its path printed), 1 a bad input, 2 bad arguments."""
    args = build_parser().parse_args(argv)
    try:
        out = run(args)
    except DepsViewerError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
