# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# pld.tensor.all_to_all_v on a static world size (2, from the signal), MAX_RECV = 4 / 2 = 2 rows: per rank d
# a put of input rows d * 2 .. (the whole capacity block) into rows me * 2 .. of rank d's target, and a Set
# notify of send_counts[d, 0] clamped to [0, 2] into rank d's recv_counts[me, 0]; then a barrier. Windows
# whose rows are not a multiple of the world size stay (the torch form runs them).

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pld.DistributedTensor[[4, 64], pl.FP32], y: pld.DistributedTensor[[4, 64], pl.FP32],
          sig: pld.DistributedTensor[[2, 1], pl.INT32], counts: pl.Tensor[[2, 1], pl.INT32],
          recv: pld.DistributedTensor[[2, 1], pl.INT32], odd: pld.DistributedTensor[[3, 64], pl.FP32],
          odd2: pld.DistributedTensor[[3, 64], pl.FP32]) -> pl.Tensor[[4, 64], pl.FP32]:
        y = pld.tensor.all_to_all_v(x, y, sig, counts, recv)
        odd2 = pld.tensor.all_to_all_v(odd, odd2, sig, counts, recv)
        return y


# CHECK:      [[ME:[a-z_0-9]+]]: pl.Scalar[pl.INDEX] = pld.rank(pld.get_comm_ctx(y))
# CHECK-NEXT: {{[a-z_0-9]+}}: pl.Scalar[pl.INDEX] = [[ME]] * 2
# CHECK-NEXT: pld.tensor.put(y, 0, x, {{.}}{{[a-z_0-9]+}}, 0], [0, 0], shape={{.}}2, 64])
# CHECK-NEXT: pld.system.notify(recv, 0, {{.}}[[ME]], 0], value=pl.min(pl.max(pl.tensor.read(counts, [0, 0]), pl.const(0, pl.INT32)), pl.const(2, pl.INT32)), op=pld.NotifyOp.Set)
# CHECK:      pld.tensor.put({{.*}}, 1, x, {{.*}}, [2, 0], shape={{.}}2, 64])
# CHECK:      pld.system.notify({{.*}}, 1, {{.}}[[ME]], 0], value={{.*}}pl.tensor.read(counts, [1, 0]){{.*}}, op=pld.NotifyOp.Set)
# CHECK:      pld.tensor.barrier(sig)
# CHECK:      pld.tensor.all_to_all_v(odd, odd2, sig, counts, recv)
