"""Rank programs for the multi-chip tests (module-level, so spawned rank processes can import them).

Each takes the rank's ``RankComm`` first; data is made from a seed and the rank, so every
rank and the test can rebuild the same inputs.
"""

from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist

from pypto.runtime.distributed import NotifyOp, RankComm, WaitCmp
from pypto.runtime.distributed import collectives as coll


def rank_data(rank: int, shape: tuple[int, ...], dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """The input of ``rank`` (small integers, so every reduction order gives the same float result)."""
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    return torch.randint(-4, 5, shape, generator=g).to(dtype)


def collectives_vs_torch(comm: RankComm, shape: tuple[int, ...]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Every collective, ours and torch.distributed's own on the same data: name -> (ours, torch's)."""
    p, r = comm.world_size, comm.rank
    out: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    ops = {"Sum": dist.ReduceOp.SUM, "Max": dist.ReduceOp.MAX, "Min": dist.ReduceOp.MIN,
           "Prod": dist.ReduceOp.PRODUCT}
    for mode in ("mesh", "ring"):
        for name, top in ops.items():
            x = rank_data(r, shape)
            if name == "Prod":
                x = x.clamp(1, 2)
            ref = x.clone()
            dist.all_reduce(ref, op=top)
            out[f"allreduce/{mode}/{name}"] = (coll.allreduce(comm, x.clone(), name, mode), ref)
    x = rank_data(r, shape)
    ref = x.clone()
    dist.broadcast(ref, src=p - 1)
    out["broadcast"] = (coll.broadcast(comm, x.clone(), root=p - 1), ref)
    refs = [torch.empty_like(x) for _ in range(p)]
    dist.all_gather(refs, x)
    out["allgather"] = (coll.allgather(comm, x), torch.stack(refs))
    big = rank_data(r, (p * 2, *shape[1:]))
    ref = torch.empty_like(big[:2])
    dist.reduce_scatter(ref, [c.contiguous() for c in torch.chunk(big, p)])
    out["reducescatter"] = (coll.reducescatter(comm, big, "Sum"), ref)
    a2a = rank_data(r, (p, 3))
    ref_out = [torch.empty(3) for _ in range(p)]
    dist.all_to_all(ref_out, [t.contiguous() for t in a2a])
    out["alltoall"] = (coll.alltoall(comm, a2a), torch.stack(ref_out))
    return out


def allreduce_cycles(comm: RankComm, numel: int, mode: str, core_num: int = 1) -> int:
    """The cycles one allreduce of ``numel`` FP32 takes on this rank (all ranks start together)."""
    x = rank_data(comm.rank, (numel,))
    comm.barrier()
    start = comm.clock
    coll.allreduce(comm, x, "Sum", mode, core_num)
    return comm.clock - start


def put_get_notify(comm: RankComm) -> dict[str, object]:
    """Rank 0 puts a tile into rank 1's window and notifies; rank 1 waits, reads it, and puts back
    twice the tile; rank 0 gets it from rank 1's reply window."""
    tile = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    res: dict[str, object] = {}
    if comm.rank == 0:
        comm.compute(1000, "produce")
        comm.put("data", 1, 0, tile)
        comm.notify("ready", 1, 0, 1, NotifyOp.AtomicAdd)
        comm.wait("done", 0, 1, WaitCmp.Ge)
        res["reply"] = comm.get("reply", 1, 0, torch.empty(2, 4))
    else:
        comm.wait("ready", 0, 1, WaitCmp.Ge)
        res["after_wait"] = comm.clock
        got = comm.get("data", 1, 0, torch.empty(2, 4))
        comm.put("reply", 1, 0, got * 2)
        comm.notify("done", 0, 0, 1, NotifyOp.Set)
        res["got"] = got
    res["clock"] = comm.clock
    return res


def barrier_twice(comm: RankComm) -> list[int]:
    """Rank r works r * 5000 cycles, then two barriers; returns the clock after each."""
    comm.compute(comm.rank * 5000, "work")
    comm.barrier()
    first = comm.clock
    comm.barrier()
    return [first, comm.clock]


def reused_signal_rounds(comm: RankComm) -> list[int]:
    """Two rounds on one signal cell of rank 0 (AtomicAdd, ``Ge 2`` then ``Ge 3``): rank 1 notifies it at
    cycles 1000 (round 1) and 20000 (round 2, without waiting in between), rank 2 at 5000 (round 1).
    Rank 0 returns its clock after each wait."""
    if comm.rank == 1:
        comm.compute(1000, "work")
        comm.notify("rounds", 0, 0, 1)
        comm.compute(19000, "work")
        comm.notify("rounds", 0, 0, 1)
    elif comm.rank == 2:
        comm.compute(5000, "work")
        comm.notify("rounds", 0, 0, 1)
    out = []
    if comm.rank == 0:
        comm.wait("rounds", 0, 2, WaitCmp.Ge)
        out.append(comm.clock)
        comm.wait("rounds", 0, 3, WaitCmp.Ge)
        out.append(comm.clock)
    return out


def one_rank_lags(comm: RankComm) -> None:
    """Rank 1 notifies rank 0 at cycle 5000; rank 2, still at cycle 0, computes for 4 s of host time
    without notifying or blocking; rank 0 waits for rank 1's notify."""
    if comm.rank == 1:
        comm.compute(5000, "work")
        comm.notify("lag", 0, 0, 1)
    elif comm.rank == 2:
        time.sleep(4.0)
    else:
        comm.wait("lag", 0, 1, WaitCmp.Ge)


def wait_then_send(comm: RankComm) -> int:
    """Rank 1 notifies rank 0 at cycle 5000; rank 0 waits for it, then sends rank 2 a message, which rank 2
    (still at cycle 0) waits for in a receive. Returns the rank's clock."""
    box = torch.zeros(4)
    if comm.rank == 1:
        comm.compute(5000, "work")
        comm.notify("go", 0, 0, 1)
    elif comm.rank == 0:
        comm.wait("go", 0, 1, WaitCmp.Ge)
        comm.exchange([(2, box)], [])
    else:
        comm.exchange([], [(0, box)])
    return comm.clock


def credit_wait_twice(comm: RankComm, slow: int) -> list[tuple[int, int]]:
    """A credit on one reused cell (as pld.tensor.barrier): notify the peer, wait for its notify, take the
    credit back (notify(-1) of the own cell), twice; rank 0 is late in round 0, rank 1 in round 1. Returns
    (clock after its notify, clock after its wait) per round."""
    peer, out = 1 - comm.rank, []
    for rnd in range(2):
        if comm.rank == rnd:
            comm.compute(slow, "work")
        comm.notify("credit", peer, 0, 1, NotifyOp.AtomicAdd)
        sent = comm.clock
        comm.wait("credit", 0, 1, WaitCmp.Ge)
        comm.notify("credit", comm.rank, 0, -1, NotifyOp.AtomicAdd)
        out.append((sent, comm.clock))
    return out


def one_rank_dies(comm: RankComm) -> None:
    """Rank 1 dies after the first barrier; the others then run an allreduce that needs it."""
    comm.barrier()
    if comm.rank == 1:
        os._exit(9)
    time.sleep(0.2)
    coll.allreduce(comm, torch.ones(16), "Sum", "ring")


def wait_forever(comm: RankComm) -> None:
    """Rank 0 waits for a signal nobody sends."""
    if comm.rank == 0:
        comm.wait("never", 0, 1, WaitCmp.Ge)


def stuck_in_local_work(comm: RankComm) -> int:
    """Rank 1 never returns from local work and never talks to a peer; rank 0 finishes."""
    if comm.rank == 1:
        with comm.scope("local step"):
            time.sleep(3600)
    return comm.rank


def raises(comm: RankComm) -> None:
    """Rank 1's own code raises."""
    if comm.rank == 1:
        with comm.scope("user step"):
            raise ValueError("bad shape")


def kernel_then_allreduce(comm: RankComm, swimlane: bool = False) -> dict[str, object]:
    """Each rank runs the two-task DFX kernel on its own chip, then the ranks allreduce its output."""
    import dfx_kernels

    from pypto.runtime import RunConfig
    from pypto.runtime.distributed import run_on_chip

    a = rank_data(comm.rank, (16, 64))
    x, y = torch.zeros(16, 64), torch.zeros(16, 64)
    config = RunConfig(enable_chip_swimlane=True) if swimlane else None
    result = run_on_chip(comm, dfx_kernels.chain, a, x, y, config=config)
    after_chip = comm.clock
    coll.allreduce(comm, y, "Sum", "ring")
    return {"y": y, "chip_cycles": result.total_cycles, "after_chip": after_chip, "clock": comm.clock}


def large_torch_op(comm: RankComm) -> float:
    """A torch op over more elements than one intra-op grain (32k): parallel if the rank had a pool."""
    return float((torch.ones(200_000) * (comm.rank + 1)).sum())
