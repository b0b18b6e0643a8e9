"""Deferred completion programs (``pld.system.defer_wait``) for test_distributed_deferred.py: on each
rank, waiters and their consumers are submitted before the publisher that satisfies the peer's waiters."""

import pypto.language as pl
import pypto.language.distributed as pld

W = 8  # one 1 x 8 INT32 row (32 bytes)


def deferred_program(waiters: int, expected: int = 1):
    """Per rank: ``waiters`` deferred waiters on ``signal[0, 0] >= expected``, each with a consumer
    (``deps=[wait_tid]``) copying the peer's payload into its row of ``out``; then the publisher, which
    stores this rank's ``inp`` into the next rank's payload and sets its signal to 1."""
    N = waiters  # noqa: N806 - closed over by the shape annotations

    @pl.program
    class Deferred:
        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(
            self,
            inp: pl.Tensor[[1, W], pl.INT32],
            out: pl.Out[pl.Tensor[[N, W], pl.INT32]],
            payload: pl.InOut[pld.DistributedTensor[[1, W], pl.INT32]],
            signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
            peer: pl.Scalar[pl.INT32],
        ) -> pl.Tensor[[N, W], pl.INT32]:
            with pl.manual_scope():
                for slot in pl.range(N):
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="waiter") as wait_tid:
                        pld.system.defer_wait(signal=signal, offsets=[0, 0], expected=expected, cmp=pld.WaitCmp.Ge)
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer", deps=[wait_tid]):
                        got = pl.load(payload, [0, 0], [1, W])
                        out = pl.store(got, [slot, 0], out)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="publisher"):
                    mine = pl.load(inp, [0, 0], [1, W])
                    pld.tile.remote_store(mine, target=payload, peer=peer, offsets=[0, 0])
                    pld.system.notify(target=signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)
            return out

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            inputs: pl.Tensor[[2, 1, W], pl.INT32],
            outputs: pl.Out[pl.Tensor[[2, N, W], pl.INT32]],
        ) -> pl.Tensor[[2, N, W], pl.INT32]:
            payload_buf = pld.alloc_window_buffer(W * pl.INT32.get_byte())
            signal_buf = pld.alloc_window_buffer(pl.INT32.get_byte())
            for rank in pl.range(pld.world_size()):
                payload = pld.window(payload_buf, [1, W], dtype=pl.INT32)
                signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
                self.chip_orch(inputs[rank], outputs[rank], payload, signal, (rank + 1) % pld.world_size(),
                               device=rank)
            return outputs

    return Deferred


@pl.program
class LoadAfterDefer:
    """A kernel that reads its payload after its own defer_wait (upstream's contract forbids it)."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        out: pl.Out[pl.Tensor[[1, W], pl.INT32]],
        payload: pl.InOut[pld.DistributedTensor[[1, W], pl.INT32]],
        signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    ) -> pl.Tensor[[1, W], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="waiter"):
            pld.system.defer_wait(signal=signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
            out = pl.store(pl.load(payload, [0, 0], [1, W]), [0, 0], out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, outputs: pl.Out[pl.Tensor[[2, 1, W], pl.INT32]]) -> pl.Tensor[[2, 1, W], pl.INT32]:
        payload_buf = pld.alloc_window_buffer(W * pl.INT32.get_byte())
        signal_buf = pld.alloc_window_buffer(pl.INT32.get_byte())
        for rank in pl.range(pld.world_size()):
            payload = pld.window(payload_buf, [1, W], dtype=pl.INT32)
            signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(outputs[rank], payload, signal, device=rank)
        return outputs
