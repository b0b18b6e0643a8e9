# RUN: python %s | filecheck %s
# RUN: python %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto > %t2.pto && python -m pypto.ptoas.pto_text %t2.pto | diff %t2.pto -
# RUN: python %s > %t.pto && ptoas %t.pto | filecheck %s --check-prefix=CPP

# pld.tile.put / get (the tensor put / get staged through an explicit Vec tile) lower as pld.tensor.put / get
# do, with the staging tile(s) in buf(...) of pto.comm.tput / tget (upstream's emission). In C++ a trap.

import pypto.language as pl
import pypto.language.distributed as pld

N = 64


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
          box: pld.DistributedTensor[[2, N], pl.FP32]) -> pl.Tensor[[2, N], pl.FP32]:
        ctx: pld.CommCtx = pld.get_comm_ctx(box)
        nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        ping = pl.tile.create([1, N], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        pong = pl.tile.create([1, N], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        pld.tile.put(box, nxt, x, ping, atomic=pld.AtomicType.Add)
        y = pld.tile.get(y, nxt, box, ping, pong, [1, 0], [0, 0], [1, N])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]],
             box: pld.DistributedTensor[[2, N], pl.FP32]) -> pl.Tensor[[2, N], pl.FP32]:
        y = self.k(x, y, box)
        return y


if __name__ == "__main__":
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    units = lower_to_pto(lower_program(P))
    print(print_pto(units["k"]))

# CHECK:      %[[PING:[a-z_0-9]+]] = pto.alloc_tile {{.*}} : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=64
# CHECK:      %[[PONG:[a-z_0-9]+]] = pto.alloc_tile {{.*}} : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=64
# CHECK:      %[[BOXP:.*]] = pto.comm.peer_view
# CHECK-NEXT: %[[DST:.*]] = pto.partition_view %[[BOXP]], {{.*}} -> !pto.partition_tensor_view<2x64xf32>
# CHECK-NEXT: %[[SRC:.*]] = pto.partition_view {{.*}} -> !pto.partition_tensor_view<2x64xf32>
# CHECK-NEXT: pto.comm.tput(%[[DST]], %[[SRC]], buf(%[[PING]] : !pto.tile_buf<{{.*}}>) : !pto.partition_tensor_view<2x64xf32>, !pto.partition_tensor_view<2x64xf32>) {atomicType = #pto<atomic_type atomic_add>}
# CHECK:      pto.comm.tget(%{{.*}}, %{{.*}}, buf(%[[PING]], %[[PONG]] : !pto.tile_buf<{{.*}}>, !pto.tile_buf<{{.*}}>) : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>)

# CPP: pto::comm_trap("TPUT");
# CPP: pto::comm_trap("TGET");
