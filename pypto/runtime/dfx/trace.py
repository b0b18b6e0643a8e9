"""The merged swimlane: swimlane records (and ``deps.json``) as a Chrome Trace Event JSON
(runtime-dfx-formats.md §3), the file Perfetto's UI and ``chrome://tracing`` open.

Processes: 1 AICPU Orchestrator (level 4: lane ``Orch_i`` = tid 4000+i, one ``submit(rXtY)`` bar per
submit), 2 AICPU Scheduler (level 3: lane ``Sched_i`` = tid 30000+10i, one ``<phase>(<tasks_processed>)``
bar per phase, and the ``shared_ready_queue`` counter (AIC/AIV/MIX depths) on tid 3999), 3 Scheduler
View (one bar per task and core from dispatch to finish), 4 Worker View (one bar per task and core
from receive to end; a bar is named ``<kernel>(t3)``, a mixed task's AIC bar by its AIC kernel and its AIV
bars by its AIV kernel, §3's slots). Times are µs from the smallest non-zero cycle value of the task rows
and receives (§2's reader; a 0 there means "not recorded"), or from an earlier phase time (a phase's 0 is a
real time: the simulated orchestrator starts at cycle 0). Flows: dependency (``deps.json`` pairs) bar start to bar
start on pid 4 and dispatch to dispatch on pid 3, ``hb_violation`` when the producer ends after its
consumer starts; ``dispatch`` from the scheduler phase that popped a task to its worker bar;
``submit→dispatch`` from a task's submit to that phase.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from pypto.errors import Error
from pypto.utils.cli import read_input_text

from .jsonenc import Raw, compact_encoder, plain_json, round6

PROCESSES = {1: "AICPU Orchestrator", 2: "AICPU Scheduler", 3: "Scheduler View", 4: "Worker View"}
INNER_PHASES = ("resolve", "drain_prepare", "drain_publish")
"""§2's inner scheduler phases (inside an outer one): drawn on the thread's second lane (tid + 1)."""


class TraceInputError(Error, ValueError):
    """Swimlane records or deps.json that do not have the documented shape (one line)."""


def read_json_file(path: Path, what: str, hint: str = "") -> Any:
    """The JSON in ``path`` (the ``what`` a tool reads); an unreadable or malformed file is a
    :class:`TraceInputError` naming the file (and the line and column), with ``hint`` on a missing file."""
    try:
        return json.loads(read_input_text(path, f"the {what}"))
    except OSError as e:
        extra = f" ({hint})" if hint else ""
        raise TraceInputError(f"{path}: cannot read the {what}: {e.strerror or e}{extra}") from None
    except json.JSONDecodeError as e:
        raise TraceInputError(f"{path}:{e.lineno}:{e.colno}: the {what} is not JSON ({e.msg})") from None


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
    if tid is None:
        return {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": j.name(name)}}
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": j.name(name)}}


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
    events: list[Any], fid: int, n: Raw, spid: int, stid: int, sts: float, dpid: int, dtid: int, dts: float
) -> None:
    """One ``s``/``f`` flow pair with id ``fid`` (``n``: the flow's name as JSON) from ``(spid, stid, sts)`` to
    ``(dpid, dtid, dts)``: two items of ``events``."""
    events.append({"ph": "s", "pid": spid, "tid": stid, "ts": sts, "id": fid, "cat": "flow", "name": n})
    events.append({"ph": "f", "pid": dpid, "tid": dtid, "ts": dts, "id": fid, "cat": "flow", "name": n, "bp": "e"})


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
) -> dict[str, Any]:
    """The trace of one run: ``records`` as ``chip_swimlane_records.json`` holds them, ``names`` the
    kernel name of each raw task id (labels ``<name>(t3)``; ``task(t3)`` without), ``edges`` the
    (producer, consumer) raw task id pairs, ``kernel_names`` a task's kernel per core type (before ``names``).
    The objects of :func:`chrome_trace_text`'s JSON."""
    return json.loads(chrome_trace_text(records, names, edges, kernel_names=kernel_names))


def chrome_trace_text(
    records: Mapping[str, Any],
    names: Mapping[int, str] | None = None,
    edges: Sequence[tuple[int, int]] = (),
    *,
    trusted: bool = False,
    phase_texts: Sequence[Sequence[str]] | None = None,
    kernel_names: Mapping[tuple[int, str], str] | None = None,
) -> str:
    """:func:`chrome_trace` as the text :func:`trace_json` writes for it: the events as dicts, their labels
    spelled once per run (:data:`.jsonenc.Raw`), written by one :func:`.jsonenc.plain_json` call: the merged
    trace a flagged run writes.
    ``trusted``: the records are :func:`.records.swimlane_records`'s of a run, not a file's: the shape of
    their rows and phases is not checked again. ``phase_texts``: each scheduler phase's compact JSON, per
    thread (:func:`.records.phase_texts`), which the phase bars' ``args`` are cut from. ``kernel_names``: the
    name of a task's kernel on a core type, ``(raw id, "aic" | "aiv") -> name`` (§3: a mixed task's AIC bar is
    its AIC kernel's, its AIV bars its AIV kernel's), before ``names``."""
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
    events: list[Any] = [_meta(j, pid, None, name) for pid, name in PROCESSES.items()]
    cores = sorted({r[0] for r in aicore})
    for core in cores:
        kind = core_types[core] if core < len(core_types) else "core"
        lane = f"{kind.upper()}_{core}"
        events += [_meta(j, 3, _lane(core), lane), _meta(j, 4, _lane(core), lane)]
    starts: dict[int, tuple[int, float]] = {}  # task -> (core, worker bar start), the earliest slice
    starts_by_core: dict[tuple[int, int], float] = {}  # (core, reg_task_id) -> worker bar start
    ends_by_core: dict[tuple[int, int], float] = {}
    raw_of: dict[tuple[int, int], int] = {}  # (core, reg_task_id) -> the task token (an SPMD task: many)
    ends: dict[int, float] = {}
    dispatches: dict[int, tuple[int, float, float]] = {}
    for core, raw, reg, start, end, *rest in sorted(aicore, key=lambda r: (r[3], r[0])):
        receive = start - rest[0] if rest else start
        tl = task_label(raw)
        kind = core_types[core] if core < len(core_types) else "core"
        name = (kernel_names.get((raw, kind)) if kernel_names else None) or names.get(raw, "task")
        label = _label(f"{name}({tl})")
        ts, t_start, t_end = us[receive], us[start], us[end]
        lane = _lane(core)
        jtl = _label(tl)
        events.append({"ph": "X", "pid": 4, "tid": lane, "name": label, "ts": ts, "dur": round6(t_end - ts),
                       "args": {"taskId": jtl, "kernel-duration-us": round6(t_end - t_start),
                                "local_setup_us": round6(t_start - ts)}})  # fmt: skip
        key = (core, reg)
        starts_by_core[key] = ts
        ends_by_core[key] = t_end
        raw_of[key] = raw
        if raw not in starts or ts < starts[raw][1]:
            starts[raw] = (core, ts)
        ends[raw] = max(ends.get(raw, 0.0), t_end)
        cpu = aicpu.get(key)
        if cpu is not None:
            d, fin = us[cpu[2]], us[cpu[3]]
            events.append({"ph": "X", "pid": 3, "tid": lane, "name": label, "ts": d, "dur": round6(fin - d),
                           "args": {"taskId": jtl}})  # fmt: skip
            if raw not in dispatches or d < dispatches[raw][1]:
                dispatches[raw] = (core, d, fin)
    flow = 0
    pops: dict[tuple[int, int], tuple[int, float]] = {}  # (task, core) -> (sched lane, ts in its dispatch phase)
    flow = _aicpu_lanes(j, events, flow, sched, orch, core_to_thread, aicpu, starts_by_core, raw_of, us, pops,
                        phase_texts)  # fmt: skip
    flow = _complete_flows(j, events, flow, sched, core_to_thread, aicpu, starts_by_core, ends_by_core, raw_of, edges,
                           us)  # fmt: skip
    # dependency flows (hb_violation when the producer ends after its consumer starts): worker, scheduler view
    dependency, late = j.name("dependency"), j.name("hb_violation")
    for pred, succ in edges:
        if pred in starts and succ in starts:
            (pc, pts), (sc, sts) = starts[pred], starts[succ]
            flow += 1
            _pair(events, flow, late if ends[pred] > sts else dependency, 4, _lane(pc), pts, 4, _lane(sc), sts)
        if pred in dispatches and succ in dispatches:
            (pc, pd, pf), (sc, sd, _) = dispatches[pred], dispatches[succ]
            flow += 1
            _pair(events, flow, late if pf > sd else dependency, 3, _lane(pc), pd, 3, _lane(sc), sd)
    try:
        return plain_json({"traceEvents": events, "displayTimeUnit": "ns"}) + "\n"
    except TypeError:  # a value orjson cannot spell (an id beyond 64 bits), beside the labels json cannot
        raise TraceInputError("an id or cycle count in the records is not an integer below 2**64") from None


def _aicpu_lanes(
    j: _Text,
    events: list[Any],
    flow: int,
    sched: list[list[dict[str, Any]]],
    orch: list[list[dict[str, Any]]],
    core_to_thread: list[int],
    aicpu: Mapping[tuple[int, int], list[int]],
    worker_ts: Mapping[tuple[int, int], float],
    raw_of: Mapping[tuple[int, int], int],
    us: Mapping[int, float],
    pops: dict[tuple[int, int], tuple[int, float]],
    phase_texts: Sequence[Sequence[str]] | None = None,
) -> int:
    """pid 1 and 2 (level 4 and 3 records): the lanes, the queue counter and the ``dispatch`` and
    ``submit→dispatch`` flows; returns the last flow id."""
    counters: list[tuple[float, int, int, list[int]]] = []
    for i, thread in enumerate(sched):
        events.append(_meta(j, 2, _sched_lane(i), f"Sched_{i}"))
        if any([p["kind"] in INNER_PHASES for p in thread]):
            events.append(_meta(j, 2, _sched_lane(i) + 1, f"Sched_{i}_inner"))
        outer_lane = _sched_lane(i)
        texts = phase_texts[i] if phase_texts is not None else None
        for n, p in enumerate(thread):
            kind, start, end = p["kind"], p["start_cycles"], p["end_cycles"]
            ts = us[start]
            lane = outer_lane + (kind in INNER_PHASES)  # §3: inner phases on the +1 lane
            name = _label(f"{kind}({p['tasks_processed']})")
            events.append({"ph": "X", "pid": 2, "tid": lane, "name": name, "ts": ts, "dur": round6(us[end] - ts),
                           "args": Raw(_phase_args(j, p, texts[n] if texts else None))})  # fmt: skip
            depth = p.get("shared_at_start")
            if type(depth) is list and len(depth) == 3:
                counters.append((ts, i, 2 * n, depth))
            depth = p.get("shared_at_end")
            if type(depth) is list and len(depth) == 3:
                counters.append((us[end], i, 2 * n + 1, depth))
    if counters:
        events.append(_meta(j, 2, 3999, "shared_ready_queue"))
    counters.sort()  # (ts, thread, phase half) are distinct: the depths are never compared
    depths: dict[tuple[int, ...], Raw] = {}
    for ts, _, _, depth in counters:
        key = tuple(depth)
        plain = type(key[0]) is int and type(key[1]) is int and type(key[2]) is int  # a memo of ints only: 1 and True are one key
        args = depths.get(key) if plain else None
        if args is None:
            args = Raw(f'{{"AIC":{j.v(depth[0])},"AIV":{j.v(depth[1])},"MIX":{j.v(depth[2])}}}')
            if plain:
                depths[key] = args
        events.append({"ph": "C", "pid": 2, "tid": 3999, "name": "shared_ready_queue", "ts": ts, "args": args})
    pops_of = [_PhaseIndex([p for p in thread if p["kind"] in ("dispatch", "drain")]) for thread in sched]
    dispatch_flow = j.name("dispatch")
    for (core, reg), row in sorted(aicpu.items()):  # dispatch: the phase that popped the task -> its bar
        thread = core_to_thread[core] if core < len(core_to_thread) else -1
        if not 0 <= thread < len(sched) or (core, reg) not in worker_ts:
            continue
        phase = pops_of[thread].at(row[2])
        if phase is None:
            continue
        ts = round6((us[phase["start_cycles"]] + us[row[2]]) / 2)  # inside the phase's bar
        pops[(core, reg)] = (_sched_lane(thread), ts)
        flow += 1
        _pair(events, flow, dispatch_flow, 2, _sched_lane(thread), ts, 4, _lane(core), worker_ts[(core, reg)])
    first_pop: dict[int, tuple[int, float]] = {}  # task -> the pop of its earliest block
    for key, pop in sorted(pops.items()):
        raw = raw_of[key]
        if raw not in first_pop or pop[1] < first_pop[raw][1]:
            first_pop[raw] = pop
    v, submit_flow = j.v, j.name("submit→dispatch")
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
            events.append({"ph": "X", "pid": 1, "tid": tid, "name": name, "ts": ts, "dur": round6(end - ts),
                           "args": {"phase": f"orch_{kind}", "submit_idx": idx if type(idx) is int else Raw(v(idx)),
                                    "task_id": raw}})  # fmt: skip
            if kind == "submit" and raw in first_pop:
                flow += 1
                lane, pop_ts = first_pop[raw]
                _pair(events, flow, submit_flow, 1, tid, round6((ts + end) / 2), 2, lane, pop_ts)
    return flow


class _PhaseIndex:
    """Finds the first of a thread's ``phases`` whose [start, end] holds a cycle count (:meth:`at`): by bisection
    of their ends when the phases come one after another (starts and ends in order, as a thread's outer phases
    do), else by a scan. A run's trace asks once per task block: a scan each was quadratic (upstream's
    ``04_paged_attention``, 16448 tasks: 43 s of its 46 s trace)."""

    def __init__(self, phases: Sequence[Mapping[str, Any]]):
        self.phases = phases
        self.starts = [p["start_cycles"] for p in phases]
        self.ends = [p["end_cycles"] for p in phases]
        pairs = range(len(phases) - 1)
        self.ordered = all([self.starts[i] <= self.starts[i + 1] and self.ends[i] <= self.ends[i + 1] for i in pairs])

    def at(self, cycles: int) -> Mapping[str, Any] | None:
        """The first phase whose [start, end] holds ``cycles``, or None. In order, the first whose end is at or
        after ``cycles`` is the only candidate: every earlier one ends before, every later one starts no earlier."""
        if not self.ordered:
            for p in self.phases:
                if p["start_cycles"] <= cycles <= p["end_cycles"]:
                    return p
            return None
        i = bisect_left(self.ends, cycles)
        if i < len(self.ends) and self.starts[i] <= cycles:
            return self.phases[i]
        return None


def _phase_args(j: _Text, p: Mapping[str, Any], text: str | None) -> str:
    """A scheduler phase bar's ``args``: ``{"phase": kind}`` then the phase's own fields but its kind and
    times, in their order. Cut from ``text`` (the phase's compact JSON) when it starts with its kind and
    times (the records a run writes); else built and encoded."""
    kind, start, end = p["kind"], p["start_cycles"], p["end_cycles"]
    if text is not None and "phase" not in p and type(start) is int and type(end) is int and type(kind) is str:
        k = encode_basestring_ascii(kind)
        head = f'{{"kind":{k},"start_cycles":{start},"end_cycles":{end}'
        if text.startswith(head):
            return f'{{"phase":{k}{text[len(head):]}'
    args = {"phase": kind}
    args.update(p)  # the phase's own fields after "phase", in their order
    del args["kind"], args["start_cycles"], args["end_cycles"]
    return j.v(args)


def _complete_flows(
    j: _Text,
    events: list[Any],
    flow: int,
    sched: list[list[dict[str, Any]]],
    core_to_thread: list[int],
    aicpu: Mapping[tuple[int, int], list[int]],
    worker_start: Mapping[tuple[int, int], float],
    worker_end: Mapping[tuple[int, int], float],
    raw_of: Mapping[tuple[int, int], int],
    edges: Sequence[tuple[int, int]],
    us: Mapping[int, float],
) -> int:
    """Level 3: ``complete`` (a task's bar -> the complete phase that saw it finish) and
    ``complete→ready`` (the complete phase of a consumer's last-finishing producer -> the consumer's
    dispatch on the Scheduler View); returns the last flow id."""
    completes: dict[int, tuple[int, float, int]] = {}  # task -> (sched lane, ts in the phase, finish cycles)
    completes_of = [_PhaseIndex([p for p in thread if p["kind"] == "complete"]) for thread in sched]
    complete_flow, ready_flow = j.name("complete"), j.name("complete→ready")
    for (core, reg), row in sorted(aicpu.items()):
        thread = core_to_thread[core] if core < len(core_to_thread) else -1
        if not 0 <= thread < len(sched) or (core, reg) not in worker_end:
            continue
        phase = completes_of[thread].at(row[3])
        if phase is None:
            continue
        ts = round6((us[phase["start_cycles"]] + us[phase["end_cycles"]]) / 2)
        bar = (worker_start[(core, reg)] + worker_end[(core, reg)]) / 2
        flow += 1
        _pair(events, flow, complete_flow, 4, _lane(core), round6(bar), 2, _sched_lane(thread), ts)
        raw = raw_of[(core, reg)]
        if raw not in completes or row[3] > completes[raw][2]:  # an SPMD task: its last block's finish
            completes[raw] = (_sched_lane(thread), ts, row[3])
    dispatch_of: dict[int, tuple[int, float]] = {}  # task -> (core, dispatch) of its earliest block
    for (core, reg), row in sorted(aicpu.items()):
        raw = raw_of.get((core, reg))
        if raw is not None and (raw not in dispatch_of or us[row[2]] < dispatch_of[raw][1]):
            dispatch_of[raw] = (core, us[row[2]])
    last_producer: dict[int, int] = {}
    for pred, succ in edges:
        if pred in completes and (succ not in last_producer or completes[pred][2] > completes[last_producer[succ]][2]):
            last_producer[succ] = pred
    for succ, pred in sorted(last_producer.items()):
        if succ in dispatch_of:
            lane, ts, _ = completes[pred]
            core, d = dispatch_of[succ]
            flow += 1
            _pair(events, flow, ready_flow, 2, lane, ts, 3, _lane(core), d)
    return flow


def deps_edges_and_names(
    deps: Any, names_by_id: Mapping[str, str] | None
) -> tuple[list[tuple[int, int]], dict[tuple[int, str], str]]:
    """The distinct (pred, succ) pairs of a ``deps.json`` in their first order (a pair's explicit and
    tensormap rows are one dependency: §3 draws pairs) and each task's kernel name per core type through a
    name map's ``callable_id_to_name`` (:func:`func_name_table`): ``(task, "aic")`` from ``kernel_ids`` slot 0,
    ``(task, "aiv")`` from slot 1, else 2 (§3), with ``_spmd`` for an SPMD task. Another artefact given as
    deps.json (no ``tasks`` and ``edges`` lists) is a :class:`TraceInputError`."""
    if not isinstance(deps, dict) or not isinstance(deps.get("tasks"), list) or not isinstance(deps.get("edges"), list):
        raise TraceInputError("expected a deps.json object with 'tasks' and 'edges' lists")
    try:
        edges = list(dict.fromkeys((int(e["pred"]), int(e["succ"])) for e in deps["edges"]))
        by_id = names_by_id or {}
        names: dict[tuple[int, str], str] = {}
        for t in deps["tasks"]:
            slots = [int(k) for k in t.get("kernel_ids", [])] + [-1, -1, -1]
            spmd = "_spmd" if int(t.get("block_num", 1)) > 1 else ""  # §3: SPMD labels get _spmd before (
            raw = int(t["task_id"])
            for kind, fid in (("aic", slots[0]), ("aiv", slots[1] if slots[1] >= 0 else slots[2])):
                if fid >= 0 and str(fid) in by_id:
                    names[(raw, kind)] = by_id[str(fid)] + spmd
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as e:
        raise TraceInputError(f"deps.json does not have the documented tasks/edges ({e})") from None
    return edges, names


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
