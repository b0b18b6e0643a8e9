# RUN: pypto-opt %s -p init-memref --emit mlir | filecheck %s

# pl.tile.transpose_view (upstream's zero-copy NZ <-> ZN view): the trailing two
# dims swap, each layout flips its major-ness (Mat's implicit col_major/row_major
# becomes row_major/col_major), and InitMemRef gives the view its source's buffer.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def qk(self, q: pl.Tensor[[16, 128], pl.BF16], k: pl.Tensor[[64, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        tq: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(q, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Mat)
        tk: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(k, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        kt: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.transpose_view(tk)
        a: pl.Tile[[16, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(tq, target_memory=pl.Mem.Left)
        b: pl.Tile[[128, 64], pl.BF16, pl.Mem.Right] = pl.tile.move(kt, target_memory=pl.Mem.Right)
        c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a, b)
        out: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out


# CHECK-LABEL: func.func @qk(
# CHECK:         %[[K:[a-z_0-9]+]] = "pl.tile.load"({{.*}} -> !pl.tile<64x128xbf16, Mat, memref<"[[BUF:[a-z_0-9]+]]", 0, 16384>>
# CHECK-NEXT:    %{{.*}} = "pl.tile.transpose_view"(%[[K]]) : (!pl.tile<64x128xbf16, Mat, memref<"[[BUF]]", 0, 16384>>) -> !pl.tile<128x64xbf16, Mat, memref<"[[BUF]]", 0, 16384>, view<row_major, col_major, 512>>
