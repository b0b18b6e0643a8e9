"""``dfx_outputs/run_report.html``: one self-contained page on the :mod:`pypto.reports` shell holding a
run's swimlane (worker view: a lane per core, start -> end; scheduler view: dispatch -> finish), its
dependency graph, its PMU table and the scheduler-overhead findings (issue 12 item 5: beyond upstream).

When: :class:`~.swimlane.SwimlaneCollector` writes it at the end of :meth:`finish`, so a run writes it
whenever ``enable_chip_swimlane`` is on. Everything comes from the :class:`~pypto.runtime.run.RunResult`
(the same values the other collectors write): the dependencies are the task graph's edges, as in
``deps.json``; the PMU rows are :func:`.pmu.pmu_rows` of the run's ``enable_pmu`` event type, as in
``pmu.csv``. So the page does not depend on the order collectors finish in, and never shows a stale
``pmu.csv`` of an earlier run.

The findings are runtime-dfx-formats.md §8 items 3/4 per task, **head overhead** ``max(0, min(start -
dispatch, start - prev_end))`` (``prev_end``: the latest end of an earlier task on the task's cores) and
**tail overhead** ``max(0, finish - end)``, and the **idle gaps** of each core between two of its tasks.
At swimlane level >= 3 the page also holds the six §8 analyses of :func:`.sched_overhead.analyze` (fed
the records :func:`.records.swimlane_records` writes and the run's edges): overhead per engine with the
verdict, switch gaps per core with the makespan bound, head/tail percentiles, the scheduler threads'
loops and the critical path (its tasks as ids, linked to the timeline). Below level 3 it names the
analyses the run did not record the phases for (:data:`LEVEL3_ANALYSES`).

:func:`report_model` is the data model (the page's JSON), :func:`render_run_report` the page (same run,
same bytes: no paths, no clock time), :func:`write_run_report` the atomic write.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from pathlib import Path
from typing import Any, NamedTuple

from pypto.reports import asset, report_chunks

from .base import RECORDED_LEVEL, across_runs, kept_across_runs, write_artefact
from .incore_view import incore_model
from .jsonenc import round6
from .pmu import EVENT_COUNTERS, columns, pmu_rows
from .records import records_fingerprint, swimlane_records
from .sched_overhead import analyze
from .trace import task_label

REPORT_NAME = "run_report.html"
PACKAGE = "pypto.runtime.dfx"
ASSETS = ("run_report.html", "run_report.css", "run_report.js")
"""The viewer's assets in ``pypto/runtime/dfx/assets/``."""
INCORE_ASSETS = ("run_report_incore.css", "run_report_incore.js")
"""The in-core view's style and script (:mod:`.incore_view`)."""
XR_PACKAGE, XR_ASSETS = "pypto.runtime.distributed", ("cross_rank.css", "cross_rank.js")
"""The cross-rank view's style and script (the "Cross-rank trace" section of a multi-chip run)."""


LEVEL3_ANALYSES = [
    {"item": "1", "name": "Overhead by engine (all_overhead / has_overhead, scheduler-bound verdict)",
     "needs": "the AICPU ready queues of the scheduler phases (level 3)"},
    {"item": "2", "name": "AICore switch gaps and the makespan bound",
     "needs": "sched_overhead_analysis reads level >= 3 records"},
    {"item": "5", "name": "Per-thread scheduler loops (ns/loop, complete/async_poll/dispatch/idle, pop hit rate)",
     "needs": "aicpu_scheduler_phases and core_to_thread (level 3)"},
    {"item": "6", "name": "Critical path split into sched / exec / other",
     "needs": "sched_overhead_analysis reads level >= 3 records"},
]  # fmt: skip
"""runtime-dfx-formats.md §8 analyses a run below swimlane level 3 has not the data for (they read the
level-3 scheduler phases); the page names them then."""


