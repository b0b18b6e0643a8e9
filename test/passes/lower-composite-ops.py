# RUN: pypto-opt %s -p lower-composite-ops | filecheck %s

# pl.tile.concat (no PTO instruction) becomes a create and two assembles.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=pl.Mem.Vec)
        e: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        c: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.concat(t, e)
        out: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out


# CHECK-NOT:  pl.tile.concat
# CHECK:      c__concat: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
# CHECK-NEXT: c__concat: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(c__concat, t, [0, 0])
# CHECK-NEXT: c: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(c__concat, e, [0, 32])
# CHECK-NEXT: pl.tile.store(c, [0, 0], out)
# CHECK-NOT:  pl.tile.concat
