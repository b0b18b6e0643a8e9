# RUN: pypto-opt %s -p auto-tile-matmul-l0 2>%t.err | filecheck %s
# RUN: filecheck %s --check-prefix=HINT < %t.err

# k: [128, 512] x [512, 128] fp16 operands are 128 KiB each (L0A / L0B hold
# 64 KiB): K is split in two 256-wide chunks of Mat -> Left/Right extracts, a
# matmul then a matmul_acc loop. k2: the [256, 256] fp32 accumulator (256 KiB)
# exceeds L0C (128 KiB): M is blocked by 128 and each block is stored straight
# to DDR. k3: K = 1000 cannot be split into multiples of 16: PH002.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 512], pl.FP16], b: pl.Tensor[[512, 128], pl.FP16], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        ta: pl.Tile[[128, 512], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [128, 512], [128, 512], target_memory=pl.Mem.Mat)
        tb: pl.Tile[[512, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [512, 128], [512, 128], target_memory=pl.Mem.Mat)
        c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta, tb)
        out: pl.Tensor[[128, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, a: pl.Tensor[[256, 256], pl.FP16], b: pl.Tensor[[256, 256], pl.FP16], out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
        ta: pl.Tile[[256, 256], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [256, 256], [256, 256], target_memory=pl.Mem.Mat)
        tb: pl.Tile[[256, 256], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [256, 256], [256, 256], target_memory=pl.Mem.Mat)
        c: pl.Tile[[256, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta, tb)
        out: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def k3(self, a: pl.Tensor[[100, 1000], pl.FP32], b: pl.Tensor[[1000, 16], pl.FP32], out: pl.Out[pl.Tensor[[100, 16], pl.FP32]]) -> pl.Tensor[[100, 16], pl.FP32]:
        ta: pl.Tile[[100, 1000], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [100, 1000], [100, 1000], target_memory=pl.Mem.Mat)
        tb: pl.Tile[[1000, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [1000, 16], [1000, 16], target_memory=pl.Mem.Mat)
        c: pl.Tile[[100, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta, tb)
        out: pl.Tensor[[100, 16], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out


# CHECK-LABEL: def k(
# CHECK:         ta_Left: pl.Tile[[128, 256], pl.FP16, pl.Mem.Left] = pl.tile.extract(ta, [0, 0], [128, 256], target_memory=pl.Mem.Left)
# CHECK-NEXT:    tb_Right: pl.Tile[[256, 128], pl.FP16, pl.Mem.Right] = pl.tile.extract(tb, [0, 0], [256, 128], target_memory=pl.Mem.Right)
# CHECK-NEXT:    c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_Left, tb_Right)
# CHECK-NEXT:    for ko, (c_iter,) in pl.range(1, 2, init_values=(c,)):
# CHECK-NEXT:        [[OFF:v[0-9]+]]: pl.Scalar[pl.INDEX] = ko * 256
# CHECK-NEXT:        ta_Left_1: pl.Tile[[128, 256], pl.FP16, pl.Mem.Left] = pl.tile.extract(ta, [0, [[OFF]]], [128, 256], target_memory=pl.Mem.Left)
# CHECK-NEXT:        tb_Right_1: pl.Tile[[256, 128], pl.FP16, pl.Mem.Right] = pl.tile.extract(tb, {{\[}}[[OFF]], 0], [256, 128], target_memory=pl.Mem.Right)
# CHECK-NEXT:        c_1: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_iter, ta_Left_1, tb_Right_1)
# CHECK-NEXT:        c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(c_1)
# CHECK-NEXT:    out: pl.Tensor[[128, 128], pl.FP32] = pl.tile.store(c, [0, 0], out)
# CHECK-LABEL: def k2(
# CHECK:         for mo in pl.range(2):
# CHECK-NEXT:        [[ROW:v[0-9]+]]: pl.Scalar[pl.INDEX] = mo * 128
# CHECK-NEXT:        ta_Left: pl.Tile[[128, 128], pl.FP16, pl.Mem.Left] = pl.tile.extract(ta, {{\[}}[[ROW]], 0], [128, 128], target_memory=pl.Mem.Left)
# CHECK:             pl.tile.matmul_acc(
# CHECK:             out: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store(c, {{\[}}[[ROW]], 0], out)
# CHECK-NOT:     pl.tile.matmul(ta, tb)
# CHECK-LABEL: def k3(
# CHECK:         pl.tile.matmul(ta, tb)

# HINT: auto-tile-matmul-l0.py:35:54: remark: pl.tile.matmul [100, 1000] x [1000, 16] (pl.FP32) exceeds the L0 buffers (L0A 65536 B, L0B 65536 B, L0C 131072 B) and could not be tiled: K = 1000 cannot be split into chunks that are multiples of 16 {{.*}} [AutoTileMatmulL0]
