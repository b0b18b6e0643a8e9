"""``python -m pypto.tools.deps_viewer DEPS_JSON [--func-names FILE] [--format text|html] [--engine E]
[--direction LR|TB|RL|BT] [--show-tensor-info] [--edge-mode MODE] [-o PATH]``: views of a ``deps.json``
(runtime-dfx-formats.md §4).

Writes ``deps_viewer[_<edge-mode>].txt`` (or ``.html``) next to the input (or to ``-o PATH``; a missing
folder is refused), atomically, and prints its path; ``-o -`` writes the view to stdout.

``--edge-mode`` (upstream's): ``full`` (default) every edge; ``reduced`` a transitive reduction (a pair is
dropped when a longer path implies it; a pair with a ``creator`` row is kept); ``omitted`` only the pairs
``reduced`` drops; ``reduced_dataflow`` / ``omitted_dataflow`` the same, but a redundant ``creator`` pair
is dropped only when its ``INOUT`` bytes provably flow directly from an earlier and to a later ``INOUT``
of the same creator (:func:`select_edges`). A reducing mode lists the dropped pairs on stdout before the
path; on a cyclic graph it warns and shows every edge (``deps_viewer.*``). The text view shows only the
selected pairs (and their rows); the HTML view lays out every edge and draws the unselected ones in the
page's background colour, below the selected ones. The text view::

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
2 argument errors.

The HTML view (``--format html``) is a self-contained pan/zoom page around the SVG Graphviz lays out
(Debian ``graphviz`` and the PyPI ``graphviz`` package): AIC blue box, AIV orange ellipse, mix green
diamond, alloc grey note, SPMD red border and ``xN``; labels ``id · name ↓fanin ↑fanout``; explicit-only
edges dashed. Core types come from the sidecar, else from ``kernel_ids``. The legend bar sits above the
graph's area, never over it.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pypto.reports.cli import ReportError, output_path, report_main, write_report
from pypto.runtime.dfx.trace import DepsFacts, TraceInputError, deps_facts, read_json_file
from pypto.target.dtypes import BY_NAME
from pypto.utils.cli import check_output_not_input, read_input_text

PROG = "deps_viewer"
OUTPUT_NAME = "deps_viewer.txt"


class DepsViewerError(ReportError):
    """A bad input or an I/O failure: one line, exit 1."""


def _load_json(path: Path, what: str = "deps.json") -> Any:
    try:
        text = read_input_text(path, what)
    except OSError as e:
        raise DepsViewerError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DepsViewerError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None


class DepsFormatError(ValueError):
    """A parsed deps.json that does not have §4's shape: the message names the field (not the file)."""


