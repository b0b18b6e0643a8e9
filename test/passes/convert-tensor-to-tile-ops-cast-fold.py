# RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

# A matmul result cast to BF16 with mode="rint" and read only by a second matmul: the cast is folded
# into the cube's FIXPIPE write-back (an Acc -> Mat pl.tile.assemble into a BF16 Mat scratch), as
# upstream does; no vector cast, no Acc -> Vec move. With the default mode "round" (ties away) or
# a vector reader the cast stays a vector op.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def fold(self, a: pl.Tensor[[64, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16], e: pl.Tensor[[64, 32], pl.BF16], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def vector_reader(self, a: pl.Tensor[[64, 64], pl.BF16], b: pl.Tensor[[64, 64], pl.BF16], out: pl.Out[pl.Tensor[[64, 64], pl.BF16]]) -> pl.Tensor[[64, 64], pl.BF16]:
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        out = pl.assemble(out, cb, [0, 0])
        return out


# CHECK-LABEL: def fold(
# CHECK:         c__tile: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_mat, b_mat)
# CHECK-NEXT:    cb_mat: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.tile.create([64, 64], dtype=pl.BF16, target_memory=pl.Mem.Mat)
# CHECK-NEXT:    cb__tile: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.tile.assemble(cb_mat, c__tile, [0, 0])
# CHECK-NEXT:    d__tile: pl.Tile[[64, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(cb__tile, e_mat)
# CHECK-NOT:     pl.tile.cast
# CHECK-LABEL: def vector_reader(
# CHECK:         c__tile_vec: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.move(c__tile, target_memory=pl.Mem.Vec)
# CHECK-NEXT:    cb__tile: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec] = pl.tile.cast(c__tile_vec, pl.BF16, mode="rint")
