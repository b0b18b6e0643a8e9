# RUN: python %s | filecheck %s
# RUN: python %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto > %t2.pto && python -m pypto.ptoas.pto_text %t2.pto | diff %t2.pto -
# RUN: python %s > %t.pto && ptoas %t.pto | filecheck %s --check-prefix=CPP

# The kernel-body pld ops lower to PTOAS's cross-rank ops (pto.comm.*), as upstream PyPTO emits them:
# a peer's address is one pto.comm.peer_view (upstream: CommContext addptr arithmetic), put/get are
# pto.comm.tput/tget between partition views, notify/wait one-cell pto.comm.tnotify/twait, a remote
# tile load/store a tload/tstore on the peer's view. In C++ each is a documented trap.

import pypto.language as pl
import pypto.language.distributed as pld

N = 64


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
          box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 2], pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        ctx = pld.get_comm_ctx(box)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        t = pl.load(x, [0, 0], [1, N])
        pld.tensor.put(box, peer=nxt, src=x, atomic=pld.AtomicType.Add)
        pld.system.notify(sig, peer=nxt, offsets=[0, 1], value=2, op=pld.NotifyOp.Set)
        pld.system.wait(sig, offsets=[0, 1], expected=2, cmp=pld.WaitCmp.Eq)
        pld.tensor.get(y, peer=nxt, src=box)
        got = pld.tile.remote_load(box, peer=nxt, offsets=[0, 0], shape=[1, N])
        pld.tile.remote_store(pl.add(got, t), box, peer=nxt, offsets=[0, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
             box: pld.DistributedTensor[[1, N], pl.FP32], sig: pld.DistributedTensor[[1, 2], pl.INT32]) -> pl.Tensor[[1, N], pl.FP32]:
        y = self.k(x, y, box, sig)
        return y


if __name__ == "__main__":
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    units = lower_to_pto(lower_program(P))
    print(print_pto(units["k"]))

# CHECK:      %[[R:.*]] = pto.comm.get_rank : i64
# CHECK:      %[[N:.*]] = pto.comm.get_nranks : i64
# CHECK:      %[[BOXP:.*]] = pto.comm.peer_view %[[BOX:.*]], %[[PEER:.*]] : !pto.tensor_view<?x?xf32> -> !pto.tensor_view<?x?xf32>
# CHECK-NEXT: %[[DST:.*]] = pto.partition_view %[[BOXP]], {{.*}} -> !pto.partition_tensor_view<1x64xf32>
# CHECK-NEXT: %[[SRC:.*]] = pto.partition_view {{.*}} -> !pto.partition_tensor_view<1x64xf32>
# CHECK-NEXT: pto.comm.tput(%[[DST]], %[[SRC]] : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>) {atomicType = #pto<atomic_type atomic_add>}
# CHECK:      %[[SIGP:.*]] = pto.comm.peer_view %[[SIG:.*]], %[[PEER]] : !pto.tensor_view<?x?xi32>
# CHECK-NEXT: %[[CELL:.*]] = pto.partition_view %[[SIGP]], offsets = [%c0_index, %c1_index], sizes = [%c1_index, %c1_index] {{.*}} -> !pto.partition_tensor_view<1x1xi32>
# CHECK-NEXT: pto.comm.tnotify(%[[CELL]], %c2_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op set>}
# CHECK-NEXT: %[[MINE:.*]] = pto.partition_view %[[SIG]], offsets = [%c0_index, %c1_index]
# CHECK-NEXT: pto.comm.twait(%[[MINE]], %c2_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp eq>}
# CHECK:      pto.comm.peer_view %[[BOX]], %[[PEER]]
# CHECK:      pto.comm.tget(
# CHECK:      %[[RL:.*]] = pto.comm.peer_view %[[BOX]], %[[PEER]]
# CHECK-NEXT: %[[RLV:.*]] = pto.partition_view %[[RL]]
# CHECK:      pto.tload ins(%[[RLV]] : !pto.partition_tensor_view<1x64xf32>)
# CHECK:      %[[RS:.*]] = pto.comm.peer_view %[[BOX]], %[[PEER]]
# CHECK-NEXT: %[[RSV:.*]] = pto.partition_view %[[RS]]
# CHECK-NEXT: pto.tstore ins({{.*}}) outs(%[[RSV]] : !pto.partition_tensor_view<1x64xf32>)

# CPP: pto::comm_trap_i64("pto.comm.get_rank");
# CPP: pto::comm_trap("TPUT");
# CPP: pto::comm_trap("TNOTIFY");
# CPP: pto::comm_trap("TWAIT");
# CPP: pto::comm_trap("TGET");