def _u64(value: Any, where: str) -> int:
    """A uint64 written as a JSON string (a plain integer is accepted too)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise DepsFormatError(f"{where}: expected a uint64 as a JSON string, got {json.dumps(value)}")
    try:
        v = int(value)
    except ValueError:
        raise DepsFormatError(f"{where}: expected a uint64 as a JSON string, got {json.dumps(value)}") from None
    if not 0 <= v < 1 << 64:
        raise DepsFormatError(f"{where}: {v} is not a uint64")
    return v


def _list(doc: dict[str, Any], key: str, required: bool) -> list[Any]:
    if key not in doc:
        if required:
            raise DepsFormatError(f"expected a top-level '{key}' list")
        return []
    if not isinstance(doc[key], list):
        raise DepsFormatError(f"'{key}': expected a list, got {type(doc[key]).__name__}")
    return doc[key]


@dataclass
class DepsGraph:
    """A checked deps.json: tasks by raw id, the edge rows (``(pred, succ)`` and the row itself) and
    the tensors."""

    tasks: dict[int, dict[str, Any]]
    rows: list[tuple[int, int, dict[str, Any]]]
    tensors: list[Any]
    kept_nodes: list[int] | None = None
    """The nodes of the graph these rows were selected from (:meth:`select`)."""

    @cached_property
    def pairs(self) -> list[tuple[int, int]]:
        """The distinct (pred, succ) pairs, sorted (once: the rows do not change)."""
        return sorted({(p, s) for p, s, _ in self.rows})

    @cached_property
    def nodes(self) -> list[int]:
        """Every task id: listed in tasks[] or on an edge (of the whole graph, after :meth:`select`; once)."""
        if self.kept_nodes is not None:
            return self.kept_nodes
        return sorted(set(self.tasks) | {p for p, _, _ in self.rows} | {s for _, s, _ in self.rows})

    def select(self, pairs: set[tuple[int, int]]) -> DepsGraph:
        """The graph with only the rows of ``pairs``; every task stays a node."""
        return DepsGraph(self.tasks, [r for r in self.rows if (r[0], r[1]) in pairs], self.tensors, self.nodes)


def check_deps(doc: Any) -> DepsGraph:
    """The graph of a parsed deps.json ``doc``: tasks by raw id (``kernel_ids`` a list of integers, ``block_num``
    an integer), edge rows with uint64 ``pred`` / ``succ``; else a :class:`DepsFormatError` naming the field
    (every deps.json reader's check: :func:`load_deps`, the swimlane converter's)."""
    if not isinstance(doc, dict):
        raise DepsFormatError(f"expected an object {{tasks, tensors, edges}}, got {type(doc).__name__}")
    tasks: dict[int, dict[str, Any]] = {}
    for i, t in enumerate(_list(doc, "tasks", False)):
        if not isinstance(t, dict):
            raise DepsFormatError(f"tasks[{i}]: expected an object")
        if "task_id" not in t:
            raise DepsFormatError(f"tasks[{i}]: missing 'task_id'")
        kid = t.get("kernel_ids", [-1, -1, -1])
        if not isinstance(kid, list) or not all(isinstance(k, int) and not isinstance(k, bool) for k in kid):
            raise DepsFormatError(f"tasks[{i}].kernel_ids: expected a list of integers [aic,aiv0,aiv1]")
        bn = t.get("block_num", 1)
        if not isinstance(bn, int) or isinstance(bn, bool):
            raise DepsFormatError(f"tasks[{i}].block_num: expected an integer")
        tasks[_u64(t["task_id"], f"tasks[{i}].task_id")] = t
    rows: list[tuple[int, int, dict[str, Any]]] = []
    for i, e in enumerate(_list(doc, "edges", True)):
        if not isinstance(e, dict):
            raise DepsFormatError(f"edges[{i}]: expected an object")
        for key in ("pred", "succ"):
            if key not in e:
                raise DepsFormatError(f"edges[{i}]: missing '{key}'")
        rows.append((_u64(e["pred"], f"edges[{i}].pred"), _u64(e["succ"], f"edges[{i}].succ"), e))
    return DepsGraph(tasks, rows, _list(doc, "tensors", False))


def load_deps(path: Path) -> DepsGraph:
    """The checked contents of ``path`` (:func:`check_deps`); a :class:`DepsViewerError` names the file and the
    entry that is wrong."""
    doc = _load_json(path)
    try:
        return check_deps(doc)
    except DepsFormatError as e:
        raise DepsViewerError(f"{path}: {e}") from None


# ---- --edge-mode: which edges a view shows -------------------------------------------------------

EDGE_MODES = ("full", "reduced", "omitted", "reduced_dataflow", "omitted_dataflow")
"""upstream's ``--edge-mode`` values: every edge (the default); the edges a transitive reduction keeps (a
``creator`` pair is kept: it holds a tensor's lifetime); the redundant ones it drops (the complement); and
the ``_dataflow`` pair of those, which drop a redundant ``creator`` pair only on byte-level proof that its
``INOUT`` stays within one reuse generation."""

MAX_REGION_INTERVALS = 10_000
"""The most byte intervals a strided view is expanded into for the dataflow proof; a larger view proves
nothing (its edge is kept)."""

_UPSTREAM_DTYPES = {"FLOAT32": "FP32", "FLOAT16": "FP16", "BFLOAT16": "BF16"}
"""upstream's deps.json spellings of the dtypes it names otherwise than PyPTO."""

Intervals = tuple[tuple[int, int], ...]


