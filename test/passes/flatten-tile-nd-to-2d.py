# RUN: pypto-opt %s -p flatten-tile-nd-to-2d | filecheck %s

# 1-D and 3-D tiles become 2-D ([64] -> [1, 64], [2, 16, 128] -> [32, 128]):
# the N-D load is followed by a reshape every user reads, elementwise ops and
# pl.tile.full are retyped / rebuilt, and the store reads a reshape back to N-D.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64], pl.FP32], b: pl.Tensor[[2, 16, 128], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]], o2: pl.Out[pl.Tensor[[2, 16, 128], pl.FP32]]) -> tuple[pl.Tensor[[64], pl.FP32], pl.Tensor[[2, 16, 128], pl.FP32]]:
        t: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0], [64], [64], target_memory=pl.Mem.Vec)
        e: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        out: pl.Tensor[[64], pl.FP32] = pl.tile.store(e, [0], out)
        u: pl.Tile[[2, 16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0, 0], [2, 16, 128], [2, 16, 128], target_memory=pl.Mem.Vec)
        z: pl.Tile[[2, 16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.full([2, 16, 128], dtype=pl.FP32, value=2.0)
        w: pl.Tile[[2, 16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.mul(u, z)
        o2: pl.Tensor[[2, 16, 128], pl.FP32] = pl.tile.store(w, [0, 0, 0], o2)
        return out, o2


# CHECK:      t_nd: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0], [64], [64], target_memory=pl.Mem.Vec)
# CHECK-NEXT: t: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(t_nd, [1, 64])
# CHECK-NEXT: e: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
# CHECK-NEXT: e_nd: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(e, [64])
# CHECK-NEXT: pl.tile.store(e_nd, [0], out)
# CHECK-NEXT: u_nd: pl.Tile[[2, 16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(b,
# CHECK-NEXT: u: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(u_nd, [32, 128])
# CHECK-NEXT: z: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.full([32, 128], dtype=pl.FP32, value=2.0)
# CHECK-NEXT: w: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.mul(u, z)
# CHECK-NEXT: w_nd: pl.Tile[[2, 16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(w, [2, 16, 128])
# CHECK-NEXT: pl.tile.store(w_nd, [0, 0, 0], o2)
