"""The per-kernel bottleneck table, llvm-mca style, from one kernel run's instruction records.

:func:`bottleneck` gives ``instr_metrics.json["bottleneck"]``:

- ``pipes``: busy cycles per pipe (the sum of ``end - start`` of its records, sync entries included,
  as :attr:`KernelRun.per_pipe_busy` and the PMU's PIPE_UTILIZATION count them), instructions, and
  busy / kernel cycles, in dataflow order;
- ``bound``: the per-pipe bound, the largest busy total (no schedule of these instructions is shorter
  than its busiest in-order pipe), and ``ratio`` = kernel cycles / bound (1.0: the kernel runs at its
  bound; more: waiting on dependencies);
- ``critical_chain``: the chain of dependent instructions that sets the kernel's length. From the
  instruction that ends last, back through the dependency that set each start: the previous entry of
  its pipe queue, the ``set_flag`` a ``wait_flag`` consumed, a ``pipe_barrier(PIPE_ALL)`` (the
  latest-ending earlier record), when that one ended exactly at the start. It stops at cycle 0 or at a
  start no record explains (a ``tpop`` waiting on the other core). ``steps`` lists its instructions
  (sync entries folded into the ``after`` of the next one: ``pipe order``, ``flag PIPE_MTE2->PIPE_V
  e0``, ``barrier``), ``per_pipe`` its cycles by pipe, ``idle`` the kernel cycles it does not cover;
- ``top``: the static instructions (same op, pipe, ``.pto`` and DSL location) with the most cycles,
  each with its count, cycles and share of its pipe's busy cycles.

:func:`bottleneck_text` is the table as text (``bottleneck.txt``, the run's summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .cleantrace import PIPE_ORDER

SYNC_KINDS = frozenset({"signal", "wait", "barrier"})
TOP = 10
"""Static instructions in ``top``."""
CHAIN_STEPS = 400
"""At most this many chain steps are listed (``steps_listed`` < ``length`` when cut)."""


def _chain(records: Sequence[Any], flag_pairs: Sequence[tuple[int, int]]) -> list[int]:
    """Record indices of the critical chain, first to last."""
    if not records:
        return []
    signal_of = {w: s for s, w in flag_pairs}
    pred: list[int | None] = []
    last_on: dict[str, int] = {}
    last_all: int | None = None
    latest: int | None = None  # the latest-ending record so far
    for i, r in enumerate(records):
        cands = [c for c in (last_on.get(r.hw_pipe), last_all, signal_of.get(i)) if c is not None]
        if r.hw_pipe == "PIPE_ALL" and latest is not None:
            cands.append(latest)
        best = max(cands, key=lambda c: (records[c].end, c), default=None)
        pred.append(best if best is not None and records[best].end == r.start and r.start > 0 else None)
        last_on[r.hw_pipe] = i
        if r.hw_pipe == "PIPE_ALL":
            last_all = i
        if latest is None or r.end >= records[latest].end:
            latest = i
    end = max(range(len(records)), key=lambda i: (records[i].end, i))
    chain = [end]
    while (p := pred[chain[-1]]) is not None:
        chain.append(p)
    return chain[::-1]


def _after(records: Sequence[Any], chain: list[int], pos: int) -> str:
    """What set the start of chain step ``pos`` (the sync entries just before it, else its queue)."""
    if pos == 0:
        r = records[chain[0]]
        return "kernel start" if r.start == 0 else "other core"
    prev = records[chain[pos - 1]]
    if prev.kind == "wait":
        return f"flag {prev.detail}"
    if prev.kind == "barrier":
        return f"barrier {prev.detail}".strip()
    if prev.kind == "signal":
        return "pipe order"
    return "pipe order" if prev.hw_pipe == records[chain[pos]].hw_pipe else "dependency"


def bottleneck(records: Sequence[Any], flag_pairs: Sequence[tuple[int, int]], kernel_cycles: int) -> dict[str, Any]:
    """The table of one kernel run (module docstring)."""
    busy: dict[str, int] = {}
    count: dict[str, int] = {}
    for r in records:
        busy[r.pipe] = busy.get(r.pipe, 0) + r.end - r.start
        count[r.pipe] = count.get(r.pipe, 0) + (r.kind not in SYNC_KINDS)
    cycles = max(int(kernel_cycles), 0)
    pipes = [
        {"pipe": p, "busy": busy[p], "instructions": count[p], "share": round(busy[p] / cycles, 4) if cycles else 0.0}
        for p in sorted(busy, key=lambda p: PIPE_ORDER.get(p, 9))
    ]
    bound_pipe = max(pipes, key=lambda p: (p["busy"], -PIPE_ORDER.get(p["pipe"], 9)), default=None)
    bound = {"pipe": bound_pipe["pipe"], "cycles": bound_pipe["busy"]} if bound_pipe else {"pipe": None, "cycles": 0}

    chain = _chain(records, flag_pairs)
    steps: list[dict[str, Any]] = []
    per_pipe: dict[str, int] = {}
    covered = 0
    for pos, i in enumerate(chain):
        r = records[i]
        covered += r.end - r.start
        if r.kind in SYNC_KINDS:
            continue
        per_pipe[r.pipe] = per_pipe.get(r.pipe, 0) + r.end - r.start
        steps.append({"index": i, "pipe": r.pipe, "op": r.op, "start": r.start, "end": r.end,
                      "cycles": r.end - r.start, "after": _after(records, chain, pos), "dsl_loc": r.dsl_loc,
                      "pto_loc": r.pto_loc})  # fmt: skip

    groups: dict[tuple[str, str, str | None, str | None], list[int]] = {}
    for r in records:
        if r.kind not in SYNC_KINDS:
            g = groups.setdefault((r.pipe, r.op, r.pto_loc, r.dsl_loc), [0, 0])
            g[0] += 1
            g[1] += r.end - r.start
    top = sorted(groups.items(), key=lambda kv: (-kv[1][1], PIPE_ORDER.get(kv[0][0], 9), kv[0][1], str(kv[0][2])))
    return {
        "kernel_cycles": cycles,
        "pipes": pipes,
        "bound": bound,
        "ratio": round(cycles / bound["cycles"], 4) if bound["cycles"] else None,
        "critical_chain": {
            "length": len(steps),
            "cycles": covered,
            "idle": max(0, cycles - covered),
            "per_pipe": {p: per_pipe[p] for p in sorted(per_pipe, key=lambda p: PIPE_ORDER.get(p, 9))},
            "steps_listed": min(len(steps), CHAIN_STEPS),
            "steps": steps[:CHAIN_STEPS],
        },
        "top": [
            {
                "pipe": k[0],
                "op": k[1],
                "pto_loc": k[2],
                "dsl_loc": k[3],
                "count": v[0],
                "cycles": v[1],
                "share_of_pipe": round(v[1] / busy[k[0]], 4) if busy.get(k[0]) else 0.0,
            }
            for k, v in top[:TOP]
        ],  # fmt: skip
    }


def _short(loc: str | None) -> str:
    """``kernels.py:12`` of ``/path/kernels.py:12:5`` (``-`` when unknown)."""
    if not loc:
        return "-"
    parts = loc.rsplit(":", 2)
    return f"{parts[0].rsplit('/', 1)[-1]}:{parts[1]}" if len(parts) == 3 else loc


def bottleneck_text(table: dict[str, Any], title: str, chain_rows: int = 12) -> str:
    """``table`` as text under ``title`` (``chain_rows`` steps of the chain shown: its first and last)."""
    cyc = table["kernel_cycles"]
    bound = table["bound"]
    lines = [title, f"kernel cycles    {cyc:>9}"]
    if bound["pipe"] is not None and table["ratio"] is not None:
        lines.append(
            f"per-pipe bound   {bound['cycles']:>9}  ({bound['pipe']})   kernel / bound = {table['ratio']:.3f}x"
        )
    lines += ["", f"{'pipe':<8} {'busy':>9} {'instrs':>7} {'busy/kernel':>12}"]
    for p in table["pipes"]:
        if not p["busy"] and not p["instructions"]:
            continue  # a pipe only sync entries touched, for 0 cycles
        mark = "  <- bound" if p["pipe"] == bound["pipe"] else ""
        lines.append(f"{p['pipe']:<8} {p['busy']:>9} {p['instructions']:>7} {100 * p['share']:>11.1f}%{mark}")
    ch = table["critical_chain"]
    split = ", ".join(f"{p} {c}" for p, c in ch["per_pipe"].items())
    lines += ["", f"critical chain: {ch['length']} instructions, {ch['cycles']} of {cyc} cycles"
              f" ({split}; {ch['idle']} not covered)"]  # fmt: skip
    steps = ch["steps"]
    if steps:
        lines.append(
            f"  {'#':>4} {'index':>6} {'pipe':<8} {'op':<18} {'start':>8} {'end':>8} {'cycles':>7}  {'after':<30} dsl"
        )
        half = chain_rows // 2
        shown = list(enumerate(steps))
        if len(shown) > chain_rows:
            shown = shown[:half] + [(-1, None)] + shown[-half:]
        for n, s in shown:
            if s is None:
                lines.append(f"  {'...':>4} ({ch['length'] - 2 * half} more)")
                continue
            lines.append(f"  {n + 1:>4} {s['index']:>6} {s['pipe']:<8} {s['op']:<18} {s['start']:>8} {s['end']:>8} "
                         f"{s['cycles']:>7}  {s['after']:<30} {_short(s['dsl_loc'])}")  # fmt: skip
    if table["top"]:
        lines += ["", "top instructions by cycles:",
                  f"  {'cycles':>8} {'of pipe':>8} {'count':>6} {'pipe':<8} {'op':<18} {'pto':<28} dsl"]  # fmt: skip
        for t in table["top"]:
            lines.append(f"  {t['cycles']:>8} {100 * t['share_of_pipe']:>7.1f}% {t['count']:>6} {t['pipe']:<8} "
                         f"{t['op']:<18} {_short(t['pto_loc']):<28} {_short(t['dsl_loc'])}")  # fmt: skip
    return "\n".join(lines) + "\n"
