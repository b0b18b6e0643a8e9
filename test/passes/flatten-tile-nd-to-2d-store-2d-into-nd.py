# RUN: pypto-opt %s -p flatten-tile-nd-to-2d | filecheck %s

# A tile that is 2-D as written, stored into a 3-D tensor (upstream's
# pl.store(row, [0, j, 0], out)), stays 2-D: no reshape is inserted and the
# store keeps its 3-D offsets (the window is [1, rows, cols]).

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 4, 64], pl.FP32]]) -> pl.Tensor[[1, 4, 64], pl.FP32]:
        for j in pl.range(4):
            row: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [j, 0], [1, 64], [1, 64], target_memory=pl.Mem.Vec)
            out: pl.Tensor[[1, 4, 64], pl.FP32] = pl.tile.store(row, [0, j, 0], out)
        return out


# CHECK:      row: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [j, 0], [1, 64], [1, 64], target_memory=pl.Mem.Vec)
# CHECK-NEXT: out: pl.Tensor[[1, 4, 64], pl.FP32] = pl.tile.store(row, [0, j, 0], out)
# CHECK-NOT:  pl.tile.reshape
