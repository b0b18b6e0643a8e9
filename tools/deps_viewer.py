"""``python -m pypto.tools.deps_viewer DEPS_JSON [--func-names FILE] [--format text|html] [--engine E]
[--direction LR|TB|RL|BT] [--show-tensor-info] [-o PATH]``: views of a ``deps.json``
(runtime-dfx-formats.md §4).

Writes ``deps_viewer.txt`` (or ``deps_viewer.html``) next to the input (or to ``-o PATH``), atomically, and
prints its path; ``-o -`` writes the view to stdout. The text view::

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
edges dashed. Core types come from the sidecar, else from ``kernel_ids``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.reports.cli import ReportError, report_main, write_report
from pypto.utils.cli import check_output_not_input, read_input_text

PROG = "deps_viewer"
OUTPUT_NAME = "deps_viewer.txt"


class DepsViewerError(ReportError):
    """A bad input or an I/O failure: one line, exit 1."""


def _load_json(path: Path, what: str = "deps.json") -> Any:
    try:
        text = read_input_text(path, what)
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


@dataclass
class DepsGraph:
    """A checked deps.json: tasks by raw id, the edge rows (``(pred, succ)`` and the row itself) and
    the tensors."""

    tasks: dict[int, dict[str, Any]]
    rows: list[tuple[int, int, dict[str, Any]]]
    tensors: list[Any]

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The distinct (pred, succ) pairs, sorted."""
        return sorted({(p, s) for p, s, _ in self.rows})

    @property
    def nodes(self) -> list[int]:
        """Every task id: listed in tasks[] or on an edge."""
        return sorted(set(self.tasks) | {p for p, _, _ in self.rows} | {s for _, s, _ in self.rows})


def load_deps(path: Path) -> DepsGraph:
    """The checked contents of ``path``; a :class:`DepsViewerError` names the file and the entry that
    is wrong."""
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
    rows: list[tuple[int, int, dict[str, Any]]] = []
    for i, e in enumerate(_list(doc, "edges", path, True)):
        if not isinstance(e, dict):
            raise DepsViewerError(f"{path}: edges[{i}]: expected an object")
        for key in ("pred", "succ"):
            if key not in e:
                raise DepsViewerError(f"{path}: edges[{i}]: missing '{key}'")
        rows.append((_u64(e["pred"], f"edges[{i}].pred", path), _u64(e["succ"], f"edges[{i}].succ", path), e))
    return DepsGraph(tasks, rows, _list(doc, "tensors", path, False))


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


def render_text(deps_path: Path, func_names: dict[int, str] | None = None) -> str:
    """The text view of ``deps_path`` (see the module docstring)."""
    g = load_deps(deps_path)
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
) -> Any:
    """The dependency graph as a ``graphviz.Digraph``: a node per task shaped by core type (AIC blue
    box, AIV orange ellipse, mix green diamond, alloc grey note; SPMD red border and ``xN``), labelled
    ``id · name ↓fanin ↑fanout``; explicit edges dashed; ``show_tensor_info`` lists each task's
    tensor arguments in its node."""
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
        dot.edge(f"T{(p >> 32) & 0xFF}_{p & 0xFFFFFFFF}", f"T{(s >> 32) & 0xFF}_{s & 0xFFFFFFFF}", **attrs)
    return dot


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
html,body{{margin:0;height:100%;overflow:hidden;font:12px Helvetica,sans-serif;background:#eef2f7}}
#hud{{position:fixed;top:10px;left:10px;z-index:1;background:#fff;border:1px solid #cbd5e1;border-radius:8px;padding:6px 10px}}
#hud span{{display:inline-block;margin-right:10px}} .sw{{display:inline-block;width:12px;height:10px;margin-right:4px;border:1px solid #333;vertical-align:middle}}
#stage{{width:100vw;height:100vh;cursor:grab}} #stage>svg{{transform-origin:0 0}}
</style></head><body>
<div id="hud"><span><b>{n_nodes}</b> tasks · <b>{n_edges}</b> edges</span>
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
stage.addEventListener('wheel',function(e){{e.preventDefault();const k=Math.exp(-e.deltaY*0.0015);
 x=e.clientX-(e.clientX-x)*k;y=e.clientY-(e.clientY-y)*k;s*=k;apply();}},{{passive:false}});
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
) -> str:
    """A self-contained pan/zoom page around the Graphviz SVG of :func:`dot_source`."""
    g = load_deps(deps_path)
    dot = dot_source(deps_path, func_names, direction, show_tensor_info, graph=g)
    import graphviz

    try:
        svg = dot.pipe(format="svg", engine=engine).decode("utf-8")
    except graphviz.ExecutableNotFound as e:
        raise DepsViewerError(f"Graphviz '{engine}' is not installed (apt-get install graphviz)") from e
    except graphviz.CalledProcessError as e:
        raise DepsViewerError(f"Graphviz '{engine}' failed: {e.stderr.decode(errors='replace').strip()}") from e
    svg = svg[svg.index("<svg") :]
    return _PAGE.format(
        title=f"deps.json: {len(g.nodes)} tasks, {len(g.pairs)} edges",
        n_nodes=len(g.nodes),
        n_edges=len(g.pairs),
        spmd=SPMD_COLOR,
        svg=svg,
    )


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
        "-o", "--output", metavar="PATH", help="output (default: deps_viewer.txt|.html beside DEPS_JSON; -: stdout)"
    )
    return p


def run(args: argparse.Namespace) -> Path:
    """Write the view (``-o -``: to stdout); returns its path."""
    deps = Path(args.deps_json)
    if deps.is_dir():
        raise DepsViewerError(f"{deps}: is a folder (expected a deps.json: {deps / 'deps.json'}?)")
    if not deps.is_file():
        raise DepsViewerError(f"{deps}: no such file (expected a deps.json)")
    out = (
        Path(args.output) if args.output else deps.parent / f"deps_viewer.{'html' if args.format == 'html' else 'txt'}"
    )
    names_path = Path(args.func_names) if args.func_names else find_name_map(deps)
    check_output_not_input(out, [deps, names_path, deps.parent / "chip_swimlane_records.json"])
    names = load_func_names(names_path) if names_path is not None else None
    if args.format == "html":
        text = render_html(deps, names, args.engine, args.direction, args.show_tensor_info)
    else:
        text = render_text(deps, names)
    return write_report(out, text, DepsViewerError)  # atomically; ``-o -``: to stdout


def main(argv: Sequence[str] | None = None) -> int:
    """The command: 0 written (its path printed), 1 a bad input, 2 bad arguments."""
    return report_main(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
