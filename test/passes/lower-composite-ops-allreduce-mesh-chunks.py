# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# A mesh pld.tensor.allreduce over AllreduceOp.MESH_UB_BYTES (64 KiB) goes chunk by chunk, as upstream's
# mesh: [1, 18432] FP32 (72 KiB) is four [1, 4096] chunks of 16 KiB and a [1, 2048] tail. One barrier first;
# then per group of at most 4 chunks (64 KiB held in UB) each rank's chunks read back to back (a burst: the link
# pipelines them), rank by rank, combined in rank order (Min; the last chunk first, so the first chunk's buffer
# is freed last and one flag orders the next burst after all of them), a barrier (every rank read those chunks
# before anyone overwrites them) and the stores of those chunks (the last first, for the same reason). At 64 KiB ([1, 16384]) it stays one piece: one remote load per rank of the
# whole window, two barriers.

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, big: pld.DistributedTensor[[1, 18432], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32],
          edge: pld.DistributedTensor[[1, 16384], pl.FP32]) -> pl.Tensor[[1, 18432], pl.FP32]:
        big = pld.tensor.allreduce(big, sig, op=pld.ReduceOp.Min)
        edge = pld.tensor.allreduce(edge, sig)
        return big


# (a name captured on a CHECK-NEXT line does not substitute in this filecheck: captures are on CHECK lines)
# CHECK-NOT:  pld.tensor.allreduce
# CHECK:      [[S0:[a-z_0-9]+]]: {{.*}} = pld.tensor.barrier(sig)
# CHECK:      [[L0:[a-z_0-9]+]]: {{.*}} = pld.tile.remote_load(big, 0, [0, 0], [1, 4096])
# CHECK-NEXT: pld.tile.remote_load(big, 0, [0, 4096], [1, 4096])
# CHECK-NEXT: pld.tile.remote_load(big, 0, [0, 8192], [1, 4096])
# CHECK:      [[L3:[a-z_0-9]+]]: {{.*}} = pld.tile.remote_load(big, 0, [0, 12288], [1, 4096])
# CHECK:      [[R0:[a-z_0-9]+]]: {{.*}} = pld.tile.remote_load(big, 1, [0, 0], [1, 4096])
# CHECK-NEXT: pld.tile.remote_load(big, 1, [0, 4096], [1, 4096])
# CHECK-NEXT: pld.tile.remote_load(big, 1, [0, 8192], [1, 4096])
# CHECK:      [[R3:[a-z_0-9]+]]: {{.*}} = pld.tile.remote_load(big, 1, [0, 12288], [1, 4096])
# CHECK:      [[A3:[a-z_0-9]+]]: {{.*}} = pl.tile.minimum([[L3]], [[R3]])
# CHECK-NEXT: pl.tile.minimum(
# CHECK-NEXT: pl.tile.minimum(
# CHECK:      [[A0:[a-z_0-9]+]]: {{.*}} = pl.tile.minimum([[L0]], [[R0]])
# CHECK:      [[S1:[a-z_0-9]+]]: {{.*}} = pld.tensor.barrier([[S0]])
# CHECK:      [[D:[a-z_0-9]+]]: {{.*}} = pl.tile.store([[A0]], [0, 0], pl.tile.store({{[a-z_0-9]+}}, [0, 4096], pl.tile.store({{[a-z_0-9]+}}, [0, 8192], pl.tile.store([[A3]], [0, 12288], big))))
# CHECK:      [[A4:[a-z_0-9]+]]: {{.*}} = pl.tile.minimum(pld.tile.remote_load([[D]], 0, [0, 16384], [1, 2048]), pld.tile.remote_load([[D]], 1, [0, 16384], [1, 2048]))
# CHECK-NEXT: pld.tensor.barrier([[S1]])
# CHECK-NEXT: big{{.*}} = pl.tile.store([[A4]], [0, 16384], [[D]])
# CHECK-NOT:  [0, 18432]
# CHECK:      pld.tensor.barrier(sig)
# CHECK-NEXT: pl.tile.add(pld.tile.remote_load(edge, 0, [0, 0], [1, 16384]), pld.tile.remote_load(edge, 1, [0, 0], [1, 16384]))
# CHECK-NEXT: pld.tensor.barrier(
# CHECK-NEXT: edge{{.*}} = pl.tile.store({{[a-z_0-9]+}}, [0, 0], edge)
