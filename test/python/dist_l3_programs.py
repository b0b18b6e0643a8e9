"""L3 programs for test_distributed_l3.py: @pl.jit.host orchestrators over per-rank programs
(module-level, so the forked ranks and the front end see their source)."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

N = 64


@pl.jit.incore
def scale_add_k(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]], r: pl.Scalar[pl.INT32]):
    t = pl.load(x, [0, 0], [2, N])
    rf = pl.cast(r, target_type=pl.FP32)
    t = pl.add(pl.mul(t, 3.0), rf)
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def scale_add(x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]], r: pl.Scalar[pl.INT32]):
    return scale_add_k(x, y, r)


@pl.jit.host
def chip_host(x: pl.Tensor[[4, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[4, 2, N], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        scale_add(x[r], y[r], r, device=r)


@pl.jit.incore
def put_next_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
               box: pld.DistributedTensor[[1, N], pl.FP32], stage: pld.DistributedTensor[[1, N], pl.FP32],
               sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(box)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, N])
    t = pl.add(t, 1.0)
    stage = pl.store(t, [0, 0], stage)
    nxt = (me + 1) % n
    pld.tensor.put(box, peer=nxt, src=stage)
    pld.system.notify(sig, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    got = pl.load(box, [0, 0], [1, N])
    y = pl.store(got, [0, 0], y)
    return y


@pl.jit
def put_next(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
             box: pld.DistributedTensor[[1, N], pl.FP32], stage: pld.DistributedTensor[[1, N], pl.FP32],
             sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return put_next_k(x, y, box, stage, sig)


@pl.jit.host
def put_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    box = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    stage = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per = [pld.window(box, [1, N], dtype=pl.FP32), pld.window(stage, [1, N], dtype=pl.FP32),
               pld.window(sig, [1, 1], dtype=pl.INT32)]
        put_next(x[r], y[r], per[0], per[1], per[2], device=r)


@pl.jit.incore
def pull_prev_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                data: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, N])
    data = pl.store(t, [0, 0], data)
    sig = pld.tensor.barrier(sig)
    prev = (me + n - 1) % n
    got = pld.tile.remote_load(data, peer=prev, offsets=[0, 0], shape=[1, N])
    y = pl.store(pl.mul(got, 2.0), [0, 0], y)
    return y


@pl.jit
def pull_prev(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
              data: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    return pull_prev_k(x, y, data, sig)


@pl.jit.host
def pull_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    data = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        pull_prev(x[r], y[r], pld.window(data, [1, N], dtype=pl.FP32), pld.window(sig, [2, 1], dtype=pl.INT32),
                  device=r)


@pl.jit.incore
def pull_prev_full_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                     data: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    ctx = pld.system.get_comm_ctx(data)  # upstream's full paths of pld.get_comm_ctx / rank / nranks
    me = pld.system.rank(ctx)
    n = pld.system.nranks(ctx)
    t = pl.load(x, [0, 0], [1, N])
    data = pl.store(t, [0, 0], data)
    sig = pld.tensor.barrier(sig)
    prev = (me + n - 1) % n
    got = pld.tile.remote_load(data, peer=prev, offsets=[0, 0], shape=[1, N])
    y = pl.store(pl.mul(got, 2.0), [0, 0], y)
    return y


@pl.jit
def pull_prev_full(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                   data: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    return pull_prev_full_k(x, y, data, sig)


@pl.jit.host
def pull_host_full(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    """pull_host in upstream's full paths (pld.tensor.alloc_window_buffer / window, pld.system.world_size)."""
    data = pld.tensor.alloc_window_buffer([1, N], dtype=pl.FP32)
    sig = pld.tensor.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.system.world_size()):
        pull_prev_full(x[r], y[r], pld.tensor.window(data, [1, N], dtype=pl.FP32),
                       pld.tensor.window(sig, [2, 1], dtype=pl.INT32), device=r)


