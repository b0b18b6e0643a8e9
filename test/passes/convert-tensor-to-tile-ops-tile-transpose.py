# RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

# A transpose of a tile as written (pl.transpose of a loaded tile, a pl.tile.transpose with no scratch)
# gets its pto.ttrans scratch tile here, as a tensor transpose converted to a tile one does: the scratch
# is a codegen detail the user never supplies (upstream's tile.transpose). Without it the ptoas codegen
# stopped with "pl.tile.transpose needs its scratch tile (tmp_tile)".

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def tr(self, a: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        pl.store(pl.transpose(t, 0, 1), [0, 0], out)
        return out


# CHECK-LABEL: def tr(
# CHECK:         [[TMP:[a-z_0-9]+]]: pl.Tile{{\[\[}}16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
# CHECK-NEXT:    {{[a-z_0-9]+}}: pl.Tile{{\[\[}}32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(t, 0, 1, [[TMP]])
