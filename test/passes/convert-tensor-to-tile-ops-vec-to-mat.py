# RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

# A vector result read by a matmul (a prescaled operand, attention's softmax before p @ v) is moved once to
# Mat, right after it is made, as upstream does (ExpandMixedKernel makes the move a vector -> cube pipe). It
# was "operand 't' is a tile in pl.Mem.Vec, expected pl.Mem.Mat".

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def prescaled(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 48], pl.FP16],
                  c: pl.Out[pl.Tensor[[32, 48], pl.FP32]]) -> pl.Tensor[[32, 48], pl.FP32]:
        scaled = pl.mul(a, 2.0)
        c = pl.assemble(c, pl.matmul(scaled, b, out_dtype=pl.FP32), [0, 0])
        return c


# CHECK-LABEL: def prescaled(
# CHECK:         [[S:scaled[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 64], pl.FP16, pl.Mem.Vec] = pl.tile.muls(
# CHECK-NEXT:    [[M:scaled[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 64], pl.FP16, pl.Mem.Mat] = pl.tile.move([[S]], target_memory=pl.Mem.Mat)
# CHECK:         pl.tile.matmul([[M]], b_mat)
