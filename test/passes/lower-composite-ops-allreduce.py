# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# The in-kernel pld.tensor.allreduce (signal of static world size 2, 2-D data) becomes a barrier, a
# remote tile load of every rank's data in rank order combined with pl.tile.maximum (op=Max), a second
# barrier and a store into this rank's data. Without a signal it stays (its torch form runs it).

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, data: pld.DistributedTensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32],
          other: pld.DistributedTensor[[1, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, mode=pld.AllreduceMode.ring)
        other = pld.tensor.allreduce(other)
        return data


# CHECK-NOT:  pld.tensor.allreduce(data
# CHECK:      [[S:[a-z_0-9]+]]: pl.Tensor[[2, 1], pl.INT32] = pld.tensor.barrier(sig)
# CHECK-NEXT: {{[a-z_0-9]+}}: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.maximum(pld.tile.remote_load(data, 0, [0, 0], [1, 64]), pld.tile.remote_load(data, 1, [0, 0], [1, 64]))
# CHECK-NEXT: pld.tensor.barrier([[S]])
# CHECK-NEXT: data: {{.*}} = pl.tile.store({{[a-z_0-9]+}}, [0, 0], data)
# CHECK-NEXT: pld.tensor.allreduce(other)
