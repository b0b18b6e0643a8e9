# RUN: python %s | filecheck %s
# RUN: python %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto > %t2.pto && python -m pypto.ptoas.pto_text %t2.pto | diff %t2.pto -
# RUN: python %s > %t.pto && ptoas %t.pto | filecheck %s --check-prefix=CPP
# RUN: not python %s late 2>&1 | filecheck %s --check-prefix=ERR

# pld.system.defer_wait lowers to pto.comm.twait marked `deferred` (upstream emits no PTOAS op: its adapter
# registers a CompletionToken): the kernel registers the condition and ends; the task completes when it
# holds. Only scalar work may follow it in its kernel: a load after it is named at its line.

import sys

import pypto.language as pl
import pypto.language.distributed as pld

N = 8


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, N], pl.INT32], sig: pld.DistributedTensor[[1, 1], pl.INT32]) -> pl.Tensor[[1, 1], pl.INT32]:
        e = pl.read(x, [0, 0])
        pld.system.defer_wait(sig, offsets=[0, 0], expected=e, cmp=pld.WaitCmp.Ge)
        return sig

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, N], pl.INT32], sig: pld.DistributedTensor[[1, 1], pl.INT32]) -> pl.Tensor[[1, 1], pl.INT32]:
        sig = self.k(x, sig)
        return sig


@pl.program
class Late:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, y: pl.Out[pl.Tensor[[1, N], pl.INT32]], box: pld.DistributedTensor[[1, N], pl.INT32],
          sig: pld.DistributedTensor[[1, 1], pl.INT32]) -> pl.Tensor[[1, N], pl.INT32]:
        pld.system.defer_wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        y = pl.store(pl.load(box, [0, 0], [1, N]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, y: pl.Out[pl.Tensor[[1, N], pl.INT32]], box: pld.DistributedTensor[[1, N], pl.INT32],
             sig: pld.DistributedTensor[[1, 1], pl.INT32]) -> pl.Tensor[[1, N], pl.INT32]:
        y = self.k(y, box, sig)
        return y


if __name__ == "__main__":
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    units = lower_to_pto(lower_program(Late if sys.argv[1:] == ["late"] else P))
    print(print_pto(units["k"]))

# CHECK:      %[[CELL:.*]] = pto.partition_view {{.*}} -> !pto.partition_tensor_view<1x1xi32>
# CHECK-NEXT: pto.comm.twait(%[[CELL]], %{{.*}} : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>, deferred}

# CPP: pto::comm_trap("TWAIT");

# ERR: comm-defer-wait.py:38:{{.*}}error: 'pl.tile.load' after 'pld.system.defer_wait' in the same kernel