def _rounded(x: Any) -> Any:
    """``x`` with its floats to 6 decimals and its tuples as lists (JSON-stable, keys kept). The leaves of a
    dict or list are handled in place (an analysis is a few hundred of them: a call each cost a third of
    this)."""
    t = type(x)
    if t is dict:
        return {k: round6(v) if type(v) is float else v if type(v) in _LEAVES else _rounded(v) for k, v in x.items()}
    if t is list or t is tuple:
        return [round6(v) if type(v) is float else v if type(v) in _LEAVES else _rounded(v) for v in x]
    if isinstance(x, float):
        return round(x, 6)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_rounded(v) for v in x]
    return x


_LAST = float("inf")
"""Sorts after every task id: ``(cycles, _LAST)`` bounds the ``(end, task)`` pairs ending at or before ``cycles``."""

_LEAVES = frozenset({int, str, bool, type(None)})
"""The types :func:`_rounded` keeps as they are without a look inside."""


def _analyses_inputs(
    result: Any, level: int, edges: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[tuple[int, int]], dict[int, int]] | None:
    """What the page's §8 analyses (:func:`_page_analyses`) read of a run: its level-``level`` records,
    dependency pairs and SPMD block counts; None below level 3 or when no task ran."""
    if min(int(level), RECORDED_LEVEL) < 3 or not result.tasks:
        return None
    blocks = {r.task_id: len(getattr(r, "blocks", None) or ()) or 1 for r in result.tasks}
    return swimlane_records(result, level), [(e["pred"], e["succ"]) for e in edges], blocks


def _page_analyses(records: dict[str, Any], pairs: list[tuple[int, int]], blocks: dict[int, int]) -> dict[str, Any]:
    """§8's six analyses (:func:`.sched_overhead.analyze`) of a run's records, dependency pairs and SPMD block
    counts (all they read), shaped for the page: the switch gaps as a list per core, the critical path with its
    task ids."""
    a = analyze(records, pairs, blocks, trusted=True)
    a["switch"]["cores"] = [{"core": c, **s} for c, s in sorted(a["switch"]["cores"].items())]
    a["overhead"]["engines"] = [{"engine": e, **v} for e, v in a["overhead"]["engines"].items()]
    ids = {label: raw for raw in {r[1] for r in records["aicore_tasks"]} if (label := task_label(raw))}
    a["critical_path"]["task_ids"] = [ids[label] for label in a["critical_path"]["tasks"]]
    return _rounded(a)


