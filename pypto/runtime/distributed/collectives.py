"""The host-level collectives of ``pld.tensor.*`` on simulated ranks, built from point-to-point transfers.

Each collective moves real data between the rank processes over
``torch.distributed`` (:meth:`RankComm.exchange`) and prices every step with the
link model, so its cycles depend on its mode and size:

- ``allreduce`` ``mesh``: every rank reads every peer's whole tensor, one after
  another, and reduces (``P - 1`` hops of ``S`` bytes; ``core_num`` blocks share
  the payload, so each hop carries ``S / core_num``);
- ``allreduce`` ``ring``: reduce-scatter then allgather over the right neighbour,
  ``2 (P - 1)`` hops of ``S / P`` bytes;
- ``broadcast`` (every rank reads the root), ``allgather`` / ``reducescatter`` /
  ``alltoall`` (every rank reads its part from each peer in turn).

The functions mutate or return torch tensors; :func:`analytic_cycles` gives the
link model's bound for a collective, the figure the benchmark compares against;
the simulated cycles add each local reduce, priced by the chip's own vector cost
(:meth:`RankComm.reduce_cycles`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from pypto.dialects.distributed_enums import AllreduceMode, ReduceOp

from .comm import RankComm

_REDUCE = {
    ReduceOp.Sum: torch.add,
    ReduceOp.Max: torch.maximum,
    ReduceOp.Min: torch.minimum,
    ReduceOp.Prod: torch.mul,
}


_INSTR = {ReduceOp.Sum: "TADD", ReduceOp.Max: "TMAX", ReduceOp.Min: "TMIN", ReduceOp.Prod: "TMUL"}
"""The vector instruction whose cost prices each ReduceOp's local reduce."""


def reduce_into(comm: RankComm, acc: torch.Tensor, other: torch.Tensor, op: ReduceOp | str, blocks: int = 1) -> None:
    """``acc = acc <op> other`` in place; the rank's clock advances by the vector cost of it (split over
    ``blocks`` cores working in parallel)."""
    op = ReduceOp(op)
    acc.copy_(_REDUCE[op](acc, other))
    comm.compute(comm.reduce_cycles(_INSTR[op], acc.dtype, math.ceil(acc.numel() / blocks)), f"reduce {op.value}")


def _peers(comm: RankComm) -> list[int]:
    """The peers in the order this rank reads them: right neighbour first (spreads the load)."""
    return [(comm.rank + k) % comm.world_size for k in range(1, comm.world_size)]


def allreduce(
    comm: RankComm,
    data: torch.Tensor,
    op: ReduceOp | str = ReduceOp.Sum,
    mode: AllreduceMode | str = AllreduceMode.mesh,
    core_num: int = 1,
) -> torch.Tensor:
    """Reduce ``data`` over all ranks, in place; every rank ends with the result."""
    op, mode = ReduceOp(op), AllreduceMode(mode)
    if core_num < 1:
        raise comm.error(f"allreduce: core_num must be at least 1, got {core_num}")
    if mode is AllreduceMode.ring and core_num != 1:
        raise comm.error(f"allreduce: mode='ring' requires core_num == 1, got {core_num}")
    if not data.is_contiguous():
        raise comm.error("allreduce: the data tensor is not contiguous")
    if comm.world_size == 1:
        return data
    with comm.scope(f"allreduce({mode.value}, {op.value})"):
        if mode is AllreduceMode.mesh:
            _allreduce_mesh(comm, data, op, core_num)
        else:
            _allreduce_ring(comm, data, op)
    return data


def _allreduce_mesh(comm: RankComm, data: torch.Tensor, op: ReduceOp, core_num: int) -> None:
    peers = _peers(comm)
    got = [torch.empty_like(data) for _ in peers]
    start = comm.clock
    # core_num blocks split the payload: each peer read moves S / core_num bytes per block, in parallel.
    comm.exchange([(p, data) for p in peers], list(zip(peers, got, strict=True)), name="allreduce mesh")
    if core_num > 1:
        nbytes = data.numel() * data.element_size()
        full, part = comm.hop_cycles(nbytes), comm.hop_cycles(math.ceil(nbytes / core_num))
        comm.clock = start + (comm.clock - start) - len(peers) * (full - part)
    for g in got:
        reduce_into(comm, data, g, op, core_num)


