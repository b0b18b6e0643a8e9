"""The merged swimlane: swimlane records (and ``deps.json``) as a Chrome Trace Event JSON
(runtime-dfx-formats.md §3), the file Perfetto's UI and ``chrome://tracing`` open.

Processes: 1 AICPU Orchestrator (level 4: lane ``Orch_i`` = tid 4000+i, one ``submit(rXtY)`` bar per
submit), 2 AICPU Scheduler (level 3: lane ``Sched_i`` = tid 30000+10i, its ``resolve`` phases on a second
lane (tid + 1) also named ``Sched_i``, one ``<phase>(<tasks_processed>)`` bar per phase, args upstream's
``phase``, ``loop_iter``, ``tasks_processed``, the queue depths and, on a complete phase, its
``finishes_processed`` and ``finish_rows_attributed``; the ``shared_ready_queue`` counter (AIC/AIV/MIX
depths at the end of each complete and dispatch phase) on tid 3999), 3 Scheduler View (one bar per task and
core from dispatch to finish, none when the finish is not after the trace's start; overlapping bars of a
core on tid + 1, + 2, ...; args ``event-hint``, ``dispatch-time-us``, ``finish-time-us``,
``aicpu-duration-us``, ``taskId``), 4 Worker View (one bar per task and core from receive to end; a bar is
named ``<kernel>(t3)``, a mixed task's AIC bar by its AIC kernel and its AIV bars by its AIV kernel, §3's
slots; args ``event-hint``, ``fanout-hint``, ``fanin-hint``, ``duration-us``, ``kernel-duration-us``,
``local_setup_us`` and ``taskId`` (the raw task id, ring << 32 | local) as upstream's; the AICPU lanes
``AICPU_j`` = tid 19000+j carry the ``dummy``/``alloc``/predicated-skip markers). Events carry upstream's
``cat`` (and ``cname`` colours, ``id`` on the task bars and markers); each process its
``process_sort_index``. Times are µs from the smallest non-zero cycle value of the task rows and receives
(§2's reader; a 0 there means "not recorded"), or from an earlier phase time (a phase's 0 is a real time:
the simulated orchestrator starts at cycle 0). Flows: dependency (``deps.json`` pairs) bar start to bar
start on pid 4 and dispatch to dispatch on pid 3, from every bar of a plain task (each core of a mixed
one), the earliest bar per func_id of an SPMD task and every marker of a task with no kernel bar,
``hb_violation`` when the producer's bar ends after its consumer's starts (both with upstream's
``input_task_count``/``output_task_count`` and ``bind_id``: the ``id`` of the bar at each end). Level 3:
``complete`` per task from each of its anchors on pid 4 and pid 3 (0.01 µs before the bar's end) to its last
block's finish in the complete phase that holds it; ``complete→ready`` from the complete phase that satisfies a
consumer's last fanin to its dispatch on pid 2 (none when it was dispatched before that phase ended); per task
row two ``dispatch`` flows from its scheduler thread's lane at its dispatch (to pid 4 at the kernel's start, to
pid 3 at the dispatch) and a ``submit→dispatch`` from its task's submit's end. A process is named only when it
has data (Worker View always), a Scheduler View lane only when a bar is on it.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from pypto.errors import Error
from pypto.utils.cli import read_input_text

from .jsonenc import Raw, compact_encoder, plain_json, round6

PROCESSES = {1: "AICPU Orchestrator", 2: "AICPU Scheduler", 3: "Scheduler View", 4: "Worker View"}
OUTER_PHASES = ("complete", "async_poll", "dispatch", "release", "dummy", "early_dispatch", "drain", "graph_prepare")
"""§2's outer scheduler phases: drawn on the thread's lane ``Sched_i``."""
INNER_PHASES = ("resolve", "drain_prepare", "drain_publish")
"""§2's inner scheduler phases (inside an outer one). Upstream draws ``resolve`` on the thread's second lane
(tid + 1, named as the first); ``drain_prepare`` and ``drain_publish`` nest inside their ``drain`` on
``Sched_i``."""
PHASE_CNAMES = {"complete": "good", "dispatch": "terrible", "async_poll": "yellow", "release": "olive",
                "dummy": "grey", "early_dispatch": "rail_animation", "drain": "cq_build_running",
                "drain_prepare": "cq_build_attempt_runnable", "drain_publish": "cq_build_attempt_passed",
                "graph_prepare": "rail_animation", "resolve": "vsync_highlight_color"}  # fmt: skip
"""Upstream's ``cname`` (Chrome's reserved colour) of a scheduler phase bar (``generic_work`` otherwise)."""
ORCH_CNAMES = {"orch_submit": "rail_animation", "orch_alloc": "terrible"}
"""Upstream's ``cname`` of an orchestrator bar by its ``phase`` (``generic_work`` otherwise)."""
QUEUE_LANE = 3999
"""pid 2's tid of the ``shared_ready_queue`` counter, upstream's ``shared_ready_queue (global)`` lane."""
MARKER_PHASES = ("dummy_task", "predicated_skip")
"""§2's worker-lane markers: a task the scheduler thread ran itself, drawn on Worker View's ``AICPU_i``."""
SWIMLANE_LEVELS = (1, 2, 3, 4)
AICPU_LANE = 19000
"""Worker View's tid of ``AICPU_0``: the scheduler threads' markers, then one lane per orchestrator (§3)."""
FLOW_EPSILON_US = 0.01
"""How far before a bar's end upstream starts the ``complete`` and ``complete→ready`` flows (inside the bar)."""
MARKER_MIN_US = 0.02
"""The shortest marker drawn on an ``AICPU_j`` lane (its start and end may coincide: Perfetto shows no
zero-width bar)."""


class TraceInputError(Error, ValueError):
    """Swimlane records or deps.json that do not have the documented shape (one line)."""


def read_json_file(path: Path, what: str, hint: str = "") -> Any:
    """The JSON in ``path`` (the ``what`` a tool reads); an unreadable or malformed file is a
    :class:`TraceInputError` naming the file (and the line and column), with ``hint`` on a missing file."""
    try:
        return json.loads(read_input_text(path, f"the {what}"))
    except json.JSONDecodeError as e:
        raise TraceInputError(f"{path}:{e.lineno}:{e.colno}: the {what} is not JSON ({e.msg})") from None
    except OSError as e:
        extra = f" ({hint})" if hint else ""
        raise TraceInputError(f"{path}: cannot read the {what}: {e.strerror or e}{extra}") from None


def task_label(raw_id: int) -> str:
    """``t{local}`` on ring 0, else ``r{ring}t{local}`` (raw id = ring << 32 | local)."""
    ring, local = raw_id >> 32, raw_id & 0xFFFFFFFF
    return f"t{local}" if ring == 0 else f"r{ring}t{local}"


def _lane(core: int) -> int:
    return 10000 + 10 * core


