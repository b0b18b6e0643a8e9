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

# A tile's element: pl.read / pl.write of a tile are pto.tgetval / pto.tsetval at the flat offset in the
# tile's shape (upstream's tile.write codegen), the written tile is the same buffer.


@pl.program
class T:
    @pl.function(type=pl.FunctionType.InCore)
    def kt(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        v = pl.read(t, [2, 3])
        t = pl.write(t, [7, 15], v)
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = self.kt(x, y)
        return y


if __name__ == "__main__":
    print(print_pto(lower_to_pto(lower_program(T))["kt"]))

# CHECK:      %[[T:.*]] = pto.alloc_tile
# CHECK:      pto.tload
# CHECK-NEXT: %[[GO:.*]] = arith.muli %c2_index, %c16_index
# CHECK-NEXT: %[[GL:.*]] = arith.addi %[[GO]], %c3_index
# CHECK-NEXT: %[[V:.*]] = pto.tgetval ins(%[[T]], %[[GL]] : !pto.tile_buf<{{.*}}>, index) outs : f32
# CHECK-NEXT: %[[SO:.*]] = arith.muli %c7_index, %c16_index
# CHECK-NEXT: %[[SL:.*]] = arith.addi %[[SO]], %c15_index
# CHECK-NEXT: pto.tsetval ins(%[[SL]], %[[V]] : index, f32) outs(%[[T]] : !pto.tile_buf<{{.*}}>)
# CHECK-NEXT: pto.partition_view
# CHECK-NEXT: pto.tstore ins(%[[T]]
