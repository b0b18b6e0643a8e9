# RUN: pypto-opt %s -p normalize-stmt-structure | filecheck %s
# RUN: pypto-opt %s -p normalize-stmt-structure --emit=mlir | filecheck %s --check-prefix=MLIR
# RUN: pypto-opt %s --emit=mlir > %t.before
# RUN: pypto-opt %s -p normalize-stmt-structure --emit=mlir > %t.after
# RUN: diff %t.before %t.after

# NormalizeStmtStructure is an identity here (documented in the pass module):
# xDSL bodies are flat op lists in one block, there is no statement tree to
# normalise. The upstream 06 dumps equal their 05 inputs. This test pins the
# identity: the IR after the pass is the IR before it (diff of the MLIR).

import pypto.language as pl


@pl.program
class C:
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, x: pl.Tensor[[16, 128], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 128], pl.FP32]:
        for i in pl.range(4):
            if n < i:
                x = pl.exp(x)
        return x


# CHECK:      def f(x: pl.Tensor[[16, 128], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 128], pl.FP32]:
# CHECK-NEXT:     for i, (x_1,) in pl.range(4, init_values=(x,)):
# CHECK-NEXT:         if n < i:
# CHECK-NEXT:             x_2: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.exp(x_1)
# CHECK-NEXT:             x_3: pl.Tensor[[16, 128], pl.FP32] = pl.yield_(x_2)
# CHECK-NEXT:         else:
# CHECK-NEXT:             x_3: pl.Tensor[[16, 128], pl.FP32] = pl.yield_(x_1)
# CHECK-NEXT:         x: pl.Tensor[[16, 128], pl.FP32] = pl.yield_(x_3)
# CHECK-NEXT:     return x

# MLIR: scf.for
# MLIR: scf.if
