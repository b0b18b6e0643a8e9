# RUN: pypto-opt %s -p auto-tile-matmul-l0 | filecheck %s

# The [256, 256] fp32 accumulator (256 KiB) exceeds L0C (128 KiB) and its only use is the Acc -> Mat
# write-back into a BF16 scratch (a folded pl.cast(c, pl.BF16, mode="rint")): M is blocked by 128
# and each block is assembled into its window of the scratch, the scratch carried through the loop.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 64], pl.BF16], b: pl.Tensor[[64, 256], pl.BF16], e: pl.Tensor[[256, 64], pl.BF16], out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        ta: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [256, 64], [256, 64], target_memory=pl.Mem.Mat)
        tb: pl.Tile[[64, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 256], [64, 256], target_memory=pl.Mem.Mat)
        te: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(e, [0, 0], [256, 64], [256, 64], target_memory=pl.Mem.Mat)
        c: pl.Tile[[256, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta, tb)
        s: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.tile.create([256, 256], dtype=pl.BF16, target_memory=pl.Mem.Mat)
        cb: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.tile.assemble(s, c, [0, 0])
        d: pl.Tile[[256, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(cb, te)
        out: pl.Tensor[[256, 64], pl.FP32] = pl.tile.store(d, [0, 0], out)
        return out


# CHECK-LABEL: def k(
# CHECK:         for mo, ([[S:s_[0-9]+]],) in pl.range(2, init_values=(s,)):
# CHECK-NEXT:        [[ROW:v[0-9]+]]: pl.Scalar[pl.INDEX] = mo * 128
# CHECK-NEXT:        ta_Left: pl.Tile[[128, 64], pl.BF16, pl.Mem.Left] = pl.tile.extract(ta, {{\[}}[[ROW]], 0], [128, 64], target_memory=pl.Mem.Left)
# CHECK-NEXT:        tb_Right: pl.Tile[[64, 256], pl.BF16, pl.Mem.Right] = pl.tile.extract(tb, [0, 0], [64, 256], target_memory=pl.Mem.Right)
# CHECK-NEXT:        c: pl.Tile[[128, 256], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_Left, tb_Right)
# CHECK-NEXT:        cb: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.tile.assemble([[S]], c, {{\[}}[[ROW]], 0])
# CHECK-NEXT:        [[CB:cb_[0-9]+]]: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.yield_(cb)
# CHECK-NEXT:    cb_Left: {{.*}} = pl.tile.extract([[CB]], [0, 0], [256, 128], target_memory=pl.Mem.Left)
# CHECK-NOT:     pl.tile.matmul(ta, tb)
