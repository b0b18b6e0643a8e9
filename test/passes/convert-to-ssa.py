# RUN: pypto-opt %s -p convert-to-ssa | filecheck %s
# RUN: pypto-opt %s -p convert-to-ssa,convert-to-ssa | filecheck %s
# RUN: pypto-opt %s -p convert-to-ssa --emit=mlir | pypto-opt -p convert-to-ssa --emit=py | filecheck %s

# ConvertToSSA gives every value upstream's versioned name (04_after_ConvertToSSA
# of upstream-builds/matmul_k): parameters and assignments __ssa_vN, the loop
# index __idx_vN, a carried value's iter arg __iter_vN and loop result __rv_vN
# (both versioned before the body), if results __phi_vN. Versions count per
# base name in program order; running the pass twice, or on its own printed
# output, gives the same names.

import pypto.language as pl


@pl.program
class _jit_matmul_k:
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def matmul_k(self, a: pl.Tensor[[128, 512], pl.FP16], b: pl.Tensor[[512, 128], pl.FP16], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_blocked"):
            acc: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.matmul(pl.tensor.slice(a, [128, 128], [0, 0]), pl.tensor.slice(b, [128, 128], [0, 0]), a_trans=False, b_trans=False, c_matrix_nz=False, out_dtype=pl.FP32)
            for k in pl.range(1, 4):
                k0: pl.Scalar[pl.INDEX] = k * 128
                acc: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.matmul_acc(acc, pl.tensor.slice(a, [128, 128], [0, k0]), pl.tensor.slice(b, [128, 128], [k0, 0]), a_trans=False, b_trans=False)
            c: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(c, acc, [0, 0])
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, x: pl.Tensor[[16, 128], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 128], pl.FP32]:
        y = pl.exp(x)
        if n < 4:
            r = pl.yield_(pl.neg(y))
        else:
            r = pl.yield_(y)
        y = pl.add(r, x)
        return y


# CHECK:      def matmul_k(self, a__ssa_v0: pl.Tensor[[128, 512], pl.FP16], b__ssa_v0: pl.Tensor[[512, 128], pl.FP16], c__ssa_v0: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
# CHECK-NEXT:     with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_blocked"):
# CHECK-NEXT:         acc__ssa_v0: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.matmul(pl.tensor.slice(a__ssa_v0, [128, 128], [0, 0]), pl.tensor.slice(b__ssa_v0, [128, 128], [0, 0]), a_trans=False, b_trans=False, c_matrix_nz=False, out_dtype=pl.FP32)
# CHECK-NEXT:         for k__idx_v0, (acc__iter_v1,) in pl.range(1, 4, init_values=(acc__ssa_v0,)):
# CHECK-NEXT:             k0__ssa_v0: pl.Scalar[pl.INDEX] = k__idx_v0 * 128
# CHECK-NEXT:             acc__ssa_v3: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.matmul_acc(acc__iter_v1, pl.tensor.slice(a__ssa_v0, [128, 128], [0, k0__ssa_v0]), pl.tensor.slice(b__ssa_v0, [128, 128], [k0__ssa_v0, 0]), a_trans=False, b_trans=False)
# CHECK-NEXT:             acc__rv_v2: pl.Tensor[[128, 128], pl.FP32] = pl.yield_(acc__ssa_v3)
# CHECK-NEXT:         c__ssa_v1: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(c__ssa_v0, acc__rv_v2, [0, 0])
# CHECK-NEXT:     return c__ssa_v1

# CHECK:      def pick(x__ssa_v0: pl.Tensor[[16, 128], pl.FP32], n__ssa_v0: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 128], pl.FP32]:
# CHECK-NEXT:     y__ssa_v0: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.exp(x__ssa_v0)
# CHECK-NEXT:     if n__ssa_v0 < 4:
# CHECK-NEXT:         r__phi_v0: pl.Tensor[[16, 128], pl.FP32] = pl.yield_(pl.tensor.neg(y__ssa_v0))
# CHECK-NEXT:     else:
# CHECK-NEXT:         r__phi_v0: pl.Tensor[[16, 128], pl.FP32] = pl.yield_(y__ssa_v0)
# CHECK-NEXT:     y__ssa_v1: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.add(r__phi_v0, x__ssa_v0)
# CHECK-NEXT:     return y__ssa_v1