class _Text:
    """The trace's JSON spelling of what orjson would spell otherwise than :func:`trace_json` (``json.dumps``
    compact): :meth:`name` a string (``\\u`` escapes beyond ASCII; once per string), ``v(x)`` any other value
    (json's C encoder, built once per trace). The events are dicts of those (:data:`.jsonenc.Raw`), ints and
    float times in µs, and the trace is one :func:`.jsonenc.plain_json` call: orjson spells a float as ``repr``
    does from 1e-4 on (a cycle at up to 10 GHz) and below 1e16."""

    def __init__(self) -> None:
        self.names: dict[str, Raw] = {}  # a plain dict: a dict subclass's subscript is a Python-level call
        self.v = compact_encoder(True)
        self.kinds: dict[str, str] = {}  # a phase kind's JSON text (_phase_args)
        self.depths: dict[tuple[int, ...], str] = {}  # a phase's queue depths' args text (_phase_args)

    def name(self, x: str) -> Raw:
        """``x`` as JSON text, once per trace."""
        text = self.names.get(x)
        if text is None:
            text = self.names[x] = Raw(encode_basestring_ascii(x))
        return text


def _label(x: str) -> str | Raw:
    """A label used once or twice: as it is where orjson spells it as json does (ASCII but DEL), else json's
    spelling (cheaper than a memo's miss)."""
    return x if x.isascii() and "\x7f" not in x else Raw(encode_basestring_ascii(x))


def _micros(base: int, freq: float, cycles: Iterable[int]) -> dict[int, float]:
    """Cycles -> µs from ``base`` at ``freq`` Hz, rounded to 6 decimals, once per value of ``cycles`` (a 0 is
    "not recorded": 0.0), in one pass: read as ``us[cycles]`` (a plain dict's hit, no function call; a trace
    reads ~300 of them)."""
    return {c: round6((c - base) * 1e6 / freq) if c else 0.0 for c in cycles}


def _meta(j: _Text, pid: int, tid: int | None, name: str) -> dict[str, Any]:
    """A process's (``tid`` None) or a lane's name, upstream's ``__metadata`` event."""
    if tid is None:
        return {"ph": "M", "pid": pid, "name": "process_name", "cat": "__metadata", "args": {"name": j.name(name)}}
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "cat": "__metadata", "args": {"name": j.name(name)}}


def _sort_index(pid: int, tid: int | None, index: int) -> dict[str, Any]:
    """A process's (``tid`` None) or a lane's place in Perfetto's list (upstream's ``*_sort_index``)."""
    if tid is None:
        return {"ph": "M", "pid": pid, "name": "process_sort_index", "cat": "__metadata", "args": {"sort_index": index}}
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "cat": "__metadata",
            "args": {"sort_index": index}}  # fmt: skip


def record_rows(records: Mapping[str, Any], key: str, width: int, *, required: bool = False) -> list[list[int]]:
    """A records file's ``key`` rows (``aicore_tasks``, ``aicpu_tasks``): lists of at least ``width`` integers
    in [0, 2**64) (ids and cycle counts; an AICore row's sixth, its receive-to-start cycles, too; none when the
    file has no ``key`` and it is not ``required``), else a :class:`TraceInputError` naming the first bad row."""
    rows = records.get(key, None if required else [])
    if not isinstance(rows, list):
        raise TraceInputError(f"'{key}' must be a list of rows of at least {width} integers, not {_kind(rows)}")
    for i, r in enumerate(rows):
        if not isinstance(r, list) or len(r) < width or not all(type(x) is int and 0 <= x < 1 << 64 for x in r):
            raise TraceInputError(
                f"'{key}' must be a list of rows of at least {width} integers (ids and cycles, >= 0 and below 2**64); "
                f"row {i} is {_short(r)}"
            )
    return rows


def record_core_to_thread(records: Mapping[str, Any]) -> list[int]:
    """A records file's ``metadata.core_to_thread`` (level >= 3): a list of scheduler thread numbers per core,
    -1 for none (empty when absent or null), else a :class:`TraceInputError`."""
    threads = records["metadata"].get("core_to_thread")
    if threads is None:
        return []
    if not isinstance(threads, list) or not all(type(t) is int for t in threads):
        raise TraceInputError(
            f"metadata.core_to_thread must be a list of integers (a scheduler thread per core, -1 for none), "
            f"not {_short(threads)}"
        )
    return threads


def _kind(value: Any) -> str:
    """A JSON value's kind, for a message."""
    kinds = {dict: "an object", list: "a list", str: "a string"}
    return "null" if value is None else kinds.get(type(value), "a number")


