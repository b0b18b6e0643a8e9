"""The clean in-core pipeline trace (``trace.clean.json``): upstream PyPTO's rebuild rules
(docs/en/dev/04-simulator-trace-cleaning.md) over instruction slices from any source.

Two sources feed it: the device model's records (:mod:`.incore`) and a real simulator's
``visualize_data.bin`` (:mod:`.simdump`). Both give :class:`Slice` objects (one instruction on one
pipe of one core, in cycles) and flag pairs (producing slice -> consuming slice); :func:`clean_trace`
applies the rules:

1. one process per core (``process_name`` the core's name, sorted as given);
2. pipeline lanes in dataflow order MTE2, MTE1, CUBE, VECTOR, FIXPIPE, MTE3 (SCALAR last, and only
   with ``keep_scalar``); sync slices are never slices of the clean trace;
3. the instructions of one pipe that overlap are packed greedily into sub-lanes ``MTE2``,
   ``MTE2#1``, ... (first sub-lane whose last slice has ended), so ``X`` events on one ``tid`` are
   disjoint;
4. each set_flag -> wait_flag pair is one flow arrow (``s`` at the producing instruction's start,
   ``f`` with ``bp: "e"`` at the consuming instruction's start, on their real sub-lanes); a pair
   whose producer or consumer is not in the trace (a dropped lane, no instruction before the
   set_flag or after the wait) is counted in ``metadata.skipped_flows``, not drawn;
5. slices coloured per lane (Chrome's reserved ``cname`` colours);
6. timestamps: cycles / clock in MHz = µs (6 decimals), the ``ts`` + ``dur`` of a slice never past
   the next one's ``ts`` on its sub-lane.

Integer ``pid``/``tid`` (sub-lane ``tid`` = 100 x lane order + sub-lane) with ``process_name`` /
``thread_name`` / ``*_sort_index`` metadata; JSON text through :func:`.trace.trace_json`
(deterministic).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PIPE_ORDER: dict[str, int] = {"MTE2": 0, "MTE1": 1, "CUBE": 2, "VECTOR": 3, "FIXPIPE": 4, "MTE3": 5, "SCALAR": 6}
"""Dataflow order of the pipeline lanes (load -> compute -> store -> setup)."""

PIPELINE_LANES = tuple(PIPE_ORDER)
"""The pipes ``instr_metrics.json`` names, in lane order."""

LANE_LABEL: dict[str, str] = {
    "MTE2": "MTE2 (load GM->L1/UB)", "MTE1": "MTE1 (L1->L0)", "CUBE": "CUBE (matmul)",
    "VECTOR": "VECTOR (compute)", "FIXPIPE": "FIXPIPE (L0C->out)", "MTE3": "MTE3 (store UB->GM)",
    "SCALAR": "SCALAR (setup)",
}  # fmt: skip

LANE_CNAME: dict[str, str] = {
    "MTE2": "thread_state_iowait", "MTE1": "thread_state_iowait", "CUBE": "rail_response", "VECTOR": "good",
    "FIXPIPE": "yellow", "MTE3": "cq_build_passed", "SCALAR": "grey",
}  # fmt: skip
"""Chrome's reserved colour names per lane."""


@dataclass
class Slice:
    """One instruction on ``pipe`` of core ``core`` (an index into the process list), cycles
    ``start``..``end``; ``key`` names it in flag pairs; ``args`` go into the event."""

    key: Any
    core: int
    pipe: str
    name: str
    start: float
    end: float
    args: dict[str, Any] = field(default_factory=dict)


def us(cycles: float, clock_mhz: float) -> float:
    """``cycles`` at ``clock_mhz`` in µs, 6 decimals."""
    return round(cycles / clock_mhz, 6)