def redundant_pairs(graph: DepsGraph, protect_creator: bool = True) -> set[tuple[int, int]] | None:
    """The pairs ``(u, v)`` of a transitive reduction drops: ``v`` is reached from ``u`` by a longer path too.
    ``protect_creator``: a pair with a ``creator`` row is never one. None when the graph has a cycle."""
    nodes, pairs = graph.nodes, graph.pairs
    succ: dict[int, list[int]] = {n: [] for n in nodes}
    indeg = dict.fromkeys(nodes, 0)
    for u, v in pairs:
        succ[u].append(v)
        indeg[v] += 1
    order = [n for n in nodes if indeg[n] == 0]  # Kahn's order; a node left out is on a cycle
    for n in order:
        for m in succ[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                order.append(m)
    if len(order) != len(nodes):
        return None
    bit = {n: 1 << i for i, n in enumerate(order)}
    reach: dict[int, int] = {}  # node -> the nodes it reaches, as a bit set (descendants first)
    protected = {(p, s) for p, s, r in graph.rows if r.get("source") == "creator"} if protect_creator else set()
    redundant: set[tuple[int, int]] = set()
    for u in reversed(order):
        further = 0  # what u reaches through one of its successors
        for v in succ[u]:
            further |= reach[v]
        reach[u] = further | sum(bit[v] for v in succ[u])
        redundant.update((u, v) for v in succ[u] if further & bit[v] and (u, v) not in protected)
    return redundant


def _merged(intervals: Any) -> Intervals:
    """Sorted half-open byte intervals with overlaps and neighbours joined (empty ones dropped)."""
    out: list[tuple[int, int]] = []
    for begin, end in sorted(intervals):
        if begin >= end:
            continue
        if out and begin <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((begin, end))
    return tuple(out)


def _intersection(a: Intervals, b: Intervals) -> Intervals:
    """The bytes in both sorted interval lists."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        begin, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if begin < end:
            out.append((begin, end))
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _covers(parts: list[tuple[int, int]], whole: Intervals) -> bool:
    """Whether ``parts`` hold every byte of ``whole``."""
    return _intersection(whole, _merged(parts)) == whole


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _elem_bytes(dtype: Any) -> int | None:
    name = str(dtype).upper()
    row = BY_NAME.get(_UPSTREAM_DTYPES.get(name, name))
    return row.bits // 8 if row is not None and row.bits % 8 == 0 else None


def byte_region(
    row: dict[str, Any], arg: dict[str, Any], tensors: dict[int, dict[str, Any]], role: str = "consumer"
) -> tuple[int, Intervals] | None:
    """``(buffer_addr, byte intervals)`` of the view an edge row's ``role`` side (``consumer``/``producer``)
    names: the row's ``<role>_{shape,start_offset,strides,dtype}``, else the task argument's fields, over its
    tensor's buffer. None when a field is missing or odd, the view reinterprets the buffer's dtype, lies out
    of the buffer, or is too strided to expand (:data:`MAX_REGION_INTERVALS`)."""
    tensor = tensors.get(_int(row.get("tensor_id", arg.get("tensor_id"))) or -1)
    if tensor is None:
        return None
    addr, numel = _int(tensor.get("buffer_addr")), _int(tensor.get("buffer_numel"))
    start = _int(row.get(f"{role}_start_offset", arg.get("start_offset")))
    shape, strides = row.get(f"{role}_shape", arg.get("shape")), row.get(f"{role}_strides", arg.get("strides"))
    if addr is None or numel is None or start is None or min(addr, numel, start) < 0:
        return None
    if not isinstance(shape, list) or not isinstance(strides, list) or not shape or len(shape) != len(strides):
        return None
    dims, steps = [_int(d) for d in shape], [_int(d) for d in strides]
    if any(d is None or d <= 0 for d in dims + steps):
        return None
    dtype = str(row.get(f"{role}_dtype", arg.get("dtype", tensor.get("dtype")))).upper()
    size = _elem_bytes(dtype)
    if size is None or dtype != str(tensor.get("dtype", dtype)).upper():  # a reinterpreting view: no proof
        return None
    inner, block = len(dims), 1  # the contiguous innermost dimensions make one interval per outer index
    while inner > 0 and steps[inner - 1] == block:
        inner -= 1
        block *= dims[inner]
    count = 1
    for d in dims[:inner]:
        count *= d
        if count > MAX_REGION_INTERVALS:
            return None
    offsets = [start]
    for d, step in zip(dims[:inner], steps[:inner], strict=True):
        offsets = [o + i * step for o in offsets for i in range(d)]
    region = _merged((addr + o * size, addr + (o + block) * size) for o in offsets)
    if not region or region[0][0] < addr or region[-1][1] > addr + numel * size:
        return None
    return addr, region


def _dataflow_removable(graph: DepsGraph, candidates: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Of the structurally redundant ``candidates``, those the dataflow modes drop: every pair without a
    ``creator`` row, and a ``creator`` pair whose every creator row is an exactly known ``INOUT`` region each
    byte of which the same creator's tensor passes through by direct tensormap dataflow both from an earlier
    writer and to a later ``INOUT``. An ``OUTPUT_EXISTING`` (a reuse boundary) or missing evidence keeps it."""
    tensors = {t: d for d in graph.tensors if isinstance(d, dict) and (t := _int(d.get("tensor_id"))) is not None}

    def arg_of(task: int, idx: Any) -> dict[str, Any]:
        args = (graph.tasks.get(task) or {}).get("args")
        found = (
            [a for a in args if isinstance(a, dict) and _int(a.get("idx")) == _int(idx)]
            if isinstance(args, list)
            else []
        )
        return found[0] if found else {}

    creators: dict[tuple[int, int], list[dict[str, Any] | None]] = {}  # pair -> a record per creator row
    by_owner: dict[tuple[int, int, int], list[dict[str, Any]]] = {}  # (owner, task, buffer) -> records
    into: dict[tuple[int, Any, int], list[tuple[int, Intervals]]] = {}  # (task, arg, buffer) -> (pred, overlap)
    out_of: dict[tuple[int, int], list[tuple[int, Any, Intervals]]] = {}  # (task, buffer) -> (succ, arg, overlap)
    for p, s, row in graph.rows:
        source = row.get("source")
        if source not in ("creator", "tensormap"):
            continue
        arg = arg_of(s, row.get("arg"))
        if source == "creator":
            region = byte_region(row, arg, tensors) if arg.get("type") in ("INOUT", "OUTPUT_EXISTING") else None
            record = None
            if region is not None:
                record = {"arg": _int(row.get("arg")), "type": arg["type"], "buffer": region[0], "bytes": region[1]}
                by_owner.setdefault((p, s, region[0]), []).append(record)
            creators.setdefault((p, s), []).append(record)
        elif arg.get("type") == "INOUT":
            mine, theirs = byte_region(row, arg, tensors), byte_region(row, {}, tensors, "producer")
            if mine is None or theirs is None or mine[0] != theirs[0]:
                continue
            overlap = _intersection(mine[1], theirs[1])
            if overlap:
                into.setdefault((s, _int(row.get("arg")), mine[0]), []).append((p, overlap))
                out_of.setdefault((p, mine[0]), []).append((s, _int(row.get("arg")), overlap))

    def proven(owner: int, task: int, record: dict[str, Any]) -> bool:
        buf, need = record["buffer"], record["bytes"]
        earlier = [
            part
            for pred, overlap in into.get((task, record["arg"], buf), [])
            for peer in by_owner.get((owner, pred, buf), [])
            for part in _intersection(overlap, peer["bytes"])
        ]
        later = [
            part
            for succ, arg, overlap in out_of.get((task, buf), [])
            for peer in by_owner.get((owner, succ, buf), [])
            if peer["arg"] == arg and peer["type"] == "INOUT"
            for part in _intersection(overlap, peer["bytes"])
        ]
        return _covers(earlier, need) and _covers(later, need)

    removable = set()
    for owner, task in candidates:
        records = creators.get((owner, task))
        if records is None or all(r is not None and r["type"] == "INOUT" and proven(owner, task, r) for r in records):
            removable.add((owner, task))
    return removable


@dataclass
class EdgeSelection:
    """What an ``--edge-mode`` shows: ``graph`` (its rows narrowed for the text view), the pairs the HTML
    view draws in the page's background colour (laid out, not shown), the file name's stem, the lines
    that report the reduction (stdout), a warning (stderr) and the mode it applied (``full`` when a cyclic
    graph was shown whole)."""

    graph: DepsGraph
    hidden: set[tuple[int, int]]
    stem: str
    report: list[str]
    warning: str | None = None
    mode: str = "full"


def select_edges(graph: DepsGraph, mode: str, html: bool) -> EdgeSelection:
    """The edges ``mode`` (:data:`EDGE_MODES`) selects; a cyclic graph is shown whole (with a warning line)."""
    if mode == "full":
        return EdgeSelection(graph, set(), "deps_viewer", [])
    dataflow = mode.endswith("_dataflow")
    redundant = redundant_pairs(graph, protect_creator=not dataflow)
    if redundant is None:
        warning = f"warning: dependency graph has a cycle; transitive reduction skipped, emitting full graph (--edge-mode {mode} ignored)"
        return EdgeSelection(graph, set(), "deps_viewer", [], warning)
    if dataflow:
        redundant = _dataflow_removable(graph, redundant)
    pairs = graph.pairs
    fmt = _formatter(graph.nodes)
    removed = [pr for pr in pairs if pr in redundant]
    kept = set(pairs) - redundant
    shown = kept if mode.startswith("reduced") else redundant
    if mode.startswith("reduced"):
        what = "transitive reduction: removed {} redundant edge(s) of {} ({} kept)"
    else:
        what = "redundant edges only: showing {} redundant edge(s) of {}"
    what = what.format(len(removed), len(pairs), len(kept))
    head = f"Dataflow-verified {what}" if dataflow else what[0].upper() + what[1:]
    report = [head] + [f"  - {fmt(p)} -> {fmt(s)}" for p, s in removed]
    if html:
        hidden = set(pairs) - shown
        report.append(
            f"HTML layout preserves all {len(pairs)} edge(s); {len(hidden)} unselected edge(s) are colored as background"
        )
        return EdgeSelection(graph, hidden, f"deps_viewer_{mode}", report, mode=mode)
    return EdgeSelection(graph.select(shown), set(), f"deps_viewer_{mode}", report, mode=mode)


def _slots(task: dict[str, Any] | None) -> list[int]:
    kid = list((task or {}).get("kernel_ids") or [])[:3]
    return kid + [-1] * (3 - len(kid))


def _formatter(nodes: list[int]) -> Any:
    """Task id -> its text: the local id, or ``(ring, local)`` for all once one is off ring 0."""
    multi_ring = any((n >> 32) & 0xFF for n in nodes)

    def fmt(n: int) -> str:
        ring, local = (n >> 32) & 0xFF, n & 0xFFFFFFFF
        return f"({ring}, {local})" if multi_ring else str(local)

    return fmt


def _fans(nodes: list[int], pairs: list[tuple[int, int]]) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    fanin: dict[int, set[int]] = {n: set() for n in nodes}
    fanout: dict[int, set[int]] = {n: set() for n in nodes}
    for p, s in pairs:
        fanin[s].add(p)
        fanout[p].add(s)
    return fanin, fanout


def _kind(task: dict[str, Any] | None) -> str:
    """``alloc`` (not in tasks[]), ``submit`` (a kernel id >= 0) or ``dummy``."""
    if task is None:
        return "alloc"
    return "submit" if any(k >= 0 for k in _slots(task)) else "dummy"


def _block_num(task: dict[str, Any] | None) -> int:
    return max(int((task or {}).get("block_num", 1)), 1)


def read_deps(path: Path, names_by_id: dict[str, str] | None = None, hint: str = "") -> DepsFacts:
    """The trace's facts of the deps.json at ``path`` (and of a name map's ``names_by_id``), read as any input
    (``hint``: on a file that cannot be read) and checked by deps_viewer's :func:`check_deps`: a one-line
    :class:`TraceInputError` naming the file and the field that is wrong."""
    doc = read_json_file(path, "deps.json", hint)
    try:
        graph = check_deps(doc)
    except DepsFormatError as e:
        raise TraceInputError(f"{path}: deps.json does not have the documented tasks/edges: {e}") from None
    return deps_facts(graph.tasks, [(pred, succ) for pred, succ, _ in graph.rows], names_by_id)


def find_name_map(deps_path: Path) -> Path | None:
    """The newest ``name_map*.json`` beside ``deps_path`` (ties: the last name)."""
    found = sorted(deps_path.parent.glob("name_map*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    return found[-1] if found else None


def load_func_names(path: Path) -> dict[int, str]:
    """func_id -> name from a §1 name map (``callable_id_to_name``) or a flat ``{"<id>": "<name>"}``."""
    doc = _load_json(path, "the name map")
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
        for i, row in enumerate(doc["aicore_tasks"]):
            core = int(row[0])
            if not 0 <= core < len(types):  # a negative id would index core_types from its end
                raise IndexError(f"aicore_tasks[{i}] names core {core}, but core_types has {len(types)} entries")
            seen.setdefault(int(row[1]), set()).add(str(types[core]))
    except (OSError, ValueError, KeyError, IndexError, TypeError, OverflowError) as e:
        print(f"{PROG}: warning: {path}: not read ({type(e).__name__}: {e})", file=sys.stderr)
        return None
    return {tid: (next(iter(s)) if len(s) == 1 else "mix") for tid, s in seen.items()}


def render_text(deps_path: Path, func_names: dict[int, str] | None = None, graph: DepsGraph | None = None) -> str:
    """The text view of ``deps_path`` (see the module docstring); ``graph``: its edges a mode selected."""
    g = graph if graph is not None else load_deps(deps_path)
    core_types = load_core_types(deps_path)
    pairs, nodes = g.pairs, g.nodes
    fmt = _formatter(nodes)
    fanin, fanout = _fans(nodes, pairs)
    named = bool(func_names) and any(k >= 0 and k in func_names for t in g.tasks.values() for k in _slots(t))

    def labels(n: int) -> str:
        t = g.tasks.get(n)
        kind = _kind(t)
        fid = "func_id=[" + ",".join(str(k) for k in _slots(t)) + "]" if kind == "submit" else "func_id=none"
        block = _block_num(t)
        spmd = f" SPMD block num = {block}" if block > 1 else ""
        return f"kind={kind} {fid}{spmd}"

    lines = [
        "SUMMARY",
        f"  source_deps_json: {deps_path}",
        f"  tasks: {len(nodes)}",
        f"  unique_task_edges: {len(pairs)}",
        f"  annotated_edges: {len(g.rows)}",
        f"  tensors: {len(g.tensors)}",
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


_STYLE = {  # core type -> Graphviz node attributes (runtime-dfx-formats.md §4)
    "aic": {"shape": "box", "style": "rounded,filled", "fillcolor": "#66A3FF"},
    "aiv": {"shape": "ellipse", "style": "filled", "fillcolor": "#FFB366"},
    "mix": {"shape": "diamond", "style": "filled", "fillcolor": "#66CC99"},
    "alloc": {"shape": "note", "style": "filled,dashed", "fillcolor": "#EAEAEA"},
    "dummy": {"shape": "box", "style": "rounded,filled", "fillcolor": "#E0E0E0"},
}
SPMD_COLOR = "#C62828"
PAGE_BACKGROUND = "#eef2f7"
"""The HTML page's background: an edge an ``--edge-mode`` does not select is drawn in it."""
ENGINES = ("circo", "dot", "fdp", "neato", "osage", "patchwork", "sfdp", "twopi")
"""Graphviz's layout engines."""


def _core_type(task: dict[str, Any] | None, sidecar: dict[int, str] | None, n: int) -> str:
    """The sidecar's core type, else the one the kernel_ids imply."""
    kind = _kind(task)
    if kind != "submit":
        return kind
    if sidecar and n in sidecar:
        return sidecar[n]
    slots = _slots(task)
    aic, aiv = slots[0] >= 0, slots[1] >= 0 or slots[2] >= 0
    return "mix" if aic and aiv else "aic" if aic else "aiv"


def _task_name(task: dict[str, Any] | None, func_names: dict[int, str] | None) -> str | None:
    """The names of the task's kernels (``a + b`` for a mix task), when the name map has them."""
    if not func_names:
        return None
    names: list[str] = []
    for k in _slots(task):
        if k >= 0 and k in func_names and func_names[k] not in names:
            names.append(func_names[k])
    return " + ".join(names) or None


def dot_source(
    deps_path: Path,
    func_names: dict[int, str] | None = None,
    direction: str = "LR",
    show_tensor_info: bool = False,
    graph: DepsGraph | None = None,
    hidden: set[tuple[int, int]] | None = None,
) -> Any:
    """The dependency graph as a ``graphviz.Digraph``: a node per task shaped by core type (AIC blue
    box, AIV orange ellipse, mix green diamond, alloc grey note; SPMD red border and ``xN``), labelled
    ``id · name ↓fanin ↑fanout``; explicit edges dashed; ``show_tensor_info`` lists each task's
    tensor arguments in its node. The ``hidden`` pairs are laid out but drawn in the page's background
    colour (class ``hidden-edge``): an ``--edge-mode`` view keeps the whole graph's layout."""
    try:
        import graphviz
    except ImportError as e:
        raise DepsViewerError("the HTML view needs the 'graphviz' Python package (pip install graphviz)") from e
    g = graph if graph is not None else load_deps(deps_path)
    sidecar = load_core_types(deps_path)
    nodes, pairs = g.nodes, g.pairs
    fmt = _formatter(nodes)
    fanin, fanout = _fans(nodes, pairs)
    tensor_names = {str(t.get("tensor_id")): f"T{i}" for i, t in enumerate(g.tensors) if isinstance(t, dict)}
    dot = graphviz.Digraph("deps", graph_attr={"rankdir": direction, "concentrate": "false"})
    dot.attr("node", fontname="Helvetica", fontsize="10")
    dot.attr("edge", color="#888888")
    for n in nodes:
        t = g.tasks.get(n)
        core = _core_type(t, sidecar, n)
        name = _task_name(t, func_names) or (core if core in ("alloc", "dummy") else None)
        label = f"{fmt(n)}" + (f" · {name}" if name else "") + f" ↓{len(fanin[n])} ↑{len(fanout[n])}"
        if show_tensor_info and t is not None:
            args = t.get("args")
            for a in args if isinstance(args, list) else []:
                if isinstance(a, dict) and a.get("tensor_id") is not None:
                    tn = tensor_names.get(str(a["tensor_id"]), "T?")
                    dims = a.get("shape")
                    shape = ",".join(str(d) for d in dims) if isinstance(dims, list) else "?"
                    label += f"\narg{a.get('idx')} {a.get('type')} {tn}:{str(a.get('dtype', '?')).lower()}[{shape}]"
        attrs = dict(_STYLE[core])
        block = _block_num(t)
        if block > 1:
            attrs.update(color=SPMD_COLOR, penwidth="1.5", xlabel=f"x{block}", fontcolor="#000000")
        # escaped: a backslash in a name is text (not Graphviz's \N, \G, \l or an escaped quote), and so is
        # an entity (Graphviz decodes &amp; in any label)
        dot.node(f"T{(n >> 32) & 0xFF}_{n & 0xFFFFFFFF}", graphviz.escape(label.replace("&", "&amp;")), **attrs)
    not_explicit = {(p, s) for p, s, r in g.rows if r.get("source") != "explicit"}  # one pass: no scan per pair
    for p, s in pairs:
        attrs = {"style": "dashed", "color": "#B0B0B0"} if (p, s) not in not_explicit else {}
        if hidden and (p, s) in hidden:
            attrs = {"class": "hidden-edge", "color": PAGE_BACKGROUND}
        dot.edge(f"T{(p >> 32) & 0xFF}_{p & 0xFFFFFFFF}", f"T{(s >> 32) & 0xFF}_{s & 0xFFFFFFFF}", **attrs)
    return dot


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
html,body{{margin:0;height:100%;overflow:hidden;font:12px Helvetica,sans-serif;background:{background}}}
body{{display:flex;flex-direction:column}}
#hud{{flex:none;margin:10px 10px 0;align-self:flex-start;background:#fff;border:1px solid #cbd5e1;border-radius:8px;padding:6px 10px}}
#hud span{{display:inline-block;margin-right:10px}} .sw{{display:inline-block;width:12px;height:10px;margin-right:4px;border:1px solid #333;vertical-align:middle}}
#stage{{flex:1;min-height:0;position:relative;overflow:hidden;cursor:grab}} #stage>svg{{transform-origin:0 0}}
</style></head><body>
<div id="hud"><span><b>{n_nodes}</b> tasks · <b>{n_edges}</b> edges{edge_mode}</span>
<span><i class="sw" style="background:#66A3FF"></i>AIC</span><span><i class="sw" style="background:#FFB366;border-radius:50%"></i>AIV</span>
<span><i class="sw" style="background:#66CC99"></i>mix</span><span><i class="sw" style="background:#EAEAEA;border-style:dashed"></i>alloc</span>
<span><i class="sw" style="background:none;border-color:{spmd}"></i><b style="color:{spmd}">xN</b> SPMD</span>
<span>drag: pan · wheel: zoom · f: fit · r: reset</span></div>
<div id="stage">{svg}</div>
<script>
(function(){{
const stage=document.getElementById('stage'),svg=stage.querySelector('svg');if(!svg)return;
svg.removeAttribute('width');svg.removeAttribute('height');
let s=1,x=0,y=0,drag=null;
function apply(){{svg.style.transform='translate('+x+'px,'+y+'px) scale('+s+')';}}
function fit(){{const b=svg.viewBox.baseVal,w=stage.clientWidth,h=stage.clientHeight;
 svg.style.width=b.width+'px';svg.style.height=b.height+'px';s=Math.min(w/b.width,h/b.height,2)*0.95;
 x=(w-b.width*s)/2;y=(h-b.height*s)/2;apply();}}
stage.addEventListener('wheel',function(e){{e.preventDefault();const k=Math.exp(-e.deltaY*0.0015),r=stage.getBoundingClientRect();
 const px=e.clientX-r.left,py=e.clientY-r.top;x=px-(px-x)*k;y=py-(py-y)*k;s*=k;apply();}},{{passive:false}});
stage.addEventListener('mousedown',function(e){{drag=[e.clientX-x,e.clientY-y];stage.style.cursor='grabbing';}});
window.addEventListener('mousemove',function(e){{if(drag){{x=e.clientX-drag[0];y=e.clientY-drag[1];apply();}}}});
window.addEventListener('mouseup',function(){{drag=null;stage.style.cursor='grab';}});
window.addEventListener('keydown',function(e){{if(e.key==='f')fit();if(e.key==='r'){{s=1;x=0;y=0;apply();}}}});
fit();
}})();
</script></body></html>
"""


def render_html(
    deps_path: Path,
    func_names: dict[int, str] | None = None,
    engine: str = "dot",
    direction: str = "LR",
    show_tensor_info: bool = False,
    selection: EdgeSelection | None = None,
) -> str:
    """A self-contained pan/zoom page around the Graphviz SVG of :func:`dot_source`; ``selection``: the
    edges an ``--edge-mode`` draws (the others are laid out in the background colour, below them)."""
    g = selection.graph if selection is not None else load_deps(deps_path)
    hidden = selection.hidden if selection is not None else set()
    edge_mode = selection.mode if selection is not None else "full"
    dot = dot_source(deps_path, func_names, direction, show_tensor_info, graph=g, hidden=hidden)
    import graphviz

    try:
        svg = dot.pipe(format="svg", engine=engine).decode("utf-8")
    except graphviz.ExecutableNotFound as e:
        raise DepsViewerError(f"Graphviz '{engine}' is not installed (apt-get install graphviz)") from e
    except graphviz.CalledProcessError as e:
        raise DepsViewerError(f"Graphviz '{engine}' failed: {e.stderr.decode(errors='replace').strip()}") from e
    svg = svg[svg.index("<svg") :]
    if hidden:
        svg = _hidden_edges_below(svg)
    shown = len(g.pairs) - len(hidden)
    return _PAGE.format(
        title=f"deps.json: {len(g.nodes)} tasks, {shown} edges",
        n_nodes=len(g.nodes),
        n_edges=shown,
        edge_mode="" if edge_mode == "full" else f" ({html.escape(edge_mode)}; {len(g.pairs)} laid out)",
        spmd=SPMD_COLOR,
        background=PAGE_BACKGROUND,
        svg=svg,
    )


def _hidden_edges_below(svg: str) -> str:
    """``svg`` with every edge drawn before (below) the nodes, the ``hidden-edge`` ones first: a selected edge
    is never painted over by an unselected one in the background colour. The layout is Graphviz's."""
    ns = "http://www.w3.org/2000/svg"
    ET.register_namespace("", ns)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(svg)
    graph = root.find(f"{{{ns}}}g")
    if graph is None:
        return svg
    children = [(child, set(child.get("class", "").split())) for child in graph]
    first_node = next((i for i, (_, c) in enumerate(children) if "node" in c), len(children))
    others = [child for child, c in children if "edge" not in c]
    hidden = [child for child, c in children if "edge" in c and "hidden-edge" in c]
    shown = [child for child, c in children if "edge" in c and "hidden-edge" not in c]
    before = sum(1 for _, c in children[:first_node] if "edge" not in c)  # the title and background
    graph[:] = others[:before] + hidden + shown + others[before:]
    return ET.tostring(root, encoding="unicode")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description="The text view of a dep_gen deps.json task graph.")
    p.add_argument("deps_json", metavar="DEPS_JSON", help="dfx_outputs/deps.json")
    p.add_argument("--func-names", metavar="FILE", help="name map (default: the newest sibling name_map*.json)")
    p.add_argument("--format", choices=("text", "html"), default="text", help="text (default) or Graphviz HTML")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="dot",
        help="Graphviz layout for --format html (default: dot; sfdp for big graphs)",
    )
    p.add_argument("--direction", choices=("LR", "TB", "RL", "BT"), default="LR", help="graph direction (default: LR)")
    p.add_argument("--show-tensor-info", action="store_true", help="list each task's tensor arguments in its node")
    p.add_argument(
        "--edge-mode",
        choices=EDGE_MODES,
        default="full",
        help="full (default): every edge; reduced: a transitive reduction (creator edges kept); omitted: only the "
        "edges reduced drops; reduced_dataflow / omitted_dataflow: a redundant creator edge dropped only on "
        "proof that its INOUT bytes flow through directly. The dropped edges are listed on stdout; the HTML view "
        "lays out every edge and draws the unselected ones in the background colour",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="output (default: deps_viewer[_<edge-mode>].txt|.html beside DEPS_JSON; -: stdout)",
    )
    return p


def run(args: argparse.Namespace) -> Path:
    """Write the view (``-o -``: to stdout); returns its path. A reducing ``--edge-mode`` lists the redundant
    edges on stdout first (on stderr with ``-o -``)."""
    deps = Path(args.deps_json)
    if deps.is_dir():
        raise DepsViewerError(f"{deps}: is a folder (expected a deps.json: {deps / 'deps.json'}?)")
    if not deps.is_file():
        raise DepsViewerError(f"{deps}: no such file (expected a deps.json)")
    html_view = args.format == "html"
    given = output_path(Path(args.output), DepsViewerError) if args.output else None  # refused before anything is read
    names_path = Path(args.func_names) if args.func_names else find_name_map(deps)
    graph = load_deps(deps)
    selection = select_edges(graph, args.edge_mode, html_view)
    out = given or deps.parent / f"{selection.stem}.{'html' if html_view else 'txt'}"
    check_output_not_input(out, [deps, names_path, deps.parent / "chip_swimlane_records.json"])
    names = load_func_names(names_path) if names_path is not None else None
    if html_view:
        text = render_html(deps, names, args.engine, args.direction, args.show_tensor_info, selection)
    else:
        text = render_text(deps, names, selection.graph)
    path = write_report(out, text, DepsViewerError)  # atomically; ``-o -``: to stdout
    if selection.warning:
        print(f"{PROG}: {selection.warning}", file=sys.stderr)
    if selection.report:
        print("\n".join(selection.report), file=sys.stderr if args.output == "-" else sys.stdout)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """The command: 0 written (its path printed), 1 a bad input, 2 bad arguments."""
    return report_main(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
