# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# The other in-kernel collectives on a static world size (2, from the signal) become point-to-point ops:
# broadcast = barrier + get of root's data; allgather = a put of local_data into row `me` of every rank's
# target + barrier; reduce_scatter = barrier, own row combined with the other ranks' row `me`
# ((me + k) % 2), barrier, store; all_to_all = a put of input row d into rank d's row `me` + barrier.
# A target whose rows are not the world size stays (its torch form runs it).

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, data: pld.DistributedTensor[[1, 64], pl.FP32], rows: pld.DistributedTensor[[2, 64], pl.FP32],
          rows2: pld.DistributedTensor[[2, 64], pl.FP32], big: pld.DistributedTensor[[4, 64], pl.FP32],
          sig: pld.DistributedTensor[[2, 1], pl.INT32]) -> pl.Tensor[[2, 64], pl.FP32]:
        data = pld.tensor.broadcast(data, sig, root=1)
        rows = pld.tensor.allgather(data, rows, sig)
        rows = pld.tensor.reduce_scatter(rows, sig, op=pld.ReduceOp.Min)
        rows2 = pld.tensor.all_to_all(rows, rows2, sig)
        big = pld.tensor.reduce_scatter(big, sig)
        return rows2


# CHECK:      pld.tensor.barrier(sig)
# CHECK-NEXT: data: {{.*}} = pld.tensor.get(data, 1, data)
# CHECK:      [[ME:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = pld.rank(pld.get_comm_ctx(rows))
# CHECK-NEXT: rows_1: {{.*}} = pld.tensor.put(pld.tensor.put(rows, 0, data, {{.}}[[ME]], 0], [0, 0], shape={{.}}1, 64]), 1, data, {{.}}[[ME]], 0], [0, 0], shape={{.}}1, 64])
# CHECK-NEXT: pld.tensor.barrier(sig)
# CHECK:      pld.tensor.barrier(sig)
# CHECK:      pl.tile.minimum(pl.tile.load(rows_1, {{.*}}target_memory=pl.Mem.Vec), pld.tile.remote_load(rows_1, ({{.*}} + 1) % 2, {{.*}}))
# CHECK:      pl.tile.store(
# CHECK:      pld.tensor.put(pld.tensor.put(rows2, 0, {{.*}}, [0, 0], shape=[1, 64]), 1, {{.*}}, [1, 0], shape=[1, 64])
# CHECK-NEXT: pld.tensor.barrier(sig)
# CHECK:      pld.tensor.reduce_scatter(big, sig)

