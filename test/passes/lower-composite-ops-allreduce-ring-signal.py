# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# pld.tensor.allreduce(mode=ring) on upstream's ring signal [2 * (W - 1), W] (here [6, 4]): 4 ranks, not 6.
# - 17 columns (not a multiple of 4): the mesh, its two credit barriers on the signal's last column (a
#   notify of cell [me, 3] on each of the 4 ranks, then per rank q a wait on [q, 3] and a credit of -1), a
#   remote load from each of the 4 ranks;
# - 64 columns: the ring, in segments of 64 / 4 = 16 columns.

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, odd: pld.DistributedTensor[[1, 17], pl.FP32], sig: pld.DistributedTensor[[6, 4], pl.INT32],
          even: pld.DistributedTensor[[1, 64], pl.FP32]) -> pl.Tensor[[1, 17], pl.FP32]:
        odd = pld.tensor.allreduce(odd, sig, mode=pld.AllreduceMode.ring)
        even = pld.tensor.allreduce(even, sig, op=pld.ReduceOp.Max, mode=pld.AllreduceMode.ring)
        return odd


# CHECK-NOT:  pld.tensor.barrier
# CHECK:      [[ME:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = pld.rank(pld.get_comm_ctx(odd))
# CHECK:      pld.system.notify(sig, 0, [[[ME]], 3], value=1), 1, [[[ME]], 3], value=1), 2, [[[ME]], 3], value=1), 3, [[[ME]], 3], value=1), [0, 3], expected=1), [[ME]], [0, 3], value=-1)
# CHECK-SAME: [3, 3], expected=1), [[ME]], [3, 3], value=-1)
# CHECK-NOT:  pld.tile.remote_load(odd, 4
# CHECK:      pl.tile.add(pl.tile.add(pl.tile.add(pld.tile.remote_load(odd, 0, [0, 0], [1, 17]), pld.tile.remote_load(odd, 1, [0, 0], [1, 17])), pld.tile.remote_load(odd, 2, [0, 0], [1, 17])), pld.tile.remote_load(odd, 3, [0, 0], [1, 17]))
# CHECK-NOT:  pld.tensor.barrier
# CHECK:      pl.tile.store({{.*}}, [0, 0], odd)
# CHECK-NOT:  pld.tensor.allreduce
# CHECK:      pl.tile.maximum(pld.tile.remote_load(even, {{.*}}, [1, 16])
