# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# The in-kernel pld.tensor.allreduce (signal of static world size 2, 2-D data):
# - mode=mesh: a barrier, a remote tile load of every rank's data in rank order combined with
#   pl.tile.maximum (op=Max), a second barrier and a store into this rank's data;
# - mode=ring (op=Prod): per round a wait on cell 0 (the left neighbour's rounds), then a remote load of the
#   left's segment, pl.tile.mul with the own one and a store (reduce-scatter), or a get of the left's segment
#   into the own one (allgather: GM to GM), a notify of the right neighbour; then "done" on cell 1 and the
#   credit clears;
# - mode=ring, op=Sum: pushes: "ready" to the left (cell 1), per round an atomic-add put (reduce-scatter)
#   or a put (allgather) of a [1, 32] segment into the right neighbour and a notify of its cell 0;
# - without a signal, or with core_num > 1 in a kernel not launched as that many SPMD blocks (here: no
#   launch at all), it stays (its torch form runs it).

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, data: pld.DistributedTensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32],
          other: pld.DistributedTensor[[1, 64], pl.FP32], ring: pld.DistributedTensor[[1, 64], pl.FP32],
          rsig: pld.DistributedTensor[[2, 1], pl.INT32]) -> pl.Tensor[[1, 64], pl.FP32]:
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, mode=pld.AllreduceMode.mesh)
        other = pld.tensor.allreduce(other)
        other = pld.tensor.allreduce(other, sig, core_num=2)
        ring = pld.tensor.allreduce(ring, rsig, op=pld.ReduceOp.Prod, mode=pld.AllreduceMode.ring)
        other = pld.tensor.allreduce(other, rsig, op=pld.ReduceOp.Sum, mode=pld.AllreduceMode.ring)
        return data


# CHECK-NOT:  pld.tensor.allreduce(data
# CHECK:      [[S:[a-z_0-9]+]]: pl.Tensor[[2, 1], pl.INT32] = pld.tensor.barrier(sig)
# CHECK-NEXT: {{[a-z_0-9]+}}: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.maximum(pld.tile.remote_load(data, 0, [0, 0], [1, 64]), pld.tile.remote_load(data, 1, [0, 0], [1, 64]))
# CHECK-NEXT: pld.tensor.barrier([[S]])
# CHECK-NEXT: data: {{.*}} = pl.tile.store({{[a-z_0-9]+}}, [0, 0], data)
# CHECK-NEXT: pld.tensor.allreduce(other)
# CHECK-NEXT: pld.tensor.allreduce(other, sig, core_num=2)
# CHECK:      [[ME:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = pld.rank(pld.get_comm_ctx(ring))
# CHECK:      pld.system.wait(pld.system.notify(rsig, {{.*}}, [0, 0], value=1), [0, 0], expected=1)
# CHECK:      pl.tile.store(pl.tile.mul(pld.tile.remote_load(ring, {{.*}}, [1, 32]), pl.tile.load(ring, {{.*}}, [1, 32], [1, 32], target_memory=pl.Mem.Vec))
# CHECK:      [0, 0], expected=2)
# CHECK:      pld.tensor.get([[V:[a-z_0-9]+]], {{.*}}, [[V]], [0, [[C:[a-z_0-9]+]]], [0, [[C]]], shape=[1, 32])
# CHECK:      [1, 0], value=1), [1, 0], expected=1), [[ME]], [0, 0], value=-2), [[ME]], [1, 0], value=-1)
# CHECK-NOT:  pld.tensor.allreduce(ring
# CHECK:      pld.system.wait(pld.system.notify(rsig, {{.*}}, [1, 0], value=1), [1, 0], expected=1)
# CHECK:      pld.tensor.put(other, {{.*}}, other, {{.*}}, shape=[1, 32], atomic=pl.AtomicType.Add)
# CHECK:      [0, 0], expected=1)
# CHECK:      pld.tensor.put({{.*}}, shape=[1, 32])
# CHECK:      [0, 0], expected=2)
