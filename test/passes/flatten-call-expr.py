# RUN: pypto-opt %s -p convert-to-ssa,flatten-call-expr | filecheck %s
# RUN: pypto-opt %s -p convert-to-ssa,flatten-call-expr,flatten-call-expr | filecheck %s

# FlattenCallExpr hoists every nested call into a t__tmp_vN assignment, in
# program order, counting per function (07_after_FlattenCallExpr of
# upstream-builds/softmax_rows). Arithmetic (i * 16) and literals stay inline;
# a call whose result is unused stays a bare statement. Running it twice
# changes nothing.

import pypto.language as pl


@pl.program
class _jit_softmax_rows:
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def softmax_rows(self, x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
                tmp: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
                mx: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.none_box, fractal=512)] = pl.tile.row_max(t, tmp)
                e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(pl.tile.row_expand_sub(t, mx))
                s: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.none_box, fractal=512)] = pl.tile.row_sum(e, tmp)
                pl.tile.store(pl.tile.row_expand_div(e, s), [i * 16, 0], out)
        return out


# CHECK:      for i__idx_v0 in pl.range(4):
# CHECK-NEXT:     t__ssa_v0: {{.*}} = pl.tile.load(x__ssa_v0, [i__idx_v0 * 16, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
# CHECK-NEXT:     tmp__ssa_v0: {{.*}} = pl.tile.create([16, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
# CHECK-NEXT:     mx__ssa_v0: {{.*}} = pl.tile.row_max(t__ssa_v0, tmp__ssa_v0)
# CHECK-NEXT:     t__tmp_v0: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_sub(t__ssa_v0, mx__ssa_v0)
# CHECK-NEXT:     e__ssa_v0: {{.*}} = pl.tile.exp(t__tmp_v0)
# CHECK-NEXT:     s__ssa_v0: {{.*}} = pl.tile.row_sum(e__ssa_v0, tmp__ssa_v0)
# CHECK-NEXT:     t__tmp_v1: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_div(e__ssa_v0, s__ssa_v0)
# CHECK-NEXT:     pl.tile.store(t__tmp_v1, [i__idx_v0 * 16, 0], out__ssa_v0)
# CHECK-NEXT: return out__ssa_v0