def _allreduce_ring(comm: RankComm, data: torch.Tensor, op: ReduceOp) -> None:
    p, r = comm.world_size, comm.rank
    right, left = (r + 1) % p, (r - 1) % p
    chunks = list(torch.tensor_split(data.view(-1), p))
    for step in range(p - 1):  # reduce-scatter: after it, rank r owns the sum of chunk (r + 1) % p
        send, recv = (r - step) % p, (r - step - 1) % p
        buf = torch.empty_like(chunks[recv])
        comm.exchange([(right, chunks[send])], [(left, buf)], name=f"ring rs {step}")
        reduce_into(comm, chunks[recv], buf, op)
    for step in range(p - 1):  # allgather the reduced chunks around the ring
        send, recv = (r + 1 - step) % p, (r - step) % p
        buf = torch.empty_like(chunks[recv])
        comm.exchange([(right, chunks[send])], [(left, buf)], name=f"ring ag {step}")
        chunks[recv].copy_(buf)


def broadcast(comm: RankComm, data: torch.Tensor, root: int = 0) -> torch.Tensor:
    """Every rank ends with ``root``'s ``data`` (in place): each non-root rank reads it from the root."""
    if not 0 <= root < comm.world_size:
        raise comm.error(f"broadcast: root {root} out of range (world size {comm.world_size})")
    with comm.scope(f"broadcast(root={root})"):
        if comm.rank == root:
            comm.exchange([(p, data) for p in range(comm.world_size) if p != root], [], name="broadcast")
        else:
            got = torch.empty_like(data)
            comm.exchange([], [(root, got)], name="broadcast")
            data.copy_(got)
    return data


def allgather(comm: RankComm, data: torch.Tensor) -> torch.Tensor:
    """``[P, *data.shape]``: row ``r`` is rank ``r``'s ``data``."""
    out = torch.empty((comm.world_size, *data.shape), dtype=data.dtype)
    out[comm.rank].copy_(data)
    with comm.scope("allgather"):
        peers = _peers(comm)
        comm.exchange([(p, data) for p in peers], [(p, out[p]) for p in peers], name="allgather")
    return out


def reducescatter(comm: RankComm, data: torch.Tensor, op: ReduceOp | str = ReduceOp.Sum) -> torch.Tensor:
    """Rank ``r`` ends with chunk ``r`` (of ``data`` split into P along dim 0) reduced over all ranks."""
    op = ReduceOp(op)
    p = comm.world_size
    if data.shape[0] % p:
        raise comm.error(f"reducescatter: dim 0 ({data.shape[0]}) is not a multiple of the world size {p}")
    chunks = [c.contiguous() for c in torch.chunk(data, p)]
    mine = chunks[comm.rank].clone()
    with comm.scope(f"reducescatter({op.value})"):
        peers = _peers(comm)
        got = [torch.empty_like(mine) for _ in peers]
        comm.exchange([(q, chunks[q]) for q in peers], list(zip(peers, got, strict=True)), name="reducescatter")
        for g in got:
            reduce_into(comm, mine, g, op)
    return mine


def alltoall(comm: RankComm, data: torch.Tensor) -> torch.Tensor:
    """Rank ``r`` ends with ``[P, ...]`` whose row ``q`` is row ``r`` of rank ``q``'s ``data`` (``[P, ...]``)."""
    p = comm.world_size
    if data.shape[0] != p:
        raise comm.error(f"alltoall: dim 0 must be the world size {p}, got {data.shape[0]}")
    out = torch.empty_like(data)
    out[comm.rank].copy_(data[comm.rank])
    with comm.scope("alltoall"):
        peers = _peers(comm)
        comm.exchange([(q, data[q].contiguous()) for q in peers], [(q, out[q]) for q in peers], name="alltoall")
    return out


def analytic_cycles(
    hop: Callable[[int], int], kind: str, nbytes: int, world_size: int, mode: str = "ring", core_num: int = 1
) -> int:
    """The link model's cycles for one collective on ``nbytes`` per rank, every rank starting together
    (``hop``: cycles of one hop of n bytes, e.g. :meth:`RankComm.hop_cycles`): ring allreduce
    ``2 (P-1) hop(S/P)``; mesh ``(P-1) hop(S/core_num)``. A lower bound: the local reduces are not in it."""
    p = world_size
    if kind == "allreduce" and mode == "ring":
        return 2 * (p - 1) * hop(math.ceil(nbytes / p))
    if kind == "allreduce":
        return (p - 1) * hop(math.ceil(nbytes / core_num))
    raise ValueError(f"analytic_cycles: unknown collective {kind!r} (expected 'allreduce')")


reduce_scatter = reducescatter
"""Upstream's spelling (``pld.tensor.reduce_scatter``)."""
all_to_all = alltoall
"""Upstream's spelling (``pld.tensor.all_to_all``)."""