def _percentiles(values: list[int]) -> dict[str, Any]:
    """§8's summary of an overhead: P10..P99 (nearest rank), Max, Mean, Total."""
    if not values:
        return {"count": 0, "total": 0, "max": 0, "mean": 0, "p": {}}
    s = sorted(values)
    n = len(s)
    pct = {f"P{q}": s[min(n - 1, max(0, -(-q * n // 100) - 1))] for q in (10, 25, 50, 75, 90, 95, 99)}
    return {"count": n, "total": sum(s), "max": s[-1], "mean": round(sum(s) / n, 2), "p": pct}


def _edges(result: Any) -> list[dict[str, Any]]:
    """One edge per (pred, succ) pair with the reasons behind it (``raw``/``waw``/``war``/``explicit``,
    the task graph's :class:`~pypto.runtime.orchestration.DepEdge` kinds: deps.json's edges)."""
    kinds: dict[tuple[int, int], set[str]] = {}
    graph_tasks = getattr(getattr(result, "graph", None), "tasks", None) or []
    for t in graph_tasks:
        for e in t.dep_edges:
            pair = (e.pred, t.id)
            if pair in kinds:
                kinds[pair].add(e.kind)
            else:
                kinds[pair] = {e.kind}
    for rec in result.tasks:  # the scheduler's deps (a pair the graph lists no reason for still counts)
        for d in rec.deps:
            if (d, rec.task_id) not in kinds:
                kinds[(d, rec.task_id)] = set()
    return [{"pred": p, "succ": s, "kinds": sorted(k)} for (p, s), k in sorted(kinds.items())]


class Slice(NamedTuple):
    """One block of a task on one core (a plain task is one block)."""

    task_id: int
    block: int
    dispatch: int
    start: int
    end: int
    finish: int


class _Block(NamedTuple):
    """One block of a task as the page reads it."""

    block_idx: int
    core_ids: tuple[int, ...]
    dispatch: int
    start: int
    end: int
    finish: int


class _TaskFacts(NamedTuple):
    """What the page reads of a task record (:class:`~pypto.runtime.scheduler.TaskRecord`), as plain data."""

    task_id: int
    label: str
    func_name: str
    part_names: tuple[str, ...]
    core_type: str
    core_ids: tuple[int, ...]
    dispatch: int
    start: int
    end: int
    finish: int
    cycles: int
    blocks: tuple[_Block, ...]


def _task_facts(r: Any) -> _TaskFacts:
    """A task record's facts; a record without blocks is its own single block."""
    new = tuple.__new__  # the tuples made directly: a NamedTuple's own __new__ is a Python call each
    blocks = tuple([new(_Block, (b.block_idx, tuple(b.core_ids), b.dispatch, b.start, b.end, b.finish))
                    for b in getattr(r, "blocks", None) or ()])  # fmt: skip
    if not blocks:
        blocks = (new(_Block, (0, tuple(r.core_ids), r.dispatch, r.start, r.end, r.finish)),)
    return new(_TaskFacts, (r.task_id, r.label, r.func_name, tuple(r.part_names), r.core_type, tuple(r.core_ids),
                            r.dispatch, r.start, r.end, r.finish, r.cycles, blocks))  # fmt: skip


class ReportInputs(NamedTuple):
    """Everything :func:`report_model` reads of a run, as plain data (equal inputs, equal page: a run again with
    the same timing reuses its page, :func:`.base.across_runs`)."""

    tasks: tuple[_TaskFacts, ...]
    edges: list[dict[str, Any]]
    pmu: dict[str, Any]
    analyses: tuple[dict[str, Any], list[tuple[int, int]], dict[int, int]] | None
    """:func:`_page_analyses`'s inputs (level >= 3), not its result: the page's key is what it reads."""
    incore: dict[str, Any]
    target: str
    clock_hz: int
    total_cycles: int
    core_types: tuple[str, ...]
    swimlane_level: int
    cross_rank: dict[str, Any] | None


def report_inputs(
    result: Any, pmu_event: int = 0, swimlane_level: int = RECORDED_LEVEL, incore: bool = False,
    cross_rank: dict[str, Any] | None = None,
) -> ReportInputs:
    """:func:`report_model`'s inputs of ``result``: its tasks by id, their edges, the PMU table of ``pmu_event``
    (empty when 0), what the §8 analyses read (level >= 3), the in-core lanes (when ``incore``) and its facts."""
    edges = _edges(result)
    pmu: dict[str, Any] = {"event_type": 0, "columns": [], "rows": []}
    if pmu_event:
        event = pmu_event if pmu_event in EVENT_COUNTERS else 2
        rows = pmu_rows(result, event)
        cols = columns(event)
        pmu = {"event_type": event, "columns": cols,
               "rows": [{"task": int(str(row["task_id"]), 16) & 0xFFFFFFFF, "values": list(map(row.__getitem__, cols))}
                        for row in rows]}  # fmt: skip
    return ReportInputs(
        tuple(sorted(map(_task_facts, result.tasks))), edges, pmu, _analyses_inputs(result, swimlane_level, edges),
        incore_model(result, incore), str(result.target_name), int(result.clock_hz), int(result.total_cycles),
        tuple(result.core_types), int(swimlane_level), cross_rank,
    )  # fmt: skip


def report_model(
    result: Any, pmu_event: int = 0, swimlane_level: int = RECORDED_LEVEL, incore: bool = False,
    cross_rank: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The page's data: tasks, cores, edges, PMU rows (when ``pmu_event``), findings, the in-core pipe
    lanes of every task part (when ``incore``: :mod:`.incore_view`), and the merged cross-rank trace of a
    multi-chip run (``cross_rank``: :func:`pypto.runtime.distributed.report.report_model`; its section is
    hidden when None). Ints and strings only (and a few rounded ratios), keys sorted when embedded:
    deterministic for a run."""
    return model_of(report_inputs(result, pmu_event, swimlane_level, incore, cross_rank))


def model_of(inputs: ReportInputs) -> dict[str, Any]:
    """:func:`report_model` of its inputs (it reads nothing else)."""
    recs = inputs.tasks
    blocks_of = {r.task_id: r.blocks for r in recs}
    first = {t: min([b.start for b in blocks]) for t, blocks in blocks_of.items()}  # head overhead is measured there
    edges = inputs.edges
    preds: dict[int, list[int]] = {}
    succs: dict[int, list[int]] = {}
    for e in edges:  # distinct pairs sorted by (pred, succ): each list comes out sorted
        preds.setdefault(e["succ"], []).append(e["pred"])
        succs.setdefault(e["pred"], []).append(e["succ"])

    # per core: its slices (one per task block on it) by start (a Group block sits on several cores)
    by_core: dict[int, list[Slice]] = {}
    for r in recs:
        for b in blocks_of[r.task_id]:
            for c in b.core_ids:
                by_core.setdefault(c, []).append(Slice(r.task_id, b.block_idx, b.dispatch, b.start, b.end, b.finish))
    for lst in by_core.values():
        lst.sort(key=lambda r: (r.start, r.end, r.task_id, r.block))
    prev_end: dict[int, int] = {}
    gaps: list[dict[str, Any]] = []
    cores: list[dict[str, Any]] = []
    for c in sorted(by_core):
        lst = by_core[c]
        busy = sum([r.end - r.start for r in lst])
        core_gaps = []
        for a, b in zip(lst, lst[1:], strict=False):
            if b.start > a.end:
                core_gaps.append({"core": c, "after": a.task_id, "task": b.task_id, "from": a.end, "to": b.start,
                                  "cycles": b.start - a.end})  # fmt: skip
        earlier: list[tuple[int, int]] = []  # (end, task) of the slices before, sorted: no rescan per slice
        for r in lst:  # the latest end of an earlier task on this core, at a task's first start
            if earlier and r.start == first[r.task_id]:
                j = bisect_right(earlier, (r.start, _LAST)) - 1  # the latest end at or before the start ...
                while j >= 0 and earlier[j][1] == r.task_id:  # ... of another task (a block of no cycles)
                    j -= 1
                if j >= 0:
                    prev_end[r.task_id] = max(earlier[j][0], prev_end.get(r.task_id) or 0)
            insort(earlier, (r.end, r.task_id))
        gaps += core_gaps
        cores.append({"id": c, "type": inputs.core_types[c], "tasks": [r.task_id for r in lst], "busy": busy,
                      "idle": sum([g["cycles"] for g in core_gaps]), "first": lst[0].start, "last": lst[-1].end,
                      "bars": [{"task": r.task_id, "block": r.block, "dispatch": r.dispatch, "start": r.start,
                                "end": r.end, "finish": r.finish} for r in lst]})  # fmt: skip

    tasks: list[dict[str, Any]] = []
    heads: list[int] = []
    tails: list[int] = []
    for r in recs:
        pe = prev_end.get(r.task_id)
        head = max(0, min(r.start - r.dispatch, r.start - pe) if pe is not None else r.start - r.dispatch)
        tail = max(0, r.finish - r.end)
        heads.append(head)
        tails.append(tail)
        blocks = blocks_of[r.task_id]
        tasks.append({
            "id": r.task_id, "label": r.label, "kernel": r.func_name, "parts": list(r.part_names),
            "core_type": r.core_type, "cores": list(r.core_ids), "block_num": len(blocks),
            "blocks": [{"block": b.block_idx, "cores": list(b.core_ids), "dispatch": b.dispatch, "start": b.start,
                        "end": b.end, "finish": b.finish} for b in blocks],
            "dispatch": r.dispatch, "start": r.start, "end": r.end, "finish": r.finish, "cycles": r.cycles,
            "prev_end": pe, "head": head, "tail": tail,
            "preds": preds.get(r.task_id, []), "succs": succs.get(r.task_id, []),
        })  # fmt: skip

    findings = [
        {
            "kind": "head",
            "task": t["id"],
            "core": t["cores"][0] if t["cores"] else -1,
            "from": t["start"] - t["head"],
            "to": t["start"],
            "cycles": t["head"],
        }
        for t in tasks
        if t["head"]
    ]
    findings += [
        {
            "kind": "tail",
            "task": t["id"],
            "core": t["cores"][0] if t["cores"] else -1,
            "from": t["end"],
            "to": t["end"] + t["tail"],
            "cycles": t["tail"],
        }
        for t in tasks
        if t["tail"]
    ]
    findings += [{"kind": "idle", **g} for g in gaps]  # fmt: skip
    findings.sort(key=lambda f: (-f["cycles"], f["kind"], f["task"], f["core"]))

    sched = None if inputs.analyses is None else _page_analyses(*inputs.analyses)
    window = (min([r.start for r in recs], default=0), max([r.end for r in recs], default=0))
    return {
        "schema": 1,
        "title": "Run report",
        "target": inputs.target,
        "clock_hz": inputs.clock_hz,
        "total_cycles": inputs.total_cycles,
        "window": list(window),
        "swimlane_level": {"requested": inputs.swimlane_level, "recorded": min(inputs.swimlane_level, RECORDED_LEVEL)},
        "tasks": tasks,
        "cores": cores,
        "edges": edges,
        "pmu": inputs.pmu,
        "findings": findings,
        "overhead": {
            "head": _percentiles(heads),
            "tail": _percentiles(tails),
            "idle": _percentiles([g["cycles"] for g in gaps]),
        },  # fmt: skip
        "sched": sched,
        "level3": [] if sched is not None else LEVEL3_ANALYSES,
        "incore": inputs.incore,
        "cross_rank": inputs.cross_rank,
    }


def render_run_report(model: dict[str, Any]) -> str:
    """The self-contained page of a :func:`report_model`."""
    return b"".join(run_report_chunks(model)).decode("utf-8")


def run_report_chunks(model: dict[str, Any]) -> list[bytes]:
    """:func:`render_run_report`'s page as the UTF-8 byte strings :func:`pypto.reports.report_chunks` writes
    (the shell and assets encoded once per process)."""
    html, css, js = (asset(PACKAGE, name) for name in ASSETS)
    incore_css, incore_js = (asset(PACKAGE, name) for name in INCORE_ASSETS)
    xr_css, xr_js = (asset(XR_PACKAGE, name) for name in XR_ASSETS)
    n = len(model["tasks"])
    subtitle = f"{model['target']} \u00b7 {n} task{'s' * (n != 1)} \u00b7 {model['total_cycles']} cycles"
    if model.get("cross_rank"):
        subtitle += f" \u00b7 {len(model['cross_rank']['ranks'])} ranks"
    return report_chunks(
        model["title"], model, body=html, styles=[css, incore_css, xr_css], scripts=[js, incore_js, xr_js],
        subtitle=subtitle,
    )


def write_run_report(
    result: Any, out_dir: Path, pmu_event: int = 0, swimlane_level: int = RECORDED_LEVEL, incore: bool = False
) -> Path:
    """``out_dir/run_report.html``, atomically; returns its path."""
    path = out_dir / REPORT_NAME
    inputs = report_inputs(result, pmu_event, swimlane_level, incore)
    key = inputs  # the analyses' records as their fingerprint (the records file's and the trace's key too)
    if inputs.analyses is not None:
        key = inputs._replace(analyses=(records_fingerprint(result, swimlane_level), *inputs.analyses[1:]))
    page = across_runs(
        (path, "page"), key, lambda: tuple(run_report_chunks(model_of(inputs))), keep=kept_across_runs(result)
    )
    write_artefact(path, page)
    return path
