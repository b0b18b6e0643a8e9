"""The merged swimlane: swimlane records (and ``deps.json``) as a Chrome Trace Event JSON
(runtime-dfx-formats.md §3), the file Perfetto's UI and ``chrome://tracing`` open.

Processes: 1 AICPU Orchestrator and 2 AICPU Scheduler (their lanes need swimlane level 3-4 records,
which the simulated chip does not record yet: named, empty), 3 Scheduler View (one bar per task and
core from dispatch to finish), 4 Worker View (one bar per task and core from receive to end). Times
are µs from the smallest non-zero cycle value (§2's reader). Dependency flows (``deps.json`` pairs)
go bar start to bar start on pid 4 and dispatch to dispatch on pid 3; a pair whose producer ends after
its consumer starts is an ``hb_violation``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

PROCESSES = {1: "AICPU Orchestrator", 2: "AICPU Scheduler", 3: "Scheduler View", 4: "Worker View"}


class TraceInputError(ValueError):
    """Swimlane records or deps.json that do not have the documented shape (one line)."""


def task_label(raw_id: int) -> str:
    """``t{local}`` on ring 0, else ``r{ring}t{local}`` (raw id = ring << 32 | local)."""
    ring, local = raw_id >> 32, raw_id & 0xFFFFFFFF
    return f"t{local}" if ring == 0 else f"r{ring}t{local}"


def _lane(core: int) -> int:
    return 10000 + 10 * core


def _meta(pid: int, tid: int | None, name: str) -> dict[str, Any]:
    if tid is None:
        return {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}


def _rows(records: Mapping[str, Any], key: str, width: int) -> list[list[int]]:
    rows = records.get(key, [])
    if not isinstance(rows, list) or any(not isinstance(r, list) or len(r) < width for r in rows):
        raise TraceInputError(f"'{key}' must be a list of rows of at least {width} numbers")
    return rows


def _flow(events: list[dict[str, Any]], last: int, pid: int, src: tuple[int, float], dst: tuple[int, float],
          late: bool) -> int:
    """Append one ``s``/``f`` flow pair (``hb_violation`` when ``late``); returns its id."""
    name = "hb_violation" if late else "dependency"
    fid = last + 1
    events.append({"ph": "s", "pid": pid, "tid": _lane(src[0]), "ts": src[1], "id": fid, "cat": "flow", "name": name})
    events.append({"ph": "f", "pid": pid, "tid": _lane(dst[0]), "ts": dst[1], "id": fid, "cat": "flow", "name": name,
                   "bp": "e"})  # fmt: skip
    return fid


def chrome_trace(
    records: Mapping[str, Any],
    names: Mapping[int, str] | None = None,
    edges: Sequence[tuple[int, int]] = (),
) -> dict[str, Any]:
    """The trace of one run: ``records`` as ``chip_swimlane_records.json`` holds them, ``names`` the
    kernel name of each raw task id (labels ``<name>(t3)``; ``task(t3)`` without), ``edges`` the
    (producer, consumer) raw task id pairs."""
    try:
        freq = float(records["metadata"]["clock_freq_hz"])
        core_types = list(records["metadata"]["core_types"])
    except (KeyError, TypeError, ValueError) as e:
        raise TraceInputError(f"metadata.clock_freq_hz and metadata.core_types are required ({e})") from None
    aicore = _rows(records, "aicore_tasks", 5)
    aicpu = {(r[0], r[1]): r for r in _rows(records, "aicpu_tasks", 4)}
    values = [c for r in aicore for c in r[3:5]] + [c for r in aicpu.values() for c in r[2:4]]
    base = min((c for c in values if c), default=0)

    def us(c: int) -> float:
        return round((c - base) * 1e6 / freq, 6) if c else 0.0

    names = names or {}
    events: list[dict[str, Any]] = [_meta(pid, None, name) for pid, name in PROCESSES.items()]
    cores = sorted({r[0] for r in aicore})
    for core in cores:
        kind = core_types[core] if core < len(core_types) else "core"
        lane = f"{kind.upper()}_{core}"
        events += [_meta(3, _lane(core), lane), _meta(4, _lane(core), lane)]
    starts: dict[int, tuple[int, float]] = {}  # task -> (core, worker bar start), the earliest slice
    ends: dict[int, float] = {}
    dispatches: dict[int, tuple[int, float, float]] = {}
    for core, raw, reg, start, end, *rest in sorted(aicore, key=lambda r: (r[3], r[0])):
        receive = start - rest[0] if rest else start
        label = f"{names.get(raw, 'task')}({task_label(raw)})"
        ts = us(receive)
        events.append({"ph": "X", "pid": 4, "tid": _lane(core), "name": label, "ts": ts, "dur": round(us(end) - ts, 6),
                       "args": {"taskId": task_label(raw), "kernel-duration-us": round(us(end) - us(start), 6),
                                "local_setup_us": round(us(start) - ts, 6)}})  # fmt: skip
        if raw not in starts or ts < starts[raw][1]:
            starts[raw] = (core, ts)
        ends[raw] = max(ends.get(raw, 0.0), us(end))
        cpu = aicpu.get((core, reg))
        if cpu is not None:
            d, f = us(cpu[2]), us(cpu[3])
            events.append({"ph": "X", "pid": 3, "tid": _lane(core), "name": label, "ts": d, "dur": round(f - d, 6),
                           "args": {"taskId": task_label(raw)}})  # fmt: skip
            if raw not in dispatches or d < dispatches[raw][1]:
                dispatches[raw] = (core, d, f)
    flow = 0
    for pred, succ in edges:
        if pred in starts and succ in starts:
            flow = _flow(events, flow, 4, starts[pred], starts[succ], late=ends[pred] > starts[succ][1])
        if pred in dispatches and succ in dispatches:
            p, c = dispatches[pred], dispatches[succ]
            flow = _flow(events, flow, 3, (p[0], p[1]), (c[0], c[1]), late=p[2] > c[1])
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def deps_edges_and_names(deps: Mapping[str, Any], name_map: Mapping[str, Any] | None) -> tuple[list[tuple[int, int]], dict[int, str]]:
    """The (pred, succ) pairs of a ``deps.json`` and each task's kernel name through a name map
    (``callable_id_to_name``; a task's first active kernel id)."""
    try:
        edges = [(int(e["pred"]), int(e["succ"])) for e in deps.get("edges", [])]
        by_id = {str(k): str(v) for k, v in ((name_map or {}).get("callable_id_to_name") or {}).items()}
        names: dict[int, str] = {}
        for t in deps.get("tasks", []):
            ids = [int(k) for k in t.get("kernel_ids", []) if int(k) >= 0]
            if ids and str(ids[0]) in by_id:
                names[int(t["task_id"])] = by_id[str(ids[0])]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise TraceInputError(f"deps.json does not have the documented tasks/edges ({e})") from None
    return edges, names


def trace_json(trace: Mapping[str, Any]) -> str:
    """The trace as deterministic JSON text."""
    return json.dumps(trace, indent=None, separators=(",", ":")) + "\n"
