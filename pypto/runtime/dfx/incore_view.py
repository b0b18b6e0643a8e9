"""The run report's in-core view (issue 13 item 5): per task part, its kernel's pipe lanes, as the page's
JSON. Clicking a task in the swimlane draws them (``assets/run_report_incore.js``).

Built from the run's records (as ``trace.clean.json`` is: same sub-lanes, same flow anchors, sync
entries folded into the arrows) when ``enable_incore_trace`` is on, so the page is written whatever
order the collectors finish in. Compact: per part, the ops and DSL locations once, then an
instruction as ``[lane, start, end, op, loc, pto line]``; at most :data:`MAX_INSTRS` instructions a
part (``truncated`` counts the rest, the last ones in execution order).
"""

from __future__ import annotations

from typing import Any

from .bottleneck import SYNC_KINDS, bottleneck
from .cleantrace import PIPE_ORDER, Slice, lane_name, pack_sublanes
from .incore import core_name, flow_anchors
from .pmu import part_rows

MAX_INSTRS = 3000
"""Instructions per part in the page."""


def _part(rec: Any, core: str, kernel: str, run: Any) -> dict[str, Any]:
    records = run.records
    kept = [r for r in records if r.kind not in SYNC_KINDS][:MAX_INSTRS]
    slices = [Slice(r.index, 0, r.pipe, r.instr, r.start, r.end) for r in kept]
    sub = pack_sublanes(slices)
    lanes = sorted({(r.pipe, sub[r.index]) for r in kept}, key=lambda p: (PIPE_ORDER.get(p[0], 9), p[1]))
    lane_of = {p: i for i, p in enumerate(lanes)}
    ops: dict[str, int] = {}
    locs: dict[str, int] = {}
    row_of: dict[int, int] = {}
    instrs: list[list[Any]] = []
    for n, r in enumerate(kept):
        row_of[r.index] = n
        op = ops.setdefault(r.op, len(ops))
        loc = locs.setdefault(r.dsl_loc, len(locs)) if r.dsl_loc else -1
        pto_line = int(r.pto_loc.rsplit(":", 2)[-2]) if r.pto_loc and r.pto_loc.count(":") >= 2 else 0
        instrs.append([lane_of[(r.pipe, sub[r.index])], r.start, r.end, op, loc, pto_line])
    flows = [
        [row_of[p], row_of[c]]
        for p, c, _ in flow_anchors(records, run.timeline.flag_pairs)
        if p in row_of and c in row_of
    ]
    table = bottleneck(records, run.timeline.flag_pairs, run.cycles)
    return {
        "task": rec.task_id,
        "kernel": kernel,
        "core": core,
        "cycles": int(run.cycles),
        "lanes": [lane_name(p, n) for p, n in lanes],
        "ops": list(ops),
        "locs": list(locs),
        "instrs": instrs,
        "flows": flows,
        "truncated": len([r for r in records if r.kind not in SYNC_KINDS]) - len(kept),
        "pipes": table["pipes"],
        "bound": table["bound"],
        "ratio": table["ratio"],
        "chain": [row_of[s["index"]] for s in table["critical_chain"]["steps"] if s["index"] in row_of],
    }


def incore_model(result: Any, enabled: bool) -> dict[str, Any]:
    """``{"enabled", "parts"}``: the parts of every task (none when ``enabled`` is off)."""
    if not enabled:
        return {"enabled": False, "parts": []}
    parts = [_part(rec, core_name(result.core_types[c], c), kernel, run) for rec, c, kernel, run, _ in part_rows(result)]
    return {"enabled": True, "parts": parts}
