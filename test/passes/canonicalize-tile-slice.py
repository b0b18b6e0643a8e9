# RUN: pypto-opt %s -p canonicalize-tile-slice | filecheck %s

# A Mat slice feeding a matmul becomes a Mat -> Left extract at the operand
# (the slice disappears); a Vec slice that is a non-contiguous column window
# (t[:, 4:12], also 16 B off a 32-byte boundary) is materialised as a Vec
# extract; an aligned
# full-width row slice stays a zero-copy view.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 128], pl.FP32], m: pl.Tensor[[64, 128], pl.FP16], n: pl.Tensor[[128, 64], pl.FP16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 64], pl.FP32]], o3: pl.Out[pl.Tensor[[64, 8], pl.FP32]]) -> tuple[pl.Tensor[[16, 128], pl.FP32], pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[64, 8], pl.FP32]]:
        t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        s: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 128], [16, 0])
        v: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(s)
        out: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(v, [0, 0], out)
        col: pl.Tile[[64, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [64, 8], [0, 4])
        o3: pl.Tensor[[64, 8], pl.FP32] = pl.tile.store(col, [0, 0], o3)
        mm: pl.Tile[[64, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(m, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        nn: pl.Tile[[128, 64], pl.FP16, pl.Mem.Mat] = pl.tile.load(n, [0, 0], [128, 64], [128, 64], target_memory=pl.Mem.Mat)
        ms: pl.Tile[[16, 128], pl.FP16, pl.Mem.Mat] = pl.tile.slice(mm, [16, 128], [16, 0])
        c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ms, nn)
        o2: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(c, [0, 0], o2)
        return out, o2, o3


# CHECK:      s: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 128], [16, 0])
# CHECK:      col: pl.Tile[[64, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, [0, 4], [64, 8], target_memory=pl.Mem.Vec)
# CHECK-NOT:  pl.tile.slice(mm
# CHECK:      ms: pl.Tile[[16, 128], pl.FP16, pl.Mem.Left] = pl.tile.extract(mm, [16, 0], [16, 128], target_memory=pl.Mem.Left)
# CHECK-NEXT: c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ms, nn)
