# RUN: pypto-opt %s -p infer-tile-memory-space | filecheck %s
# RUN: pypto-opt %s -p infer-tile-memory-space --emit=mlir | pypto-opt --emit=py | filecheck %s

# The matmul_k kernel after ConvertTensorToTileOps (upstream 11 dump): matmul
# operands loaded into Mat get a pl.tile.move to Left / Right named
# <src>_Left / <src>_Right right before the matmul, as upstream's
# 18_after_InferTileMemorySpace shows.

# ruff: noqa: F841  (a DSL program: stores are kept for their effect, as in upstream dumps)

import pypto.language as pl


@pl.program
class _jit_matmul_k:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def k_blocked(self, a__ssa_v0: pl.Tensor[[128, 512], pl.FP16], b__ssa_v0: pl.Tensor[[512, 128], pl.FP16], c__ssa_v0: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        t__tile: pl.Tile[[128, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(a__ssa_v0, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
        t__tile_1: pl.Tile[[128, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(b__ssa_v0, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
        acc__tile: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(t__tile, t__tile_1)
        for k__idx_v0, (acc__iter_v1,) in pl.range(1, 4, init_values=(acc__tile,)):
            k0__ssa_v0: pl.Scalar[pl.INDEX] = k__idx_v0 * 128
            t__tile_2: pl.Tile[[128, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(a__ssa_v0, [0, k0__ssa_v0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
            t__tile_3: pl.Tile[[128, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(b__ssa_v0, [k0__ssa_v0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
            acc__tile_1: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc__iter_v1, t__tile_2, t__tile_3)
            acc__rv_v2: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(acc__tile_1)
        c__tile: pl.Tensor[[128, 128], pl.FP32] = pl.tile.store(acc__rv_v2, [0, 0], c__ssa_v0)
        return c__ssa_v0


# CHECK:      t__tile_1: pl.Tile[[128, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(b__ssa_v0,
# CHECK-NEXT: t__tile_Left: pl.Tile[[128, 128], pl.FP16, pl.Mem.Left] = pl.tile.move(t__tile, target_memory=pl.Mem.Left)
# CHECK-NEXT: t__tile_Right: pl.Tile[[128, 128], pl.FP16, pl.Mem.Right] = pl.tile.move(t__tile_1, target_memory=pl.Mem.Right)
# CHECK-NEXT: acc__tile: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(t__tile_Left, t__tile_Right)
# CHECK:      t__tile_3: pl.Tile[[128, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(b__ssa_v0,
# CHECK-NEXT: t__tile_Left_1: pl.Tile[[128, 128], pl.FP16, pl.Mem.Left] = pl.tile.move(t__tile_2, target_memory=pl.Mem.Left)
# CHECK-NEXT: t__tile_Right_1: pl.Tile[[128, 128], pl.FP16, pl.Mem.Right] = pl.tile.move(t__tile_3, target_memory=pl.Mem.Right)
# CHECK-NEXT: pl.tile.matmul_acc(acc__iter_v1, t__tile_Left_1, t__tile_Right_1)
