# RUN: python %s | filecheck %s
# RUN: python %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto > %t2.pto && python -m pypto.ptoas.pto_text %t2.pto | diff %t2.pto -

# pl.write(tensor, [i, j], v) in a kernel is one GM element store of the scalar unit, as upstream's
# tensor.write codegen: pto.store_scalar %v, %ptr[i * cols + j]; pl.read is the pto.load_scalar dual.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[4, 2], pl.INT32], y: pl.Out[pl.Tensor[[4, 2], pl.INT32]]) -> pl.Tensor[[4, 2], pl.INT32]:
        for i in pl.range(4):
            v = pl.read(src, [i, 1])
            pl.write(y, [i, 0], v + 1)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[4, 2], pl.INT32], y: pl.Out[pl.Tensor[[4, 2], pl.INT32]]) -> pl.Tensor[[4, 2], pl.INT32]:
        y = self.k(src, y)
        return y


if __name__ == "__main__":
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    units = lower_to_pto(lower_program(P))
    print(print_pto(units["k"]))

# CHECK:      scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
# CHECK:        %[[RO:.*]] = arith.muli %[[I]], %c2_index
# CHECK-NEXT:   %[[RL:.*]] = arith.addi %[[RO]], %c1_index
# CHECK-NEXT:   %[[V:.*]] = pto.load_scalar %[[SRC:.*]][%[[RL]]] : !pto.ptr<i32> -> i32
# CHECK-NEXT:   %[[V1:.*]] = arith.addi %[[V]], %{{.*}} : i32
# CHECK-NEXT:   %[[WO:.*]] = arith.muli %[[I]], %c2_index
# CHECK-NEXT:   %[[WL:.*]] = arith.addi %[[WO]], %c0_index
# CHECK-NEXT:   pto.store_scalar %[[V1]], %[[Y:.*]][%[[WL]]] : !pto.ptr<i32>, i32
# CHECK-NOT:  pto.store_scalar
