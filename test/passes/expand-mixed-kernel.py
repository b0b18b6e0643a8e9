# RUN: pypto-opt %s -p expand-mixed-kernel | filecheck %s
# RUN: pypto-opt %s -p expand-mixed-kernel --emit=mlir | pypto-opt --emit=py | filecheck %s

# A kernel mixing cube (matmul) and vector (exp) work is split into
# <f>_aic (cube ops; the Acc -> Vec move becomes tpush_to_aiv; no returns),
# <f>_aiv (tpop_from_aic, vector ops, the returns) and the Group function <f>
# calling both; a pure vector kernel is retyped AIV. No InCore remains.

# ruff: noqa: B007  (a DSL program: the loop index is unused on purpose)

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def mixed(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        for i in pl.range(2):
            x_mat: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Mat)
            y_mat: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(y, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
            x_left: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(x_mat, target_memory=pl.Mem.Left)
            y_right: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.tile.move(y_mat, target_memory=pl.Mem.Right)
            z_tile: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_left, y_right)
            z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(z_tile, target_memory=pl.Mem.Vec)
            e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(z_vec)
            out: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(e, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def vec(self, x: pl.Tensor[[16, 128], pl.FP32], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
        out: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        r: pl.Tensor[[16, 128], pl.FP32] = self.mixed(x, y, out)
        return r


# CHECK-NOT:  pl.FunctionType.InCore
# CHECK:      @pl.function(type=pl.FunctionType.AIC, level=pl.Level.AIC, role=pl.Role.SubWorker)
# CHECK-NEXT: def mixed_aic(x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
# CHECK-NEXT:     for i in pl.range(2):
# CHECK:              z_tile: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_left, y_right)
# CHECK-NEXT:         pl.tile.tpush_to_aiv(z_tile, split=0)
# CHECK-NOT:      pl.tile.exp
# CHECK:      @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
# CHECK-NEXT: def mixed_aiv(x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
# CHECK-NEXT:     for i in pl.range(2):
# CHECK-NEXT:         z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(shape=[16, 128], dtype=pl.FP32, split=0)
# CHECK-NEXT:         e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(z_vec)
# CHECK-NEXT:         pl.tile.store(e, [0, 0], out)
# CHECK:      @pl.function(type=pl.FunctionType.Group, level=pl.Level.CORE_GROUP, role=pl.Role.SubWorker)
# CHECK-NEXT: def mixed(x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
# CHECK-NEXT:     self.mixed_aic(x, y, out)
# CHECK-NEXT:     result: pl.Tensor[[16, 128], pl.FP32] = self.mixed_aiv(x, y, out)
# CHECK-NEXT:     return result
# CHECK:      @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
# CHECK-NEXT: def vec(
