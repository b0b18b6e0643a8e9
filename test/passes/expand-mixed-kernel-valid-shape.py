# RUN: pypto-opt %s -p expand-mixed-kernel | filecheck %s
# RUN: pypto-opt %s -p expand-mixed-kernel --emit=mlir | pypto-opt --emit=py | filecheck %s

# A tile whose valid shape is known only at run time crosses cores: the pop on the
# other side declares it (valid_shape=, from the scalars both sides compute), so it
# takes exactly the region the pushing side pushed. The cube -> vector pop takes the
# matmul's valid shape (lhs's rows n by rhs's columns); the vector -> cube pop the
# load's (n - 1 rows); a tile valid everywhere (after fillpad) pops without one.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def c2v(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
        a_mat: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], [n, 32], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 32], [32, 32], target_memory=pl.Mem.Mat)
        a_left: pl.Tile[[16, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(a_mat, target_memory=pl.Mem.Left)
        b_right: pl.Tile[[32, 32], pl.FP32, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
        acc: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_left, b_right)
        v: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, target_memory=pl.Mem.Vec)
        e: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(v)
        out: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(e, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def v2c(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
        rows: pl.Scalar[pl.INDEX] = n - 1
        t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 32], [rows, 32], target_memory=pl.Mem.Vec)
        t_mat: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.move(t, target_memory=pl.Mem.Mat)
        f: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad(t)
        f_mat: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.move(f, target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 32], [32, 32], target_memory=pl.Mem.Mat)
        t_left: pl.Tile[[16, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(t_mat, target_memory=pl.Mem.Left)
        f_left: pl.Tile[[16, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(f_mat, target_memory=pl.Mem.Left)
        b_right: pl.Tile[[32, 32], pl.FP32, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
        acc: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(t_left, b_right)
        acc2: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, f_left, b_right)
        out: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(acc2, [0, 0], out)
        return out


# CHECK:      def c2v_aic(
# CHECK:          pl.tile.tpush_to_aiv(acc, split=0)
# CHECK:      def c2v_aiv(
# CHECK-NEXT:     v: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(shape=[16, 32], dtype=pl.FP32, split=0, valid_shape=[n, 32])
# CHECK-NEXT:     e: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(v)
# CHECK:      def v2c_aic(
# CHECK-NEXT:     rows: pl.Scalar[pl.INDEX] = n - 1
# CHECK-NEXT:     t_mat: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.tpop_from_aiv(shape=[16, 32], dtype=pl.FP32, split=0, valid_shape=[rows, 32])
# CHECK-NEXT:     f_mat: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.tpop_from_aiv(shape=[16, 32], dtype=pl.FP32, split=0)
# CHECK:      def v2c_aiv(
# CHECK-NEXT:     rows: pl.Scalar[pl.INDEX] = n - 1
# CHECK-NEXT:     t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 32], [rows, 32], target_memory=pl.Mem.Vec)
# CHECK-NEXT:     pl.tile.tpush_to_aic(t, split=0)
# CHECK-NEXT:     f: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad(t)
# CHECK-NEXT:     pl.tile.tpush_to_aic(f, split=0)
