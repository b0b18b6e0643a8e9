# RUN: pypto-opt %s -p resolve-backend-op-layouts | filecheck %s

# ResolveBackendOpLayouts: the ops the backend runs on row_major tiles only
# (muls, sqrt: the op classes' ROW_MAJOR fact) get their [16, 1] col_major
# operands and result as [1, 16] row vectors, through reshape views, with
# upstream's names (<base>__rm_a<i>_tmp_v<n>, <base>__row_major_tmp_v<n>).
# row_sum (not ROW_MAJOR) and recip keep the column.

import pypto.language as pl


@pl.program
class ColVec:
    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def k(self, x: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
        tmp: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        s: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(t, tmp)
        v: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(s, 0.5)
        r: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.sqrt(v)
        i: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.recip(r)
        o2: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(i, [0, 0], o)
        return o2


# CHECK-LABEL: def k(
# CHECK:         s: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(t, tmp)
# CHECK-NEXT:    v__rm_a0_tmp_v0: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(s, [1, 16])
# CHECK-NEXT:    v__row_major_tmp_v1: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(v__rm_a0_tmp_v0, 0.5)
# CHECK-NEXT:    v: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(v__row_major_tmp_v1, [16, 1])
# CHECK-NEXT:    r__rm_a0_tmp_v2: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(v, [1, 16])
# CHECK-NEXT:    r__row_major_tmp_v3: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.sqrt(r__rm_a0_tmp_v2)
# CHECK-NEXT:    r: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(r__row_major_tmp_v3, [16, 1])
# CHECK-NEXT:    i: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.recip(r)
