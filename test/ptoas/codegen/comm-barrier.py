# RUN: python %s | filecheck %s
# RUN: python %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto > %t2.pto && python -m pypto.ptoas.pto_text %t2.pto | diff %t2.pto -

# pld.tensor.barrier lowers to a credit barrier of pto.comm ops, unrolled over the signal's world size
# (2): "+1 into my cell" on every rank's signal, then per rank q: wait my cell q >= 1 and take the
# credit back (-1). pld.tensor.remote_store (a tensor) is one pto.comm.tput into the peer's window.

import pypto.language as pl
import pypto.language.distributed as pld

N = 64


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, N], pl.FP32], box: pld.DistributedTensor[[1, N], pl.FP32],
          sig: pld.DistributedTensor[[2, 1], pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        ctx = pld.get_comm_ctx(box)
        nxt = (pld.rank(ctx) + 1) % 2
        box = pld.tensor.remote_store(x, box, nxt, [0, 0], atomic=pld.AtomicType.Add)
        pld.tensor.barrier(sig)
        return box

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, N], pl.FP32], box: pld.DistributedTensor[[1, N], pl.FP32],
             sig: pld.DistributedTensor[[2, 1], pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        box = self.k(x, box, sig)
        return box


if __name__ == "__main__":
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    units = lower_to_pto(lower_program(P))
    print(print_pto(units["k"]))

# CHECK:      %[[BOXP:.*]] = pto.comm.peer_view %[[BOX:.*]], %{{.*}} : !pto.tensor_view<?x?xf32> -> !pto.tensor_view<?x?xf32>
# CHECK-NEXT: %[[DST:.*]] = pto.partition_view %[[BOXP]], {{.*}} -> !pto.partition_tensor_view<1x64xf32>
# CHECK-NEXT: %[[SRC:.*]] = pto.partition_view {{.*}} -> !pto.partition_tensor_view<1x64xf32>
# CHECK-NEXT: pto.comm.tput(%[[DST]], %[[SRC]] : {{.*}}) {atomicType = #pto<atomic_type atomic_add>}
# CHECK:      %[[R:.*]] = pto.comm.get_rank : i64
# CHECK-NEXT: %[[ME:.*]] = arith.index_cast %[[R]] : i64 to index
# CHECK-NEXT: %[[S0:.*]] = pto.comm.peer_view %[[SIG:.*]], %c0_index
# CHECK-NEXT: %[[C0:.*]] = pto.partition_view %[[S0]], offsets = [%[[ME]], %c0_index], sizes = [%c1_index, %c1_index] {{.*}} -> !pto.partition_tensor_view<1x1xi32>
# CHECK-NEXT: pto.comm.tnotify(%[[C0]], %c1_i32 : {{.*}}) {notifyOp = #pto<notify_op atomic_add>}
# CHECK-NEXT: %[[S1:.*]] = pto.comm.peer_view %[[SIG]], %c1_index
# CHECK-NEXT: %[[C1:.*]] = pto.partition_view %[[S1]], offsets = [%[[ME]], %c0_index]
# CHECK-NEXT: pto.comm.tnotify(%[[C1]], %c1_i32
# CHECK-NEXT: %[[M0:.*]] = pto.partition_view %[[SIG]], offsets = [%c0_index, %c0_index]
# CHECK-NEXT: pto.comm.twait(%[[M0]], %c1_i32 : {{.*}}) {cmp = #pto<wait_cmp ge>}
# CHECK-NEXT: pto.comm.tnotify(%[[M0]], %cm1_i32 : {{.*}}) {notifyOp = #pto<notify_op atomic_add>}
# CHECK-NEXT: %[[M1:.*]] = pto.partition_view %[[SIG]], offsets = [%c1_index, %c0_index]
# CHECK-NEXT: pto.comm.twait(%[[M1]], %c1_i32
# CHECK-NEXT: pto.comm.tnotify(%[[M1]], %cm1_i32
# CHECK-NOT:  pto.comm