@pl.jit.incore
def wait_forever_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                   sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    sig = pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)  # nobody notifies
    t = pl.load(x, [0, 0], [1, N])
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def wait_forever(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                 sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return wait_forever_k(x, y, sig)


@pl.jit.host
def hang_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        wait_forever(x[r], y[r], pld.window(sig, [1, 1], dtype=pl.INT32), device=r)


@pl.jit.host
def no_device_host(x: pl.Tensor[[2, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        scale_add(x[r], y[r], r)


@pl.jit.host
def big_window_host(x: pl.Tensor[[2, 2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        pld.window(buf, [64, 64], dtype=pl.FP32)
        scale_add(x[r], y[r], r, device=r)


@pl.jit.incore
def reduce_mesh_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                  g: pl.Out[pl.Tensor[[2, N], pl.FP32]], data: pld.DistributedTensor[[1, N], pl.FP32],
                  rows: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    t = pl.load(x, [0, 0], [1, N])
    data = pl.store(t, [0, 0], data)
    rows = pld.tensor.allgather(data, rows, sig)
    data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, mode=pld.AllreduceMode.mesh)
    y = pl.store(pl.load(data, [0, 0], [1, N]), [0, 0], y)
    g = pl.store(pl.load(rows, [0, 0], [2, N]), [0, 0], g)
    return y, g


@pl.jit
def reduce_mesh(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                g: pl.Out[pl.Tensor[[2, N], pl.FP32]], data: pld.DistributedTensor[[1, N], pl.FP32],
                rows: pld.DistributedTensor[[2, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    y, g = reduce_mesh_k(x, y, g, data, rows, sig)
    return y, g


@pl.jit.incore
def reduce_ring_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                  data: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    t = pl.load(x, [0, 0], [1, N])
    data = pl.store(t, [0, 0], data)
    data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum, mode=pld.AllreduceMode.ring)
    y = pl.store(pl.load(data, [0, 0], [1, N]), [0, 0], y)
    return y


@pl.jit
def reduce_ring(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                data: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    return reduce_ring_k(x, y, data, sig)


@pl.jit.host
def collective_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]],
                    z: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]], g: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    data = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    rows = pld.alloc_window_buffer([2, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        d = pld.window(data, [1, N], dtype=pl.FP32)
        s = pld.window(sig, [2, 1], dtype=pl.INT32)
        reduce_mesh(x[r], y[r], g[r], d, pld.window(rows, [2, N], dtype=pl.FP32), s, device=r)
        reduce_ring(x[r], z[r], d, s, device=r)


def torch_reference_collectives(comm: object, x: object) -> tuple[object, object, object]:
    """torch.distributed's own results on rank r's row of ``x``: MAX all_reduce, SUM all_reduce, all_gather."""
    import torch
    import torch.distributed as dist

    mine = x[comm.rank].clone()  # type: ignore[attr-defined,index]
    mx, sm = mine.clone(), mine.clone()
    dist.all_reduce(mx, op=dist.ReduceOp.MAX)
    dist.all_reduce(sm, op=dist.ReduceOp.SUM)
    rows = [torch.empty_like(mine) for _ in range(comm.world_size)]  # type: ignore[attr-defined]
    dist.all_gather(rows, mine)
    return mx, sm, torch.cat(rows, dim=0)


H = N // 2


@pl.jit.incore
def accumulate_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                 z: pl.Out[pl.Tensor[[1, N], pl.FP32]], acc: pld.DistributedTensor[[1, N], pl.FP32],
                 box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(acc)
    me = pld.rank(ctx)
    for p in pl.range(2):  # every rank adds the first half of its x into every rank's acc
        pld.tensor.put(acc, p, x, dst_offsets=[0, 0], src_offsets=[0, 0], shape=[1, H], atomic=pld.AtomicType.Add,
                       chunk_cols=16)
        pld.system.notify(sig, p, [0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.tensor.remote_store(x, box, (me + 1) % 2, [0, 0])
    pld.system.notify(sig, (me + 1) % 2, [0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, [0, 0], expected=3, cmp=pld.WaitCmp.Ge)  # defer_wait: test_distributed_deferred.py
    y = pl.store(pl.load(acc, [0, 0], [1, N]), [0, 0], y)
    z = pl.store(pl.load(box, [0, 0], [1, N]), [0, 0], z)
    return y, z


@pl.jit
def accumulate(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
               z: pl.Out[pl.Tensor[[1, N], pl.FP32]], acc: pld.DistributedTensor[[1, N], pl.FP32],
               box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    y, z = accumulate_k(x, y, z, acc, box, sig)
    return y, z


@pl.jit.host
def accumulate_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]],
                    z: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    acc = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    box = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        accumulate(x[r], y[r], z[r], pld.window(acc, [1, N], dtype=pl.FP32), pld.window(box, [1, N], dtype=pl.FP32),
                   pld.window(sig, [1, 1], dtype=pl.INT32), device=r)


NR = pl.dynamic("NR")


@pl.program
class GatherSum:
    """The @pl.program form: a HOST orchestrator (run on the host) dispatching ``self.chip`` per rank."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
             sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[1, N], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        data = pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], data)
        for p in pl.range(n):
            if p != me:
                pld.system.notify(sig, peer=p, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        for q in pl.range(n):
            if q != me:
                pld.system.wait(sig, offsets=[q, 0], expected=1, cmp=pld.WaitCmp.Ge)
        acc = pl.load(data, [0, 0], [1, N])
        for q in pl.range(n):
            if q != me:
                acc = pl.add(acc, pld.tile.remote_load(data, peer=q, offsets=[0, 0], shape=[1, N]))
        return pl.store(acc, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
             sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[1, N], pl.FP32]:
        return self.step(x, y, data, sig)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32],
             y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]) -> pl.Tensor[[NR, 1, N], pl.FP32]:
        data_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        sig_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], pld.window(data_buf, [1, N], dtype=pl.FP32),
                      pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32), device=r)
        return y


@pl.program
class HostAllreduce:
    """A host-level collective between two dispatches: publish, pld.tensor.allreduce on the host, consume."""

    @pl.function(type=pl.FunctionType.InCore)
    def publish_k(self, x: pl.Tensor[[1, N], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]
                  ) -> pl.Tensor[[1, N], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[1, N], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]
                ) -> pl.Tensor[[1, N], pl.FP32]:
        return self.publish_k(x, data)

    @pl.function(type=pl.FunctionType.InCore)
    def consume_k(self, data: pld.DistributedTensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]
                  ) -> pl.Tensor[[1, N], pl.FP32]:
        return pl.store(pl.load(data, [0, 0], [1, N]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume(self, data: pld.DistributedTensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]
                ) -> pl.Tensor[[1, N], pl.FP32]:
        return self.consume_k(data, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32],
             y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]) -> pl.Tensor[[NR, 1, N], pl.FP32]:
        buf = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
        sig = pld.alloc_window_buffer([pld.world_size()], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish(x[r], pld.window(buf, [1, N], dtype=pl.FP32), device=r)
        data = pld.window(buf, [1, N], dtype=pl.FP32)
        data = pld.tensor.allreduce(data, pld.window(sig, [pld.world_size()], dtype=pl.INT32), op=pld.ReduceOp.Max,
                                    mode=pld.AllreduceMode.ring)
        for r in pl.range(pld.world_size()):
            self.consume(data, y[r], device=r)
        return y


@pl.program
class BarrierRounds:
    """Two rounds over one window: publish, host barrier, read the next rank's window; the second round's
    publish must not overwrite a window the first round's read has not read yet (no collective between)."""

    @pl.function(type=pl.FunctionType.InCore)
    def publish_k(self, x: pl.Tensor[[1, N], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]
                  ) -> pl.Tensor[[1, N], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[1, N], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]
                ) -> pl.Tensor[[1, N], pl.FP32]:
        return self.publish_k(x, data)

    @pl.function(type=pl.FunctionType.InCore)
    def peek_k(self, data: pld.DistributedTensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
               peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        got = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, N])
        return pl.store(got, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def peek(self, data: pld.DistributedTensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
             peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        return self.peek_k(data, y, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[2, NR, 1, N], pl.FP32],
             y: pl.Out[pl.Tensor[[2, NR, 1, N], pl.FP32]]) -> pl.Tensor[[2, NR, 1, N], pl.FP32]:
        buf = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
        sig = pld.window(pld.alloc_window_buffer([pld.world_size()], dtype=pl.INT32), [pld.world_size()],
                         dtype=pl.INT32)
        for rd in pl.range(2):
            for r in pl.range(pld.world_size()):
                self.publish(x[rd, r], pld.window(buf, [1, N], dtype=pl.FP32), device=r)
            pld.tensor.barrier(sig)
            for r in pl.range(pld.world_size()):
                self.peek(pld.window(buf, [1, N], dtype=pl.FP32), y[rd, r], (r + 1) % pld.world_size(), device=r)
        return y


@pl.jit.incore
def short_forms_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                  box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(box)
    me = pld.rank(ctx)
    nxt = (me + 1) % pld.nranks(ctx)
    t = pl.add(pl.load(x, [0, 0], [1, N]), 1.0)
    pld.remote_store(t, box, peer=nxt, offsets=[0, 0])  # upstream's short form: a tile -> pld.tile.remote_store
    pld.system.notify(sig, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    got = pld.remote_load(box, peer=me, offsets=[0, 0], shape=[1, N])  # = pld.tile.remote_load (own rank)
    y = pl.store(got, [0, 0], y)
    return y


@pl.jit
def short_forms(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return short_forms_k(x, y, box, sig)


@pl.jit.host
def short_forms_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    box = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        short_forms(x[r], y[r], pld.window(box, [1, N], dtype=pl.FP32), pld.window(sig, [1, 1], dtype=pl.INT32),
                    device=r)


CAP = 2  # all_to_all_v: MAX_RECV rows per peer (2 ranks: 4 rows)


@pl.jit.incore
def a2av_k(x: pl.Tensor[[2 * CAP, N], pl.FP32], counts: pl.Tensor[[2, 1], pl.INT32],
           y: pl.Out[pl.Tensor[[2 * CAP, N], pl.FP32]], rc: pl.Out[pl.Tensor[[2, 1], pl.INT32]],
           src: pld.DistributedTensor[[2 * CAP, N], pl.FP32], dst: pld.DistributedTensor[[2 * CAP, N], pl.FP32],
           sig: pld.DistributedTensor[[2, 1], pl.INT32], recv: pld.DistributedTensor[[2, 1], pl.INT32]):
    src = pl.store(pl.load(x, [0, 0], [2 * CAP, N]), [0, 0], src)
    dst = pld.tensor.all_to_all_v(src, dst, sig, counts, recv)
    y = pl.store(pl.load(dst, [0, 0], [2 * CAP, N]), [0, 0], y)
    rc = pl.store(pl.load(recv, [0, 0], [2, 1]), [0, 0], rc)
    return y, rc


@pl.jit
def a2av(x: pl.Tensor[[2 * CAP, N], pl.FP32], counts: pl.Tensor[[2, 1], pl.INT32],
         y: pl.Out[pl.Tensor[[2 * CAP, N], pl.FP32]], rc: pl.Out[pl.Tensor[[2, 1], pl.INT32]],
         src: pld.DistributedTensor[[2 * CAP, N], pl.FP32], dst: pld.DistributedTensor[[2 * CAP, N], pl.FP32],
         sig: pld.DistributedTensor[[2, 1], pl.INT32], recv: pld.DistributedTensor[[2, 1], pl.INT32]):
    y, rc = a2av_k(x, counts, y, rc, src, dst, sig, recv)
    return y, rc


@pl.jit.host
def a2av_host(x: pl.Tensor[[2, 2 * CAP, N], pl.FP32], counts: pl.Tensor[[2, 2, 1], pl.INT32],
              y: pl.Out[pl.Tensor[[2, 2 * CAP, N], pl.FP32]], rc: pl.Out[pl.Tensor[[2, 2, 1], pl.INT32]]):
    src = pld.alloc_window_buffer([2 * CAP, N], dtype=pl.FP32)
    dst = pld.alloc_window_buffer([2 * CAP, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    recv = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        a2av(x[r], counts[r], y[r], rc[r], pld.window(src, [2 * CAP, N], dtype=pl.FP32),
             pld.window(dst, [2 * CAP, N], dtype=pl.FP32), pld.window(sig, [2, 1], dtype=pl.INT32),
             pld.window(recv, [2, 1], dtype=pl.INT32), device=r)


@pl.jit.incore
def atomic_sum_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                 acc: pld.DistributedTensor[[1, N], pl.FP32], stage: pld.DistributedTensor[[1, N], pl.FP32],
                 sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(acc)
    me = pld.rank(ctx)
    nxt = (me + 1) % pld.nranks(ctx)
    stage = pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], stage)
    pld.tensor.put(acc, peer=me, src=stage, atomic=pld.AtomicType.Add)  # both ranks add into both accs
    pld.tensor.put(acc, peer=nxt, src=stage, atomic=pld.AtomicType.Add)
    pld.system.notify(sig, peer=me, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.notify(sig, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=2, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(acc, [0, 0], [1, N]), [0, 0], y)
    return y


@pl.jit
def atomic_sum(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
               acc: pld.DistributedTensor[[1, N], pl.FP32], stage: pld.DistributedTensor[[1, N], pl.FP32],
               sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return atomic_sum_k(x, y, acc, stage, sig)


@pl.jit.host
def atomic_sum_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    acc = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    stage = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        atomic_sum(x[r], y[r], pld.window(acc, [1, N], dtype=pl.FP32), pld.window(stage, [1, N], dtype=pl.FP32),
                   pld.window(sig, [1, 1], dtype=pl.INT32), device=r)


M = pl.dynamic("M")
K = pl.dynamic("K")


@pl.program
class CompositeDims:
    """HOST parameters of ``[M * 2, K]`` (not the rank count: bound from the call's tensors), whole
    tensors to two devices: a + b on device 0, a - b on device 1."""

    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[M * 2, K], pl.FP32], b: pl.Tensor[[M * 2, K], pl.FP32],
              f: pl.Out[pl.Tensor[[M * 2, K], pl.FP32]]) -> pl.Tensor[[M * 2, K], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, 64]), pl.load(b, [0, 0], [16, 64])), [0, 0], f)

    @pl.function(type=pl.FunctionType.InCore)
    def sub_k(self, a: pl.Tensor[[M * 2, K], pl.FP32], b: pl.Tensor[[M * 2, K], pl.FP32],
              g: pl.Out[pl.Tensor[[M * 2, K], pl.FP32]]) -> pl.Tensor[[M * 2, K], pl.FP32]:
        return pl.store(pl.sub(pl.load(a, [0, 0], [16, 64]), pl.load(b, [0, 0], [16, 64])), [0, 0], g)

    @pl.function(type=pl.FunctionType.Orchestration)
    def add(self, a: pl.Tensor[[M * 2, K], pl.FP32], b: pl.Tensor[[M * 2, K], pl.FP32],
            f: pl.Out[pl.Tensor[[M * 2, K], pl.FP32]]) -> pl.Tensor[[M * 2, K], pl.FP32]:
        return self.add_k(a, b, f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def sub(self, a: pl.Tensor[[M * 2, K], pl.FP32], b: pl.Tensor[[M * 2, K], pl.FP32],
            g: pl.Out[pl.Tensor[[M * 2, K], pl.FP32]]) -> pl.Tensor[[M * 2, K], pl.FP32]:
        return self.sub_k(a, b, g)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[M * 2, K], pl.FP32], b: pl.Tensor[[M * 2, K], pl.FP32],
             f: pl.Out[pl.Tensor[[M * 2, K], pl.FP32]], g: pl.Out[pl.Tensor[[M * 2, K], pl.FP32]]
             ) -> tuple[pl.Tensor[[M * 2, K], pl.FP32], pl.Tensor[[M * 2, K], pl.FP32]]:
        out_f = self.add(a, b, f, device=0)
        out_g = self.sub(a, b, g, device=1)
        return out_f, out_g


@pl.jit.incore
def push_computed_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                    box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    nxt = (pld.rank(pld.get_comm_ctx(box)) + 1) % 2
    doubled = pl.tensor.add(x, x)  # computed on the core: a tile after ConvertTensorToTileOps
    pld.tensor.remote_store(doubled, box, nxt, [0, 0])
    pld.system.notify(sig, nxt, [0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, [0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(box, [0, 0], [1, N]), [0, 0], y)
    return y


@pl.jit
def push_computed(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                  box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 1], pl.INT32]):
    return push_computed_k(x, y, box, sig)


@pl.jit.host
def push_computed_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    box = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        push_computed(x[r], y[r], pld.window(box, [1, N], dtype=pl.FP32), pld.window(sig, [1, 1], dtype=pl.INT32),
                      device=r)


@pl.jit.incore
def a2av_stage_k(x: pl.Tensor[[2 * CAP, N], pl.FP32], counts: pl.Tensor[[2, 1], pl.INT32],
                 src: pl.Out[pld.DistributedTensor[[2 * CAP, N], pl.FP32]],
                 cnt: pl.Out[pld.DistributedTensor[[2, 1], pl.INT32]]):
    src = pl.store(pl.load(x, [0, 0], [2 * CAP, N]), [0, 0], src)
    for d in pl.range(2):
        pl.write(cnt, [d, 0], pl.read(counts, [d, 0]))
    return src, cnt


@pl.jit
def a2av_stage(x: pl.Tensor[[2 * CAP, N], pl.FP32], counts: pl.Tensor[[2, 1], pl.INT32],
               src: pl.Out[pld.DistributedTensor[[2 * CAP, N], pl.FP32]],
               cnt: pl.Out[pld.DistributedTensor[[2, 1], pl.INT32]]):
    src, cnt = a2av_stage_k(x, counts, src, cnt)
    return src, cnt


@pl.jit.incore
def a2av_read_k(dst: pld.DistributedTensor[[2 * CAP, N], pl.FP32], recv: pld.DistributedTensor[[2, 1], pl.INT32],
                y: pl.Out[pl.Tensor[[2 * CAP, N], pl.FP32]], rc: pl.Out[pl.Tensor[[2, 1], pl.INT32]]):
    y = pl.store(pl.load(dst, [0, 0], [2 * CAP, N]), [0, 0], y)
    for s in pl.range(2):
        pl.write(rc, [s, 0], pl.read(recv, [s, 0]))
    return y, rc


@pl.jit
def a2av_read(dst: pld.DistributedTensor[[2 * CAP, N], pl.FP32], recv: pld.DistributedTensor[[2, 1], pl.INT32],
              y: pl.Out[pl.Tensor[[2 * CAP, N], pl.FP32]], rc: pl.Out[pl.Tensor[[2, 1], pl.INT32]]):
    y, rc = a2av_read_k(dst, recv, y, rc)
    return y, rc


@pl.jit.host
def host_a2av(x: pl.Tensor[[2, 2 * CAP, N], pl.FP32], counts: pl.Tensor[[2, 2, 1], pl.INT32],
              y: pl.Out[pl.Tensor[[2, 2 * CAP, N], pl.FP32]], rc: pl.Out[pl.Tensor[[2, 2, 1], pl.INT32]]):
    """Upstream's host-level ``pld.tensor.all_to_all_v``: stage, the builtin between the dispatches, read."""
    src = pld.alloc_window_buffer([2 * CAP, N], dtype=pl.FP32)
    dst = pld.alloc_window_buffer([2 * CAP, N], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    cnt = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    recv = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        a2av_stage(x[r], counts[r], pld.window(src, [2 * CAP, N], dtype=pl.FP32),
                   pld.window(cnt, [2, 1], dtype=pl.INT32), device=r)
    d = pld.tensor.all_to_all_v(pld.window(src, [2 * CAP, N], dtype=pl.FP32),
                                pld.window(dst, [2 * CAP, N], dtype=pl.FP32), pld.window(sig, [2, 1], dtype=pl.INT32),
                                pld.window(cnt, [2, 1], dtype=pl.INT32), pld.window(recv, [2, 1], dtype=pl.INT32))
    for r in pl.range(pld.world_size()):
        a2av_read(d, pld.window(recv, [2, 1], dtype=pl.INT32), y[r], rc[r], device=r)


@pl.jit.incore
def twice_k(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, N])
    y = pl.store(pl.add(t, t), [0, 0], y)
    return y


@pl.jit
def twice(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    return twice_k(x, y)


@pl.jit.host
def scratch_host(x: pl.Tensor[[2, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, N], pl.FP32]]):
    """A host intermediate (upstream's ``pl.create_tensor`` in a HOST orchestrator): written by one
    dispatch, read by the next on the same rank."""
    t = pl.create_tensor([2, 1, N], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        twice(x[r], t[r], device=r)
    for r in pl.range(pld.world_size()):
        twice(t[r], y[r], device=r)


PUT_HOST_SCRIPT = """
import json, os, sys
sys.path.insert(0, {test_dir!r})
import torch
import dist_l3_programs as p3
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

torch.manual_seed(0)  # every rank builds the same inputs
x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
rank = int(os.environ["RANK"])
cfg = RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1], timeout_s=120.0),
                save_kernels_dir=os.path.join({out_dir!r}, f"build{{rank}}"))
compiled = p3.put_host.compile(x, y, config=cfg)
compiled(x, y)
ok = bool(torch.equal(y, torch.roll(x + 1, 1, dims=0)))
with open(os.path.join({out_dir!r}, f"rank{{rank}}.json"), "w") as f:
    json.dump({{"ok": ok, "cycles": compiled.last_run.cycles, "host": os.environ.get({env!r})}}, f)
"""
"""A script running :func:`put_host` on the rank torchrun gives it (``RANK``); it writes ``rank{r}.json``
with whether the output matched, the cycles and the host id from the environment variable ``env``."""


def put_host_script(test_dir: str, out_dir: str, env: str = "PYPTO_HOST_ID") -> str:
    """:data:`PUT_HOST_SCRIPT` for the test folder ``test_dir`` writing into ``out_dir``."""
    return PUT_HOST_SCRIPT.format(test_dir=test_dir, out_dir=out_dir, env=env)
