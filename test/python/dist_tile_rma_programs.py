"""2-rank programs for test_distributed_tile_rma.py: the same put / get written with ``pld.tensor.put/get``
and with ``pld.tile.put/get`` and an explicit Vec staging tile (module-level, so the forked ranks and the
front end see their source)."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

N = 64


@pl.jit.incore
def put_k(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
          box: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx: pld.CommCtx = pld.get_comm_ctx(box)
    nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    pld.tensor.put(box, peer=nxt, src=x)
    pld.system.notify(sig, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(box, [0, 0], [2, N]), [0, 0], y)
    return y


@pl.jit.incore
def tile_put_k(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
               box: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx: pld.CommCtx = pld.get_comm_ctx(box)
    nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    stage = pl.tile.create([1, N], dtype=pl.FP32, target_memory=pl.Mem.Vec)
    pld.tile.put(box, nxt, x, stage)
    pld.system.notify(sig, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(box, [0, 0], [2, N]), [0, 0], y)
    return y


@pl.jit.incore
def get_k(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
          data: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    ctx: pld.CommCtx = pld.get_comm_ctx(data)
    prev = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    data = pl.store(pl.load(x, [0, 0], [2, N]), [0, 0], data)
    pld.tensor.barrier(sig)
    y = pld.tensor.get(y, prev, data, dst_offsets=[1, 0], src_offsets=[0, 0], shape=[1, N])
    return y


@pl.jit.incore
def tile_get_k(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
               data: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    ctx: pld.CommCtx = pld.get_comm_ctx(data)
    prev = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    data = pl.store(pl.load(x, [0, 0], [2, N]), [0, 0], data)
    pld.tensor.barrier(sig)
    stage = pl.tile.create([1, N], dtype=pl.FP32, target_memory=pl.Mem.Vec)
    y = pld.tile.get(y, prev, data, stage, None, [1, 0], [0, 0], [1, N])
    return y


@pl.jit
def put_chip(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
             box: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return put_k(x, y, box, sig)


@pl.jit
def tile_put_chip(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
                  box: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return tile_put_k(x, y, box, sig)


@pl.jit
def get_chip(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
             data: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    return get_k(x, y, data, sig)


@pl.jit
def tile_get_chip(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
                  data: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    return tile_get_k(x, y, data, sig)


@pl.jit.host
def put_host(x: pl.Tensor[[2, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    box = pld.alloc_window_buffer([2, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        put_chip(x[r], y[r], pld.window(box, [2, N], dtype=pl.FP32), pld.window(sig, [1, 1], dtype=pl.INT32),
                 device=r)


@pl.jit.host
def tile_put_host(x: pl.Tensor[[2, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    box = pld.alloc_window_buffer([2, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        tile_put_chip(x[r], y[r], pld.window(box, [2, N], dtype=pl.FP32), pld.window(sig, [1, 1], dtype=pl.INT32),
                      device=r)


@pl.jit.host
def get_host(x: pl.Tensor[[2, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    data = pld.alloc_window_buffer([2, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        get_chip(x[r], y[r], pld.window(data, [2, N], dtype=pl.FP32), pld.window(sig, [2, 1], dtype=pl.INT32),
                 device=r)


@pl.jit.host
def tile_get_host(x: pl.Tensor[[2, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    data = pld.alloc_window_buffer([2, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        tile_get_chip(x[r], y[r], pld.window(data, [2, N], dtype=pl.FP32), pld.window(sig, [2, 1], dtype=pl.INT32),
                      device=r)