def _short(value: Any, limit: int = 60) -> str:
    """``value`` as JSON for a message, cut to ``limit`` characters."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def record_clock_hz(records: Mapping[str, Any]) -> float:
    """A records file's ``metadata.clock_freq_hz``: a positive number (cycles become µs through it), else a
    :class:`TraceInputError`."""
    try:
        freq = float(records["metadata"]["clock_freq_hz"])
    except (KeyError, TypeError, ValueError) as e:
        raise TraceInputError(f"metadata.clock_freq_hz is required ({e})") from None
    if not math.isfinite(freq) or freq <= 0:
        raise TraceInputError(f"metadata.clock_freq_hz must be a positive number of Hz, not {freq:g}")
    return freq


def _pair(
    events: list[Any],
    fid: int,
    n: Raw,
    spid: int,
    stid: int,
    sts: float,
    dpid: int,
    dtid: int,
    dts: float,
    bind: int | None = None,
    start_args: Mapping[str, Any] | None = None,
    end_args: Mapping[str, Any] | None = None,
) -> None:
    """One ``s``/``f`` flow pair with id ``fid`` (``n``: the flow's name as JSON) from ``(spid, stid, sts)`` to
    ``(dpid, dtid, dts)``: two items of ``events``; ``bind``: the ``id`` of the bar it leaves (upstream's
    ``bind_id`` on the start); ``start_args`` / ``end_args``: upstream's further fields of each end, after the
    others."""
    start = {"ph": "s", "pid": spid, "tid": stid, "ts": sts, "id": fid, "cat": "flow", "name": n}
    if bind is not None:
        start["bind_id"] = bind
    if start_args:
        start.update(start_args)
    events.append(start)
    end = {"ph": "f", "pid": dpid, "tid": dtid, "ts": dts, "id": fid, "cat": "flow", "name": n, "bp": "e"}
    if end_args:
        end.update(end_args)
    events.append(end)


PHASE_INTS = ("start_cycles", "end_cycles", "task_id", "loop_iter", "tasks_processed", "pop_hit", "pop_miss")
"""A phase record's fields that are integers when present (§2: cycles, ids and counts)."""


def record_phases(
    records: Mapping[str, Any], key: str, fields: Sequence[str], *, required: bool = False
) -> list[list[dict[str, Any]]]:
    """A records file's ``key`` phases (``aicpu_scheduler_phases``, ``aicpu_orchestrator_phases``): a list per
    thread of records holding ``fields``, their cycles, ids and counts (:data:`PHASE_INTS`) integers (none when
    the file has no ``key`` and it is not ``required``), else a :class:`TraceInputError` naming the first bad
    record."""
    threads = records.get(key, None if required else [])
    expected = f"'{key}' must be a list per thread of records with {', '.join(fields)} (cycles, ids, counts integers)"
    if not isinstance(threads, list):
        raise TraceInputError(f"{expected}, not {_kind(threads)}")
    for i, t in enumerate(threads):
        if not isinstance(t, list):
            raise TraceInputError(f"{expected}; thread {i} is {_kind(t)}")
        for n, p in enumerate(t):
            if not isinstance(p, dict) or not all(f in p for f in fields):
                raise TraceInputError(f"{expected}; [{i}][{n}] is {_short(p)}")
            bad = [f for f in PHASE_INTS if f in p and (type(p[f]) is not int or not -(1 << 63) <= p[f] < 1 << 64)]
            if bad:
                f = bad[0]
                raise TraceInputError(f"{expected}; [{i}][{n}].{f} is {_short(p[f])}, not an integer below 2**64")
    return threads


def _sched_lane(thread: int) -> int:
    return 30000 + 10 * thread


def chrome_trace(
    records: Mapping[str, Any],
    names: Mapping[int, str] | None = None,
    edges: Sequence[tuple[int, int]] = (),
    kernel_names: Mapping[tuple[int, str], str] | None = None,
    *,
    deps: DepsFacts | None = None,
) -> dict[str, Any]:
    """The trace of one run: ``records`` as ``chip_swimlane_records.json`` holds them, ``names`` the
    kernel name of each raw task id (labels ``<name>(t3)``; ``task(t3)`` without), ``edges`` the
    (producer, consumer) raw task id pairs, ``kernel_names`` a task's kernel per core type (before ``names``),
    ``deps`` a deps.json's facts (its pairs instead of ``edges``). The objects of :func:`chrome_trace_text`'s
    JSON."""
    return json.loads(chrome_trace_text(records, names, edges, kernel_names=kernel_names, deps=deps))


def chrome_trace_text(
    records: Mapping[str, Any],
    names: Mapping[int, str] | None = None,
    edges: Sequence[tuple[int, int]] = (),
    *,
    trusted: bool = False,
    kernel_names: Mapping[tuple[int, str], str] | None = None,
    deps: DepsFacts | None = None,
) -> str:
    """:func:`chrome_trace` as the text :func:`trace_json` writes for it: the events as dicts, their labels
    spelled once per run (:data:`.jsonenc.Raw`), written by one :func:`.jsonenc.plain_json` call: the merged
    trace a flagged run writes.
    ``trusted``: the records are :func:`.records.swimlane_records`'s of a run, not a file's: the shape of
    their rows and phases is not checked again. ``kernel_names``: the
    name of a task's kernel on a core type, ``(raw id, "aic" | "aiv") -> name`` (§3: a mixed task's AIC bar is
    its AIC kernel's, its AIV bars its AIV kernel's), before ``names``. ``deps``: a deps.json's facts
    (:func:`deps_facts`): its pairs (instead of ``edges``), the func_ids (§3's labels after ``names``, the bars'
    ``event-hint``) and the SPMD block counts."""
    if deps is not None:
        edges = deps.edges
    try:
        core_types = list(records["metadata"]["core_types"])
    except (KeyError, TypeError, ValueError) as e:
        raise TraceInputError(f"metadata.clock_freq_hz and metadata.core_types are required ({e})") from None
    freq = float(records["metadata"]["clock_freq_hz"]) if trusted else record_clock_hz(records)
    if trusted:
        aicore, cpu_rows = records["aicore_tasks"], records.get("aicpu_tasks", [])
        sched, orch = records.get("aicpu_scheduler_phases", []), records.get("aicpu_orchestrator_phases", [])
    else:
        aicore, cpu_rows = record_rows(records, "aicore_tasks", 5), record_rows(records, "aicpu_tasks", 4)
        sched = record_phases(records, "aicpu_scheduler_phases", ("kind", "start_cycles", "end_cycles", "tasks_processed"))
        orch = record_phases(records, "aicpu_orchestrator_phases", ("submit_idx", "task_id", "start_cycles", "end_cycles"))
        _check_records(records, aicore, sched)
    aicpu = {(r[0], r[1]): r for r in cpu_rows}
    core_to_thread = (records["metadata"].get("core_to_thread") or []) if trusted else record_core_to_thread(records)
    values = [c for r in aicore for c in r[3:5]] + [c for r in aicpu.values() for c in r[2:4]]
    phase_values = [p[k] for t in sched + orch for p in t for k in ("start_cycles", "end_cycles")]
    receives = [r[3] - r[5] for r in aicore if len(r) > 5]  # a worker bar's start (its row's start without)
    # the earliest time drawn: a worker bar starts at its receive, before its row's start (at level 1, with
    # no earlier dispatch or phase, a base without it put the first bar at -0.4 us: Perfetto refuses that)
    base = min([c for c in values if c] + [c for c in receives if c] + phase_values, default=0)
    us = _micros(base, freq, {*values, *receives, *phase_values})

    j = _Text()
    names = names or {}
    edges = list(dict.fromkeys(edges))  # a pair's several deps.json rows are one dependency (§3 draws pairs)
    blocks = _spmd_blocks(aicore, core_types, deps)
    labels = _Labels(names, kernel_names, deps, blocks)
    fanout: dict[int, list[int]] = {}  # §3's fanout-hint / fanin-hint, upstream's order: by producer, then edge
    for pred, succ in edges:
        fanout.setdefault(pred, []).append(succ)
    fanin: dict[int, list[int]] = {}
    for pred, succs in fanout.items():
        for succ in succs:
            fanin.setdefault(succ, []).append(pred)
    events: list[Any] = []
    cores = sorted({r[0] for r in aicore})
    lane_names = {}
    for core in cores:
        kind = core_types[core] if core < len(core_types) else "core"
        lane = lane_names[core] = f"{kind.upper()}_{core}"
        events.append(_meta(j, 4, _lane(core), lane))
    task_of: dict[tuple[int, int], tuple[int, float]] = {}  # (core, reg_task_id) -> (task token, kernel start)
    worker: dict[int, dict[Any, Anchor]] = {}  # task -> its Worker View arrow anchors (_anchor)
    views: list[tuple[int, float, int, int, int, float, dict[str, Any], Any]] = []  # the Scheduler View bars
    bars: dict[tuple[int, str], tuple[str | Raw, str, str, str, int | None]] = {}  # a task's texts per core type
    eid, view_id = 0, len(aicore)  # the bars' ids (upstream's: the Worker View's, then the Scheduler View's)
    for core, raw, reg, start, end, *rest in sorted(aicore, key=lambda r: (r[3], r[0])):
        receive = start - rest[0] if rest else start
        kind = core_types[core] if core < len(core_types) else "core"
        bar = bars.get((raw, kind))
        if bar is None:  # once per task and core type: its label, §3's hints and its anchors' group
            tl = task_label(raw)
            name, fid = labels.bar(raw, kind)
            outs, ins = fanout.get(raw, ()), fanin.get(raw, ())
            bar = bars[(raw, kind)] = (_label(f"{name}({tl})"), f"Task:{tl}, FuncId:{fid}, CoreId:",
                                       f"{len(outs)}: [{', '.join(map(task_label, outs))}]",
                                       f"{len(ins)}: [{', '.join(map(task_label, ins))}]",
                                       fid if raw in blocks else None)  # fmt: skip
        label, hint, group = bar[0], f"{bar[1]}{core}", bar[4]
        ts, t_start, t_end = us[receive], us[start], us[end]
        lane, dur = _lane(core), round6(t_end - ts)
        events.append({"ph": "X", "pid": 4, "tid": lane, "name": label, "ts": ts, "dur": dur, "cat": "event", "id": eid,
                       "args": {"event-hint": hint, "fanout-hint": bar[2], "fanin-hint": bar[3], "duration-us": dur,
                                "kernel-duration-us": round6(t_end - t_start), "local_setup_us": round6(t_start - ts),
                                "taskId": raw}})  # fmt: skip
        key = (core, reg)
        task_of[key] = (raw, t_start)
        _anchor(worker, raw, key if group is None else group, (ts, core, lane, t_end, eid))
        eid += 1
        cpu = aicpu.get(key)
        if cpu is not None:
            d, fin = us[cpu[2]], us[cpu[3]]
            if fin > 0:  # upstream draws no Scheduler View bar (nor its flows) finishing at or before time 0
                dur = round6(fin - d)
                event = {"ph": "X", "pid": 3, "tid": lane, "name": label, "ts": d, "dur": dur, "cat": "event",
                         "id": view_id, "args": {"event-hint": hint, "dispatch-time-us": d, "finish-time-us": fin,
                                                 "aicpu-duration-us": dur, "taskId": raw}}  # fmt: skip
                events.append(event)
                views.append((core, d, raw, reg, view_id, fin, event, key if group is None else group))
                view_id += 1
    scheduler, view_of = _view_lanes(j, events, views, lane_names)
    markers = _Markers(j, events, labels, deps, set(worker), sched, orch, core_to_thread, view_id)
    held, attributed = _finished_in(sched, core_to_thread, aicpu, task_of, us)
    submits = _aicpu_lanes(j, events, sched, orch, core_to_thread, us, markers, attributed)
    flow = 0
    if sched and views:  # upstream: with scheduler phases and a Scheduler View bar
        flow = _dispatch_flows(j, events, flow, core_to_thread, aicpu, task_of, view_of, submits, us)
    flow = _complete_flows(j, events, flow, held, aicpu, task_of, worker, scheduler, fanout, fanin, core_to_thread, us)
    for raw, marked in markers.anchors.items():  # a task with no kernel row: its arrows from every marker of it
        if raw not in worker:
            worker[raw] = dict(enumerate(marked))
    # dependency flows (hb_violation when the producer's anchor ends after the consumer's starts): worker view
    # (bar start to bar start), scheduler view (dispatch to dispatch; it ends at the finish), from each anchor of
    # the producer to each of the consumer, with §3's input_task_count / output_task_count (upstream: beside
    # the flow's fields, on both ends) and the ids of the two bars (bind_id)
    dependency, late = j.name("dependency"), j.name("hb_violation")
    for pred, succ in edges:
        counts = (blocks.get(succ, 1), blocks.get(pred, 1))
        for pid, anchors in ((4, worker), (3, scheduler)):
            if pred in anchors and succ in anchors:
                tos = anchors[succ].values()
                for pts, _, ptid, pend, pbar in anchors[pred].values():
                    for sts, _, stid, _, sbar in tos:
                        flow += 1
                        _dependency_pair(events, flow, late if pend > sts else dependency, pid, (ptid, pts, pbar),
                                         (stid, sts, sbar), counts)  # fmt: skip
    # upstream names (and sorts: sort_index = pid) a process only when it has its data
    present = (1 if orch else 0, 2 if sched else 0, 3 if views else 0, 4)
    events[:0] = [e for pid in present if pid for e in (_meta(j, pid, None, PROCESSES[pid]), _sort_index(pid, None, pid))]
    try:
        return plain_json({"traceEvents": events}) + "\n"
    except TypeError:  # a value orjson cannot spell (an id beyond 64 bits), beside the labels json cannot
        raise TraceInputError("an id or cycle count in the records is not an integer below 2**64") from None


Anchor = tuple[float, int, int, float, int]
"""Where a task's dependency arrows start and end on a view: (bar start, core, tid, bar end, bar id)."""


def _anchor(anchors: dict[int, dict[Any, Anchor]], raw: int, slot: Any, anchor: Anchor) -> None:
    """Keep ``anchor``, a bar of task ``raw``, in its ``slot`` (upstream's rule): a plain task's every bar (each
    core of a mixed task; slot: the row), an SPMD task's earliest bar (by start, then core) per func_id (slot:
    the func_id)."""
    mine = anchors.get(raw)
    if mine is None:
        anchors[raw] = {slot: anchor}
    elif slot not in mine or anchor < mine[slot]:
        mine[slot] = anchor


def _dependency_pair(
    events: list[Any],
    fid: int,
    n: Raw,
    pid: int,
    source: tuple[int, float, int],
    target: tuple[int, float, int],
    counts: tuple[int, int],
) -> None:
    """A ``dependency`` / ``hb_violation`` pair on ``pid`` from ``source`` to ``target`` (tid, ts, the bar's
    ``id`` as upstream's ``bind_id``): :func:`_pair`'s events with ``input_task_count`` and
    ``output_task_count`` (``counts``: the consumer's and the producer's SPMD blocks, 1 for a plain task)."""
    i, o = counts
    (stid, sts, sbind), (dtid, dts, dbind) = source, target
    _pair(events, fid, n, pid, stid, sts, pid, dtid, dts,
          start_args={"input_task_count": i, "output_task_count": o, "bind_id": sbind},
          end_args={"input_task_count": i, "output_task_count": o, "bind_id": dbind})  # fmt: skip


def _view_lanes(
    j: _Text,
    events: list[Any],
    views: list[tuple[int, float, int, int, int, float, dict[str, Any], Any]],
    lane_names: Mapping[int, str],
) -> tuple[dict[int, dict[Any, Anchor]], dict[tuple[int, int], tuple[int, int]]]:
    """The Scheduler View bars' lanes (§3, upstream's rule): per core in dispatch order (then task, then
    dispatch number), each bar on the core's first lane (tid + 0, 1, ...) whose last bar finished by its
    dispatch; a core's lane with bars and its tid + 1 are named as the core's lane (upstream names no other).
    ``views``: (core, dispatch, task, reg_task_id, id, finish, event, anchor slot) per bar. Returns each task's
    arrow anchors on the view (:func:`_anchor`) and each bar's (tid, id) by (core, reg_task_id)."""
    anchors: dict[int, dict[Any, Anchor]] = {}
    view_of: dict[tuple[int, int], tuple[int, int]] = {}
    overflow: set[int] = set()
    views.sort()  # the ids are distinct: the events and slots are never compared
    finish: list[float] = []
    current = None
    for core, d, raw, reg, vid, fin, event, slot in views:
        if core != current:
            current, finish = core, [0.0]
            events.append(_meta(j, 3, _lane(core), lane_names[core]))
        n = 0
        while n < len(finish) and finish[n] > d:
            n += 1
        if n == len(finish):
            finish.append(fin)
        else:
            finish[n] = fin
        tid = _lane(core) + n
        if n:
            event["tid"] = tid
            if n == 1:
                overflow.add(core)
        _anchor(anchors, raw, slot, (d, core, tid, fin, vid))
        view_of[(core, reg)] = (tid, vid)
    events += [_meta(j, 3, _lane(core) + 1, lane_names[core]) for core in sorted(overflow)]
    return anchors, view_of


def _spmd_blocks(aicore: Sequence[Sequence[int]], core_types: Sequence[str], deps: DepsFacts | None) -> dict[int, int]:
    """Each SPMD task's block count, as upstream tells them: deps.json's ``block_num`` > 1; a task deps.json does
    not list is SPMD when it has several rows, all on one core type (its rows count). Plain tasks are absent."""
    listed = deps.block_nums if deps is not None else {}
    out = {raw: n for raw, n in listed.items() if n > 1}
    rows: dict[int, int] = {}
    kinds: dict[int, str | None] = {}
    for r in aicore:
        raw = r[1]
        if raw in listed:
            continue
        kind = core_types[r[0]] if r[0] < len(core_types) else "core"
        rows[raw] = rows.get(raw, 0) + 1
        kinds[raw] = kind if kinds.get(raw, kind) == kind else None
    out.update((raw, n) for raw, n in rows.items() if n > 1 and kinds[raw] is not None)
    return out


class _Labels:
    """§3's task names: ``kernel_names``, then ``names`` (a run's own), then deps.json's func_id (the name
    map's name, else ``func_<id>_<letters>``; ``_spmd`` before ``(`` for an SPMD task), else ``task``."""

    def __init__(
        self,
        names: Mapping[int, str],
        kernel_names: Mapping[tuple[int, str], str] | None,
        deps: DepsFacts | None,
        blocks: Mapping[int, int],
    ) -> None:
        self.names, self.kernel_names, self.deps, self.blocks = names, kernel_names or {}, deps, blocks

    def bar(self, raw: int, kind: str) -> tuple[str, int]:
        """The name of a task's bars on core type ``kind`` and their func_id (-1: unresolved)."""
        fid = self.deps.func_id(raw, kind) if self.deps is not None else -1
        given = self.kernel_names.get((raw, kind)) or self.names.get(raw)
        return (given if given is not None else self._resolved(raw, fid)), fid

    def marker(self, raw: int) -> str:
        """The name of a task a scheduler thread ran itself (no core type: its first active func_id)."""
        given = self.names.get(raw)
        return given if given is not None else self._resolved(raw, self.deps.first_func_id(raw) if self.deps else -1)

    def _resolved(self, raw: int, fid: int) -> str:
        name = "task" if fid < 0 else func_label(fid, self.deps.func_names if self.deps else {})
        return name + "_spmd" if raw in self.blocks and "spmd" not in name.lower() else name


class _Markers:
    """Worker View's AICPU lanes (§3, tid :data:`AICPU_LANE` + j ``AICPU_j``): the scheduler threads' markers
    (``dummy_task``, ``predicated_skip``) on ``AICPU_<thread>``, then each orchestrator thread's ``alloc``
    markers on ``AICPU_<scheduler threads + i>``: its alloc steps, and (upstream's rule) a submit of a task
    that has no kernel row and is neither a dummy nor a skipped task. :attr:`anchors`: each marked task's
    markers (upstream: where its dependency arrows start and end when it has no kernel bar); the markers' ids
    count from ``first_id``."""

    def __init__(
        self,
        j: _Text,
        events: list[Any],
        labels: _Labels,
        deps: DepsFacts | None,
        regular: set[int],
        sched: Sequence[Sequence[Mapping[str, Any]]],
        orch: Sequence[Sequence[Mapping[str, Any]]],
        core_to_thread: Sequence[int],
        first_id: int,
    ) -> None:
        self.j, self.events, self.labels, self.deps, self.regular = j, events, labels, deps, regular
        self.next_id = first_id
        used = {t for t in core_to_thread if t >= 0} | {i for i, thread in enumerate(sched) if thread}
        self.orch_base = max(used) + 1 if used else len(sched)  # upstream: the orchestrators' lanes follow
        self.lanes: dict[int, list[tuple[float, float, dict[str, Any]]]] = {}
        self.anchors: dict[int, list[Anchor]] = {}
        self.skipped: set[Any] = set()  # the tasks of the scheduler threads' markers (drawn before any alloc)
        for i in range(self.orch_base + len(orch)):
            events.append(_meta(j, 4, AICPU_LANE + i, f"AICPU_{i}"))

    def scheduled(self, thread: int, p: Mapping[str, Any], ts: float, end: float) -> None:
        """A scheduler thread's ``dummy_task`` / ``predicated_skip`` record."""
        raw = p.get("task_id")
        self.skipped.add(raw)
        tl = task_label(raw) if type(raw) is int else "unknown"
        dummy = p["kind"] == "dummy_task"
        name = f"dummy({tl})" if dummy else f"{self.labels.marker(raw)}({tl})" if type(raw) is int else f"task({tl})"
        args: dict[str, Any] = {"loop_iter": p.get("loop_iter", 0), "task_id": raw, "event-hint": name}
        if dummy:
            args["phase"] = "dummy_task"
        else:
            args["predicated_pass"] = False
        self._add(AICPU_LANE + thread, raw, name, ts, end, args)

    def submitted(self, thread: int, kind: str, raw: int, ts: float, end: float) -> None:
        """An orchestrator record: a marker when it is an alloc (see the class)."""
        if kind != "alloc" and (
            (self.deps is not None and raw in self.deps.kernel_ids) or raw in self.regular or raw in self.skipped
        ):
            return  # a task deps.json lists (a kernel's or a dummy), one with a kernel bar or a marker
        name = f"alloc({task_label(raw)})"
        event = self._add(AICPU_LANE + self.orch_base + thread, raw, name, ts, end,
                          {"phase": "alloc", "task_id": raw, "event-hint": name})  # fmt: skip
        event["cname"] = "olive"  # upstream's colour of an alloc marker

    def _add(self, tid: int, raw: Any, name: str, ts: float, end: float, args: dict[str, Any]) -> dict[str, Any]:
        event = {"ph": "X", "pid": 4, "tid": tid, "name": _label(name), "ts": ts, "cat": "event", "id": self.next_id,
                 "args": args}  # fmt: skip
        self.lanes.setdefault(tid, []).append((ts, end, event))
        if type(raw) is int:
            self.anchors.setdefault(raw, []).append((ts, -1, tid, max(end, ts + MARKER_MIN_US), self.next_id))
        self.next_id += 1
        return event

    def draw(self) -> None:
        """The markers, each at least :data:`MARKER_MIN_US` long but not into the next one on its lane (the
        lane's bars stay disjoint)."""
        for bars in self.lanes.values():
            bars.sort(key=lambda b: (b[0], b[1]))
            for n, (ts, end, event) in enumerate(bars):
                longest = bars[n + 1][0] - ts if n + 1 < len(bars) and bars[n + 1][0] > ts else math.inf
                event["dur"] = round6(max(end - ts, min(MARKER_MIN_US, longest)))
                self.events.append(event)


def _aicpu_lanes(
    j: _Text,
    events: list[Any],
    sched: list[list[dict[str, Any]]],
    orch: list[list[dict[str, Any]]],
    core_to_thread: list[int],
    us: Mapping[int, float],
    markers: _Markers,
    attributed: Mapping[tuple[int, int], int],
) -> dict[int, tuple[int, float]]:
    """pid 1 and 2 (level 4 and 3 records): the lanes and the queue counter, and ``markers``' AICPU lanes
    (``attributed``: each complete phase's finished rows, :func:`_finished_in`). Returns each task's first
    submit: (orchestrator lane, its end), where its ``submit→dispatch`` flows start."""
    counters: list[tuple[float, int, int, list[int]]] = []
    for i, thread in enumerate(sched):
        events.append(_meta(j, 2, _sched_lane(i), f"Sched_{i}"))
        if any([p["kind"] == "resolve" for p in thread]):
            events.append(_meta(j, 2, _sched_lane(i) + 1, f"Sched_{i}"))  # upstream names both lanes alike
        outer_lane = _sched_lane(i)
        for n, p in enumerate(thread):
            kind, start, end = p["kind"], p["start_cycles"], p["end_cycles"]
            ts = us[start]
            if kind in MARKER_PHASES:  # a task the thread ran itself: on its Worker View AICPU lane
                markers.scheduled(i, p, ts, us[end])
                continue
            first, depth = p.get("shared_at_start"), p.get("shared_at_end")
            depths_ok = type(first) is list and len(first) == 3 and type(depth) is list and len(depth) == 3
            rows = attributed.get((i, n), 0) if kind == "complete" else 0
            events.append({"ph": "X", "pid": 2, "tid": outer_lane + 1 if kind == "resolve" else outer_lane,
                           "name": _label(f"{kind}({p['tasks_processed']})"), "ts": ts, "dur": round6(us[end] - ts),
                           "cat": "scheduler", "cname": PHASE_CNAMES.get(kind, "generic_work"),
                           "args": Raw(_phase_args(j, p, depths_ok, rows))})  # §3: only resolve on tid + 1  # fmt: skip
            if depths_ok and (kind == "complete" or kind == "dispatch"):  # upstream: the others' are zero-filled
                counters.append((us[end], i, n, depth))  # one sample, at the end (the next phase's start)
    if sched:  # upstream names the counter's lane (after the threads') whenever there are scheduler phases
        events += [_meta(j, 2, QUEUE_LANE, "shared_ready_queue (global)"), _sort_index(2, QUEUE_LANE, 100)]
    counters.sort()  # (ts, thread, phase) are distinct: the depths are never compared
    depths: dict[tuple[int, ...], Raw] = {}
    for ts, _, _, depth in counters:
        key = tuple(depth)
        plain = type(key[0]) is int and type(key[1]) is int and type(key[2]) is int  # a memo of ints only: 1 and True are one key
        args = depths.get(key) if plain else None
        if args is None:
            args = Raw(f'{{"AIC":{j.v(depth[0])},"AIV":{j.v(depth[1])},"MIX":{j.v(depth[2])}}}')
            if plain:
                depths[key] = args
        events.append({"ph": "C", "pid": 2, "tid": QUEUE_LANE, "name": "shared_ready_queue", "ts": ts, "cat": "queue",
                       "args": args})  # fmt: skip
    v = j.v
    submits: dict[int, tuple[int, float]] = {}
    for i, thread in enumerate(orch):
        tid = 4000 + i
        events.append(_meta(j, 1, tid, f"Orch_{i}"))
        for p in thread:
            raw = int(p["task_id"])
            ts = us[p["start_cycles"]]
            end = us[p["end_cycles"]]
            kind = "alloc" if p.get("kind") == "alloc" else "submit"  # an alloc step before the task's submit
            name = _label(f"{kind}({task_label(raw)})")
            idx = p["submit_idx"]
            phase = f"orch_{kind}"
            events.append({"ph": "X", "pid": 1, "tid": tid, "name": name, "ts": ts, "dur": round6(end - ts),
                           "cat": "orchestrator", "cname": ORCH_CNAMES.get(phase, "generic_work"),
                           "args": {"phase": phase, "submit_idx": idx if type(idx) is int else Raw(v(idx)),
                                    "task_id": raw}})  # fmt: skip
            if raw >= 0:
                markers.submitted(i, kind, raw, ts, end)
                if kind == "submit" and raw not in submits:
                    submits[raw] = (tid, end)
    markers.draw()
    return submits


def _dispatch_flows(
    j: _Text,
    events: list[Any],
    flow: int,
    core_to_thread: Sequence[int],
    aicpu: Mapping[tuple[int, int], list[int]],
    starts: Mapping[tuple[int, int], tuple[int, float]],
    view_of: Mapping[tuple[int, int], tuple[int, int]],
    submits: Mapping[int, tuple[int, float]],
    us: Mapping[int, float],
) -> int:
    """Upstream's per task row, from its core's scheduler thread's lane (``Sched_i``) at its dispatch: two
    ``dispatch`` flows, to its Worker View bar at the kernel's start and to its Scheduler View bar (``view_of``:
    (tid, id); the core's lane and no ``bind_id`` without one) at the dispatch, and a ``submit→dispatch`` from
    the end of its task's first submit (``submits``) to that dispatch. ``starts``: a row's task and kernel start
    by (core, reg_task_id); returns the last flow id."""
    dispatch, submit = j.name("dispatch"), j.name("submit→dispatch")
    threads = len(core_to_thread)
    for key, row in aicpu.items():
        core = key[0]
        thread = core_to_thread[core] if core < threads else -1
        task = starts.get(key)
        if thread < 0 or task is None:
            continue
        lane, ts = _sched_lane(thread), us[row[2]]
        flow += 1
        _pair(events, flow, dispatch, 2, lane, ts, 4, _lane(core), task[1])
        flow += 1
        view = view_of.get(key)  # the row's Scheduler View bar: its lane and id
        _pair(events, flow, dispatch, 2, lane, ts, 3, _lane(core) if view is None else view[0], ts,
              end_args=None if view is None else {"bind_id": view[1]})  # fmt: skip
        orch = submits.get(task[0])
        if orch is not None:
            flow += 1
            _pair(events, flow, submit, 1, orch[0], orch[1], 2, lane, ts)
    return flow


def _phase_args(j: _Text, p: Mapping[str, Any], depths: bool, rows: int) -> str:
    """A scheduler phase bar's ``args`` as upstream writes them: ``phase`` (the kind), ``loop_iter`` (0 when
    absent), ``tasks_processed``, with both queue depth lists (``depths``) ``shared_at_start (aic,aiv,mix)`` and
    ``shared_at_end (aic,aiv,mix)``, and on a complete phase ``finishes_processed`` (its ``tasks_processed``)
    and ``finish_rows_attributed`` (``rows``: :func:`_finished_in`). One string per phase: its ints as they
    are, anything else as json spells it; the kinds' and the depth pairs' texts once per trace."""
    kind, loops, done = p["kind"], p.get("loop_iter", 0), p["tasks_processed"]
    if type(loops) is not int:
        loops = j.v(loops)
    if type(done) is not int:
        done = j.v(done)
    head = j.kinds.get(kind) if type(kind) is str else j.v(kind)
    if head is None:
        head = j.kinds[kind] = encode_basestring_ascii(kind)
    tail = ""
    if depths:
        a0, a1, a2 = a = p["shared_at_start"]
        e0, e1, e2 = e = p["shared_at_end"]
        ints = type(a0) is int and type(a1) is int and type(a2) is int
        if ints and type(e0) is int and type(e1) is int and type(e2) is int:  # a memo of ints: 1 and True are one key
            key = (a0, a1, a2, e0, e1, e2)
            tail = j.depths.get(key, "")
            if not tail:
                tail = j.depths[key] = (f',"shared_at_start (aic,aiv,mix)":[{a0},{a1},{a2}]'
                                        f',"shared_at_end (aic,aiv,mix)":[{e0},{e1},{e2}]')  # fmt: skip
        else:
            tail = f',"shared_at_start (aic,aiv,mix)":{j.v(a)},"shared_at_end (aic,aiv,mix)":{j.v(e)}'
    if kind == "complete":
        return (f'{{"phase":{head},"loop_iter":{loops},"tasks_processed":{done}{tail},"finishes_processed":{done},'
                f'"finish_rows_attributed":{rows}}}')  # fmt: skip
    return f'{{"phase":{head},"loop_iter":{loops},"tasks_processed":{done}{tail}}}'


def _finished_in(
    sched: Sequence[Sequence[Mapping[str, Any]]],
    core_to_thread: Sequence[int],
    aicpu: Mapping[tuple[int, int], list[int]],
    rows: Mapping[tuple[int, int], Any],
    us: Mapping[int, float],
) -> tuple[dict[tuple[int, int], tuple[int, int, Mapping[str, Any]]], dict[tuple[int, int], int]]:
    """Upstream's complete phase of each task row (an ``aicpu_tasks`` row with its ``aicore_tasks`` row): of its
    core's scheduler thread's complete phases (by start), the last starting at or before the row's finish when
    it holds it (of two touching phases, the one starting there), else the next one (``rows``: the rows with an
    ``aicore_tasks`` row, by (core, reg_task_id)); ``(core, reg_task_id) -> (thread, phase index, phase)``, and
    each phase's count of them (upstream's ``finish_rows_attributed``), ``(thread, phase index) -> rows``."""
    starts: list[list[float]] = []
    completes: list[list[tuple[float, int, float]]] = []
    for thread in sched:
        mine = sorted([(us[p["start_cycles"]], n, us[p["end_cycles"]]) for n, p in enumerate(thread)
                       if p["kind"] == "complete"])  # fmt: skip
        completes.append(mine)
        starts.append([c[0] for c in mine])
    held: dict[tuple[int, int], tuple[int, Mapping[str, Any]]] = {}
    counts: dict[tuple[int, int], int] = {}
    if not any(completes):
        return held, counts
    for key, row in aicpu.items():
        core = key[0]
        thread = core_to_thread[core] if core < len(core_to_thread) else -1
        if not 0 <= thread < len(sched) or key not in rows or not completes[thread]:
            continue
        fin = us[row[3]]
        i = bisect_right(starts[thread], fin)
        if i and completes[thread][i - 1][2] >= fin:
            i -= 1  # the last complete starting at or before the finish holds it
        elif i == len(starts[thread]):
            continue
        n = completes[thread][i][1]
        held[key] = (thread, n, sched[thread][n])
        counts[(thread, n)] = counts.get((thread, n), 0) + 1
    return held, counts


def _complete_flows(
    j: _Text,
    events: list[Any],
    flow: int,
    held: Mapping[tuple[int, int], tuple[int, int, Mapping[str, Any]]],
    aicpu: Mapping[tuple[int, int], list[int]],
    task_of: Mapping[tuple[int, int], tuple[int, float]],
    worker: Mapping[int, Mapping[Any, Anchor]],
    scheduler: Mapping[int, Mapping[Any, Anchor]],
    fanout: Mapping[int, Sequence[int]],
    fanin: Mapping[int, Sequence[int]],
    core_to_thread: Sequence[int],
    us: Mapping[int, float],
) -> int:
    """Level 3, upstream's rules. ``complete``: per task, to the complete phase of its last-finishing row
    (``held``: :func:`_finished_in`), at that finish (the phase's start when it does not hold it), from just
    before the end of each of its anchors on Worker View and Scheduler View (``worker``, ``scheduler``: its
    kernel bars' :func:`_anchor`; bound to the bar's ``id``). ``complete→ready``: the complete phases in order of
    end (then thread) count their tasks' consumers' fanins; the one satisfying a consumer's last fanin draws it,
    from just before its end to the consumer's earliest dispatch on its thread's lane, unless that dispatch is
    earlier. Returns the last flow id."""
    last: dict[int, tuple[int, int]] = {}  # task -> its last-finishing row
    first: dict[int, tuple[int, int]] = {}  # task -> its earliest-dispatched row
    for key, row in aicpu.items():
        task = task_of.get(key)
        if task is None:
            continue
        raw = task[0]
        if raw not in last or row[3] > aicpu[last[raw]][3]:
            last[raw] = key
        if raw not in first or row[2] < aicpu[first[raw]][2]:
            first[raw] = key
    complete_flow = j.name("complete")
    done: dict[tuple[int, int], tuple[float, float, list[int]]] = {}  # (thread, phase index) -> (end, start, tasks)
    for raw in sorted(last):
        key = last[raw]
        if key not in held:
            continue
        thread, n, phase = held[key]
        lane, fin, start, end = _sched_lane(thread), us[aicpu[key][3]], us[phase["start_cycles"]], us[phase["end_cycles"]]
        done.setdefault((thread, n), (end, start, []))[2].append(raw)
        to = fin if start <= fin <= end else start
        for pid, anchors in ((4, worker), (3, scheduler)):
            for _, _, tid, bar_end, bar in anchors.get(raw, {}).values():
                flow += 1
                ts = max(round6(bar_end - FLOW_EPSILON_US), 0.0)
                _pair(events, flow, complete_flow, pid, tid, ts, 2, lane, to, bar)
    ready_flow = j.name("complete→ready")
    satisfied: dict[int, int] = {}
    threads = len(core_to_thread)
    # by end, then thread, then the thread's order by start (upstream's stable sorts)
    for (thread, _), (end, _, tasks) in sorted(done.items(), key=lambda d: (d[1][0], d[0][0], d[1][1], d[0][1])):
        ts = max(round6(end - FLOW_EPSILON_US), 0.0)
        for raw in tasks:
            for succ in fanout.get(raw, ()):
                count = satisfied[succ] = satisfied.get(succ, 0) + 1
                if count != len(fanin[succ]) or succ not in first:
                    continue
                core, _ = key = first[succ]
                d = us[aicpu[key][2]]
                to = core_to_thread[core] if core < threads else -1
                if to >= 0 and d >= end:  # upstream: none to a consumer dispatched before the complete ended
                    flow += 1
                    _pair(events, flow, ready_flow, 2, _sched_lane(thread), ts, 2, _sched_lane(to), d)
    return flow
@dataclass(frozen=True)
class DepsFacts:
    """What the trace takes from a deps.json (§3): its distinct (pred, succ) pairs in their first order, each
    listed task's ``kernel_ids`` ``[aic, aiv0, aiv1]`` and ``block_num``, and a name map's names by func_id."""

    edges: list[tuple[int, int]]
    kernel_ids: dict[int, tuple[int, int, int]]
    block_nums: dict[int, int]
    func_names: Mapping[str, str]

    def func_id(self, raw: int, kind: str) -> int:
        """The func_id of a task's bars on core type ``kind`` (§3: aic slot 0; aiv slot 1, else 2), -1 when
        unresolved."""
        kids = self.kernel_ids.get(raw)
        if kids is None:
            return -1
        if kind == "aic":
            return kids[0] if kids[0] >= 0 else -1
        return kids[1] if kids[1] >= 0 else kids[2] if kids[2] >= 0 else -1

    def first_func_id(self, raw: int) -> int:
        """A task's first active func_id (a task drawn without a core type), -1 for none."""
        return next((k for k in self.kernel_ids.get(raw, ()) if k >= 0), -1)


def deps_facts(
    tasks: Mapping[int, Mapping[str, Any]],
    pairs: Iterable[tuple[int, int]],
    func_names: Mapping[str, str] | None = None,
) -> DepsFacts:
    """The :class:`DepsFacts` of a deps.json its reader checked (``tasks``: the task objects by raw id,
    ``pairs``: its edges' (pred, succ) in file order; ``pypto.tools.deps_viewer.check_deps``) and of a name map
    (:func:`func_name_table`). As upstream reads them: ``kernel_ids`` of three slots (others are not read),
    ``block_num`` at least 1."""
    kernel_ids = {raw: (k[0], k[1], k[2]) for raw, t in tasks.items() if len(k := t.get("kernel_ids", ())) == 3}
    blocks = {raw: max(int(t.get("block_num", 1)), 1) for raw, t in tasks.items()}
    return DepsFacts(list(dict.fromkeys(pairs)), kernel_ids, blocks, func_names or {})


def func_label(func_id: int, func_names: Mapping[str, str]) -> str:
    """§3's name of a resolved func_id: the name map's, else ``func_<id>_<letters>``, the letters ``id + 1``
    in bijective base 26 (0 ``func_0_a``, 25 ``func_25_z``, 26 ``func_26_aa``)."""
    name = func_names.get(str(func_id))
    if name is not None:
        return name
    letters, m = "", func_id + 1
    while m > 0:
        m, rem = divmod(m - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return f"func_{func_id}_{letters}"


def _check_records(records: Mapping[str, Any], aicore: Sequence[Sequence[int]], sched: Sequence[Sequence[Any]]) -> None:
    """What a records file's rows and phases (already checked) must also be to be drawn: a level of §2, a
    core type per core an ``aicore_tasks`` row names and a scheduler phase kind of §2; else a
    :class:`TraceInputError` naming the first field that is not."""
    if "chip_swimlane_level" in records:
        level = records["chip_swimlane_level"]
        if type(level) is not int or level not in SWIMLANE_LEVELS:
            raise TraceInputError(f"chip_swimlane_level is {_short(level)}, not one of 1, 2, 3, 4")
    core_types = records["metadata"]["core_types"]
    if not isinstance(core_types, list):
        raise TraceInputError(f'metadata.core_types must be a list of "aic" / "aiv" per core, not {_kind(core_types)}')
    for i, kind in enumerate(core_types):
        if kind not in ("aic", "aiv"):
            raise TraceInputError(f'metadata.core_types[{i}] is {_short(kind)}, not "aic" or "aiv"')
    if aicore and max(r[0] for r in aicore) >= len(core_types):
        i, row = next((i, r) for i, r in enumerate(aicore) if r[0] >= len(core_types))
        raise TraceInputError(
            f"aicore_tasks[{i}] is on core {row[0]}, but metadata.core_types has {len(core_types)} entries (a core "
            "type per core id)"
        )
    kinds = (*OUTER_PHASES, *INNER_PHASES, *MARKER_PHASES)
    for i, thread in enumerate(sched):
        for n, p in enumerate(thread):
            if type(p["kind"]) is not str or p["kind"] not in kinds:
                raise TraceInputError(
                    f"aicpu_scheduler_phases[{i}][{n}].kind is {_short(p['kind'])}, not one of §2's kinds "
                    f"({', '.join(kinds)})"
                )


def func_name_table(name_map: Any) -> dict[str, str]:
    """func_id (as text) -> kernel name of a name map: its ``callable_id_to_name``, or a flat
    ``{"<func_id>": "<name>"}`` as deps_viewer reads it. Anything else (another artefact given as the name
    map) is a :class:`TraceInputError`."""
    table = name_map.get("callable_id_to_name", name_map) if isinstance(name_map, dict) else None
    if not isinstance(table, dict) or not all(str(k).lstrip("-").isdigit() and isinstance(v, str) for k, v in table.items()):
        raise TraceInputError('expected a name map {"callable_id_to_name": {"<func_id>": "<name>"}}')
    return {str(k): v for k, v in table.items()}


def trace_json(trace: Mapping[str, Any]) -> str:
    """The trace as deterministic JSON text."""
    return json.dumps(trace, indent=None, separators=(",", ":")) + "\n"
