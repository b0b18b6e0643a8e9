# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# pld.tensor.allreduce(core_num=2) in a kernel launched as 2 SPMD blocks (with pl.spmd(2)) on a [2, 2]
# signal (2 ranks, a lane per block): block b = pl.tile.get_block_idx() reduces its share, columns
# [b * 32, b * 32 + 32) of the [1, 64] window; its two credit barriers count on lane b (a notify of cell
# [me, b] on each rank, then per rank q a wait on [q, b] and a credit of -1), so blocks meet their peers only.
# A block's share over 64 KiB goes in 16 KiB chunks from its base column (big: [1, 40960] FP32, 80 KiB a
# block: five [1, 4096] chunks at b * 20480 + 0, 4096, ...).
# It stays (its torch form runs it) with a one-lane signal, or in a kernel launched as one block.

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def blocks(self, data: pld.DistributedTensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[2, 2], pl.INT32],
               thin: pld.DistributedTensor[[2, 1], pl.INT32]) -> pl.Tensor[[1, 64], pl.FP32]:
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, core_num=2)
        data = pld.tensor.allreduce(data, thin, core_num=2)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def big(self, data: pld.DistributedTensor[[1, 40960], pl.FP32],
            sig: pld.DistributedTensor[[2, 2], pl.INT32]) -> pl.Tensor[[1, 40960], pl.FP32]:
        data = pld.tensor.allreduce(data, sig, core_num=2)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def single(self, data: pld.DistributedTensor[[1, 64], pl.FP32],
               sig: pld.DistributedTensor[[2, 2], pl.INT32]) -> pl.Tensor[[1, 64], pl.FP32]:
        data = pld.tensor.allreduce(data, sig, core_num=2)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pld.DistributedTensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[2, 2], pl.INT32],
             thin: pld.DistributedTensor[[2, 1], pl.INT32], wide: pld.DistributedTensor[[1, 40960], pl.FP32]
             ) -> pl.Tensor[[1, 64], pl.FP32]:
        with pl.spmd(2):
            data = self.blocks(data, sig, thin)
        with pl.spmd(2):
            wide = self.big(wide, sig)
        data = self.single(data, sig)
        return data


# CHECK:      def big(
# CHECK:      [[B2:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()
# CHECK:      [[BASE:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = [[B2]] * 20480
# CHECK:      [[C1:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = [[BASE]] + 4096
# CHECK:      pld.tile.remote_load(data, 1, [0, [[BASE]]], [1, 4096])
# CHECK-NEXT: pld.tile.remote_load(data, 1, [0, [[C1]]], [1, 4096])
# CHECK:      [[BASE]] + 16384
# CHECK-NOT:  [[BASE]] + 20480
# CHECK:      def blocks(
# CHECK:      [[B:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()
# CHECK:      [[COL:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = [[B]] * 32
# CHECK:      [[ME:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = pld.rank(pld.get_comm_ctx(data))
# CHECK:      pld.system.notify(pld.system.notify(sig, 0, [[[ME]], [[B]]], value=1), 1, [[[ME]], [[B]]], value=1), [0, [[B]]], expected=1), [[ME]], [0, [[B]]], value=-1), [1, [[B]]], expected=1), [[ME]], [1, [[B]]], value=-1)
# CHECK:      pl.tile.maximum(pld.tile.remote_load(data, 0, [0, [[COL]]], [1, 32]), pld.tile.remote_load(data, 1, [0, [[COL]]], [1, 32]))
# CHECK:      [[ME]], [1, [[B]]], value=-1)
# CHECK:      pl.tile.store({{.*}}, [0, [[COL]]], data)
# CHECK-NOT:  pld.tile.remote_load
# CHECK:      pld.tensor.allreduce(data, thin, core_num=2)
# CHECK:      def single(
# CHECK-NEXT: pld.tensor.allreduce(data, sig, core_num=2)
