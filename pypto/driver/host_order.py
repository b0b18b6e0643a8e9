"""Cross-rank order of a host plan's dispatches on shared window buffers.

Each rank runs its own dispatches in order; ranks meet only at host-level collectives. A host
orchestrator reads as a sequential program, though: in

    for r in ranks: consume(data, out[r], peer, device=r)      # reads the peers' windows
    for r in ranks: publish(x[r], data, device=r)              # overwrites them

rank 1's ``publish`` must not overwrite its window before rank 0's ``consume`` read it
(upstream's ``test_l3_host_tensor_barrier_signal_reuse``). A dispatch is a *phase* member: one
``for r`` sweep, at most one dispatch per rank, in increasing rank order; a collective or a
callback ends a phase. Dispatches of one phase may have to be in flight together (a kernel that
waits on its peer's notify), so they are never ordered. Nor is a dispatch ordered after the ``k``-th call of a program on another
rank unless this rank's own ``k``-th call of it (its partner, which it may wait on) comes first: a loop
body of two kernels per rank interleaves the ranks' calls, and the second rank's first kernel waits
in the kernel for the first rank's. Otherwise a dispatch waits for the last dispatch of an earlier phase
on every other rank that conflicts with it on a window buffer: it writes what the other wrote or read,
or reads what the other wrote (an Out / InOut window argument writes).
"""

from __future__ import annotations

from typing import Any


def _touches(args: list[Any], outputs: set[int]) -> tuple[set[int], set[int]]:
    """``(read, written)`` window buffers of a dispatch's ``args`` (``outputs``: its Out/InOut indices)."""
    from .host_trace import WindowView

    reads: set[int] = set()
    writes: set[int] = set()
    for i, a in enumerate(args):
        if isinstance(a, WindowView):
            (writes if i in outputs else reads).add(a.buffer)
    return reads, writes


def cross_rank_order(dispatches: list[Any], outputs: list[set[int]]) -> list[list[int]]:
    """Per dispatch, the indices of the dispatches on other ranks it must wait for (see the module
    docstring); ``outputs[i]`` are dispatch ``i``'s Out/InOut argument indices."""
    after: list[list[int]] = [[] for _ in dispatches]
    phase, last_rank = 0, None
    phases: list[int] = []
    access: list[tuple[set[int], set[int]]] = []
    nth: list[int] = []
    calls: dict[tuple[int, str], list[int]] = {}
    for i, (d, outs) in enumerate(zip(dispatches, outputs, strict=True)):
        mine = calls.setdefault((d.rank, d.program), [])
        nth.append(len(mine))
        mine.append(i)
        chip = not d.program.startswith(("@", "!"))
        if not chip or last_rank is None or d.rank <= last_rank:
            phase += 1
        last_rank = d.rank if chip else None
        phases.append(phase)
        access.append(_touches(d.args, outs) if chip else (set(), set()))
    for i, d in enumerate(dispatches):
        reads, writes = access[i]
        if not (reads or writes):
            continue
        latest: dict[int, int] = {}
        for j in range(i):
            e = dispatches[j]
            if e.rank == d.rank or phases[j] == phases[i]:
                continue
            partner = calls.get((d.rank, e.program), [])
            if nth[j] < len(partner) and partner[nth[j]] >= i:  # e may be waiting for its partner here
                continue
            e_reads, e_writes = access[j]
            if writes & (e_reads | e_writes) or reads & e_writes:
                latest[e.rank] = j
        after[i] = sorted(latest.values())
    return after
