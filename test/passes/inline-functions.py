# RUN: pypto-opt %s -p inline-functions | filecheck %s
# RUN: pypto-opt %s -p inline-functions --emit=mlir --print-debuginfo | filecheck %s --check-prefix=MLIR

# InlineFunctions splices each call of an Inline function into its caller
# (parameters bound to the arguments, the result to the returned value, which
# takes the caller's variable name),
# Inline functions calling Inline functions included, and removes the Inline
# functions. Calls of other functions stay.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def scale(self, v: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        w = pl.muls(v, 2.0)
        return w

    @pl.function(type=pl.FunctionType.Inline)
    def act(self, u: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        h = pl.exp(self.scale(u))
        return h

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        y = pl.neg(x)
        return y

    @pl.function
    def main(self, x: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        a = self.act(x)
        b = self.act(a)
        c = self.kernel(b)
        return c


# CHECK-NOT:  def scale
# CHECK-NOT:  def act
# CHECK:      def kernel(
# CHECK:      def main(self, x: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
# CHECK-NEXT:     w: {{.*}} = pl.tensor.muls(x, 2.0)
# CHECK-NEXT:     a: {{.*}} = pl.tensor.exp(w)
# CHECK-NEXT:     w_1: {{.*}} = pl.tensor.muls(a, 2.0)
# CHECK-NEXT:     b: {{.*}} = pl.tensor.exp(w_1)
# CHECK-NEXT:     c: {{.*}} = self.kernel(b)
# CHECK-NEXT:     return c
# CHECK-NOT:  def

# MLIR-NOT:   func.func @act
# MLIR-NOT:   func.func @scale
# MLIR:       "pl.tensor.muls"{{.*}} loc("{{.*}}inline-functions.py":17:13)
# MLIR-NOT:   func.call @act
# MLIR:       func.call @kernel