def pack_sublanes(slices: Sequence[Slice]) -> dict[Any, int]:
    """Slice key -> sub-lane of its (core, pipe): greedy, by start (longest first on a tie), each slice
    on the first sub-lane whose last slice ended by its start."""
    lanes: dict[tuple[int, str], list[float]] = {}
    out: dict[Any, int] = {}
    for s in sorted(slices, key=lambda s: (s.core, s.pipe, s.start, -s.end)):
        ends = lanes.setdefault((s.core, s.pipe), [])
        for i, end in enumerate(ends):
            if end <= s.start:
                ends[i] = s.end
                out[s.key] = i
                break
        else:
            out[s.key] = len(ends)
            ends.append(s.end)
    return out


def tid_of(pipe: str, sub: int) -> int:
    """The ``tid`` of sub-lane ``sub`` of ``pipe``."""
    return 100 * (PIPE_ORDER.get(pipe, 7) + 1) + sub


def lane_name(pipe: str, sub: int) -> str:
    """``MTE2``, ``MTE2#1``, ..."""
    return pipe if sub == 0 else f"{pipe}#{sub}"


def kept(pipe: str, keep_scalar: bool) -> bool:
    """Whether ``pipe`` is a lane of the clean trace."""
    return pipe in PIPE_ORDER and (keep_scalar or pipe != "SCALAR")


def clean_trace(
    processes: Sequence[str],
    slices: Sequence[Slice],
    flag_pairs: Sequence[tuple[Any, Any, str]],
    clock_mhz: float,
    keep_scalar: bool = False,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The clean trace: ``processes`` the core names (``Slice.core`` indexes them), ``flag_pairs``
    (producer key, consumer key, label). Slices on a dropped lane are left out."""
    slices = [s for s in slices if kept(s.pipe, keep_scalar)]
    sub = pack_sublanes(slices)
    by_key = {s.key: s for s in slices}
    events: list[dict[str, Any]] = []
    for pid, name in enumerate(processes):
        events.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}})
        events.append({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}})
        used = sorted({(s.pipe, sub[s.key]) for s in slices if s.core == pid}, key=lambda p: tid_of(*p))
        for pipe, n in used:
            label = LANE_LABEL.get(pipe, pipe) if n == 0 else lane_name(pipe, n)
            events.append(
                {"ph": "M", "pid": pid, "tid": tid_of(pipe, n), "name": "thread_name", "args": {"name": label}}
            )
            events.append({"ph": "M", "pid": pid, "tid": tid_of(pipe, n), "name": "thread_sort_index",
                           "args": {"sort_index": tid_of(pipe, n)}})  # fmt: skip
    for s in sorted(slices, key=lambda s: (s.core, tid_of(s.pipe, sub[s.key]), s.start, -s.end)):
        ts, end = us(s.start, clock_mhz), us(s.end, clock_mhz)
        dur = round(end - ts, 6)
        while dur > 0 and ts + dur > end:  # float rounding must not overlap the next slice
            dur = math.nextafter(dur, 0.0)
        events.append({"ph": "X", "pid": s.core, "tid": tid_of(s.pipe, sub[s.key]), "name": s.name, "ts": ts,
                       "dur": dur, "cname": LANE_CNAME.get(s.pipe, "grey"), "args": dict(s.args)})  # fmt: skip
    skipped = 0
    fid = 0
    for prod_key, cons_key, label in flag_pairs:
        prod, cons = by_key.get(prod_key), by_key.get(cons_key)
        if prod is None or cons is None or cons.start < prod.start:
            skipped += 1
            continue
        fid += 1
        events.append({"ph": "s", "pid": prod.core, "tid": tid_of(prod.pipe, sub[prod.key]),
                       "ts": us(prod.start, clock_mhz), "id": fid, "cat": "sync", "name": label})  # fmt: skip
        events.append({"ph": "f", "pid": cons.core, "tid": tid_of(cons.pipe, sub[cons.key]),
                       "ts": us(cons.start, clock_mhz), "id": fid, "cat": "sync", "name": label, "bp": "e"})  # fmt: skip
    meta = {"clock_mhz": clock_mhz, "keep_scalar": keep_scalar, "flows": fid, "skipped_flows": skipped}
    meta.update(metadata or {})
    return {"traceEvents": events, "displayTimeUnit": "ns", "metadata": meta}
