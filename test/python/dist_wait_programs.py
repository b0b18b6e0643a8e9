"""A 3-rank kernel reusing one signal cell across two rounds, for test_distributed_horizon.py (module-level, so
the forked ranks and the front end see its source)."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

N = 64
WORK = 2000


@pl.jit.incore
def rounds_k(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
             sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    """Each rank notifies both peers' cell for round 1, works, notifies them for round 2 (without waiting in
    between), then waits for round 1 (``Ge 2``), works again and waits for round 2 (``Ge 4``)."""
    ctx: pld.CommCtx = pld.get_comm_ctx(sig)
    a = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    b = (pld.rank(ctx) + 2) % pld.nranks(ctx)
    pld.system.notify(sig, peer=a, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.notify(sig, peer=b, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    t = pl.load(x, [0, 0], [2, N])
    y = pl.store(pl.add(t, t), [0, 0], y)
    pld.system.notify(sig, peer=a, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.notify(sig, peer=b, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=2, cmp=pld.WaitCmp.Ge)
    u = pl.load(y, [0, 0], [2, N])
    y = pl.store(pl.add(u, u), [0, 0], y)
    pld.system.wait(sig, offsets=[0, 0], expected=4, cmp=pld.WaitCmp.Ge)
    return y


@pl.jit
def rounds_chip(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
                sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return rounds_k(x, y, sig)


@pl.jit.host
def rounds_host(x: pl.Tensor[[3, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[3, 2, N], pl.FP32]]):
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        rounds_chip(x[r], y[r], pld.window(sig, [1, 1], dtype=pl.INT32), device=r)


@pl.jit.incore
def credit_k(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
             sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    """Two ``pld.tensor.barrier``s on one signal (a credit barrier: it clears itself); rank 0 works before the
    first, rank 1 before the second (``WORK`` adds of a [2, N] tile)."""
    ctx: pld.CommCtx = pld.get_comm_ctx(sig)
    me = pld.rank(ctx)
    t = pl.load(x, [0, 0], [2, N])
    for _i in pl.range((1 - me) * WORK):
        t = pl.add(t, t)
    y = pl.store(t, [0, 0], y)
    pld.tensor.barrier(sig)
    u = pl.load(y, [0, 0], [2, N])
    for _i in pl.range(me * WORK):
        u = pl.add(u, u)
    y = pl.store(u, [0, 0], y)
    pld.tensor.barrier(sig)
    return y


@pl.jit
def credit_chip(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
                sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    return credit_k(x, y, sig)


@pl.jit.host
def credit_host(x: pl.Tensor[[2, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        credit_chip(x[r], y[r], pld.window(sig, [2, 1], dtype=pl.INT32), device=r)
