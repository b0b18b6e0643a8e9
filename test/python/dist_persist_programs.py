"""Programs for test_distributed_persistent.py (module-level, so the front end sees their source):
persistent windows across a prepared worker's dispatches, stacked shards placed by ``worker_ids``, and
two comm domains of window buffers on overlapping ranks."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

N = 64


@pl.program
class CountSignals:
    """Each rank adds 1 to its peer's signal cell, waits until its own holds ``>= epoch`` (``inp[r][0, 0]``)
    and reports the cell: 1 on fresh windows, the dispatch count on windows kept without a reset."""

    @pl.function(type=pl.FunctionType.InCore)
    def count_step(self, inp: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[1, 1], pl.INT32]],
                   signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
                   peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 1], pl.INT32]:
        pld.system.notify(target=signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        epoch: pl.Scalar[pl.INT32] = pl.read(inp, [0, 0])
        pld.system.wait(signal=signal, offsets=[0, 0], expected=epoch, cmp=pld.WaitCmp.Ge)
        val: pl.Scalar[pl.INT32] = pl.read(signal, [0, 0])
        pl.write(out, [0, 0], val)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, inp: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[1, 1], pl.INT32]],
                  signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
                  peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 1], pl.INT32]:
        return self.count_step(inp, out, signal, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inp: pl.Tensor[[2, 1, 8], pl.INT32],
                  out: pl.Out[pl.Tensor[[2, 1, 1], pl.INT32]]) -> pl.Tensor[[2, 1, 1], pl.INT32]:
        signal_buf = pld.alloc_window_buffer(pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(inp[r], out[r], signal, (r + 1) % pld.world_size(), device=r)
        return out


@pl.program
class PermutedAdd:
    """``f[i] = a[i] + w[i]`` with ``w[0]`` used on rank 1 and ``w[1]`` on rank 0 (``worker_ids=[1, 0]``)."""

    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[2, N], pl.FP32], w: pl.Tensor[[2, N], pl.FP32],
              f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [2, N]), pl.load(w, [0, 0], [2, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def add(self, a: pl.Tensor[[2, N], pl.FP32], w: pl.Tensor[[2, N], pl.FP32],
            f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return self.add_k(a, w, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[2, 2, N], pl.FP32], w: pl.Tensor[[2, 2, N], pl.FP32],
                  f: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
        self.add(a[0], w[0], f[0], device=1)
        self.add(a[1], w[1], f[1], device=0)


@pl.program
class TwoDomains:
    """Ranks {0, 1} swap through buffers A, ranks {1, 2} through buffers B; ``peer`` is a rank of the
    buffer's comm domain (rank 1 is peer 0 of domain B, rank 2 peer 1). The scratch views are 1-D
    (``[N]``) for a ``[1, N]`` parameter, as upstream accepts."""

    @pl.function(type=pl.FunctionType.InCore)
    def swap_k(self, inp: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[1, N], pl.FP32]],
               scratch: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
               peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        pl.store(pl.load(inp, [0, 0], [1, N]), [0, 0], scratch)
        pld.system.notify(signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal=signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        recv = pld.tile.remote_load(scratch, peer=peer, offsets=[0, 0], shape=[1, N])
        return pl.store(recv, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def swap(self, inp: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[1, N], pl.FP32]],
             scratch: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
             peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        return self.swap_k(inp, out, scratch, signal, peer)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inp: pl.Tensor[[3, 1, N], pl.FP32], out_a: pl.Out[pl.Tensor[[3, 1, N], pl.FP32]],
                  out_b: pl.Out[pl.Tensor[[3, 1, N], pl.FP32]]) -> pl.Tensor[[3, 1, N], pl.FP32]:
        scratch_a = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        signal_a = pld.alloc_window_buffer(pl.INT32.get_byte())
        scratch_b = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        signal_b = pld.alloc_window_buffer(pl.INT32.get_byte())
        for r in pl.range(2):
            self.swap(inp[r], out_a[r], pld.window(scratch_a, [N], dtype=pl.FP32),
                      pld.window(signal_a, [1, 1], dtype=pl.INT32), 1 - r, device=r)
        for r in pl.range(1, 3):
            self.swap(inp[r], out_b[r], pld.window(scratch_b, [N], dtype=pl.FP32),
                      pld.window(signal_b, [1, 1], dtype=pl.INT32), 2 - r, device=r)
        return out_a


@pl.program
class AddSub:
    """Two Orchestration entries and no HOST orchestrator: an L2 build of two programs."""

    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[2, N], pl.FP32], b: pl.Tensor[[2, N], pl.FP32],
              f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [2, N]), pl.load(b, [0, 0], [2, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.InCore)
    def sub_k(self, a: pl.Tensor[[2, N], pl.FP32], b: pl.Tensor[[2, N], pl.FP32],
              f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return pl.store(pl.sub(pl.load(a, [0, 0], [2, N]), pl.load(b, [0, 0], [2, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def add(self, a: pl.Tensor[[2, N], pl.FP32], b: pl.Tensor[[2, N], pl.FP32],
            f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return self.add_k(a, b, f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def sub(self, a: pl.Tensor[[2, N], pl.FP32], b: pl.Tensor[[2, N], pl.FP32],
            f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return self.sub_k(a, b, f)


@pl.program
class HostAdd:
    """A HOST orchestrator without ``pld`` or ``device=``: one chip's program under a host orchestrator."""

    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[2, N], pl.FP32], b: pl.Tensor[[2, N], pl.FP32],
              f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [2, N]), pl.load(b, [0, 0], [2, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def add(self, a: pl.Tensor[[2, N], pl.FP32], b: pl.Tensor[[2, N], pl.FP32],
            f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return self.add_k(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[2, N], pl.FP32], b: pl.Tensor[[2, N], pl.FP32],
                  f: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        out: pl.Tensor[[2, N], pl.FP32] = self.add(a, b, f)
        return out
