# RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

# A tensor matmul whose dtype is not the cube accumulator's (out_dtype=pl.FP16, or FP16 operands with no
# out_dtype: upstream's promotion) is the matmul into FP32 then a cast rounding half to even (the FIXPIPE's
# write-back). Read by a vector op or a store, the cast runs on the vector core after the Acc -> Vec move;
# read only by a matmul, it folds into the FIXPIPE write into a Mat scratch. It stopped with "out_dtype pl.FP16
# differs from the accumulator dtype pl.FP32 the cube unit produces".

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def stored(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 48], pl.FP16],
               c: pl.Out[pl.Tensor[[32, 48], pl.FP16]]) -> pl.Tensor[[32, 48], pl.FP16]:
        c = pl.assemble(c, pl.matmul(a, b, out_dtype=pl.FP16), [0, 0])
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def chained(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
                e: pl.Tensor[[32, 48], pl.FP16], c: pl.Out[pl.Tensor[[32, 48], pl.FP32]]) -> pl.Tensor[[32, 48], pl.FP32]:
        ab = pl.matmul(a, b)
        c = pl.assemble(c, pl.matmul(ab, e, out_dtype=pl.FP32), [0, 0])
        return c


# CHECK-LABEL: def chained(
# CHECK:         [[ACC:ab_acc[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(
# CHECK:         [[MAT:ab_mat[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 32], pl.FP16, pl.Mem.Mat] = pl.tile.create([32, 32], dtype=pl.FP16, target_memory=pl.Mem.Mat)
# CHECK:         [[AB:ab[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 32], pl.FP16, pl.Mem.Mat] = pl.tile.assemble([[MAT]], [[ACC]], [0, 0])
# CHECK:         pl.tile.matmul([[AB]], e_mat)
# CHECK-NOT:     pl.tile.cast

# CHECK-LABEL: def stored(
# CHECK:         [[ACC2:t_acc[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 48], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_mat, b_mat)
# CHECK:         [[VEC:t_acc[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 48], pl.FP32, pl.Mem.Vec] = pl.tile.move([[ACC2]], target_memory=pl.Mem.Vec)
# CHECK:         [[H:t[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 48], pl.FP16, pl.Mem.Vec] = pl.tile.cast([[VEC]], pl.FP16, mode="rint")
# CHECK:         pl.tile.store([[H]], [0, 0], c)
# CHECK-NOT:     pl.tensor.
