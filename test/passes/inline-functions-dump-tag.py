# RUN: pypto-opt %s -p inline-functions | filecheck %s
# RUN: pypto-opt %s -p inline-functions --emit=mlir | filecheck %s --check-prefix=MLIR

# Selective args dump through InlineFunctions: a tensor tagged before an Inline
# call (the call's pl.dump_vars) is marked on every kernel call and CORE_GROUP
# scope of the spliced body that receives it; a tag inside the Inline body rides
# on its kernel call. Untagged arguments stay unmarked.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        pl.store(pl.neg(pl.load(x, [0, 0], [16, 128])), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, v: pl.Tensor[[16, 128], pl.FP32], w: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        o = self.kernel(v, o)
        pl.dump_tag(w)
        o = self.kernel(w, o)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail"):
            o[:] = pl.add(v, w)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.FP32], y: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        pl.dump_tag(x)
        o = self.helper(x, y, o)
        return o


# CHECK-NOT:  def helper
# CHECK:      def main(self, x: {{.*}}, y: {{.*}}, o: {{.*}})
# CHECK-NEXT:   o: {{.*}} = self.kernel(x, o, attrs={"dump_vars": [x]})
# CHECK-NEXT:   o: {{.*}} = self.kernel(y, o, attrs={"dump_vars": [y]})
# CHECK-NEXT:   with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail", dumps=[y, x]):
# CHECK-NEXT:     o: {{.*}} = pl.tensor.assemble(o, pl.tensor.add(x, y), [0, 0])

# MLIR:       func.call @kernel(%[[X:x[_0-9]*]], %{{.*}}) {pl.dump_vars = [0 : i64]}
# MLIR:       func.call @kernel(%[[Y:y[_0-9]*]], %{{.*}}) {pl.dump_vars = [0 : i64]}
# MLIR:       "pl.at"(%[[Y]], %[[X]]) <{level = #pl<level CORE_GROUP>, name_hint = "tail"}>
