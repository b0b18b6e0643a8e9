// RUN: pypto-opt %shared/reference/upstream-builds/softmax_rows/passes_dump/33_after_MaterializeSemanticAliases.py -p memory-reuse | filecheck %s

// MemoryReuse on upstream's softmax_rows 33 dump gives upstream's 34: t,
// t__tmp_v0, e and t__tmp_v1 share mem_vec_2 (each dies where the next is
// born), tmp keeps mem_vec_3 (row_sum reads it while writing s), mx and s
// share mem_vec_4; the four freed allocs are gone.

// CHECK:           mem_vec_2: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
// CHECK-NEXT:      mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
// CHECK-NEXT:      mem_vec_4: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 64)
// CHECK-NEXT:      for i__idx_v0 in pl.range(4):
// CHECK-NEXT:        t__ssa_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2,
// CHECK-NEXT:        tmp__ssa_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_3,
// CHECK-NEXT:        mx__ssa_v0: pl.Tile[[16, 1], pl.FP32, pl.MemRef(mem_vec_4,
// CHECK-NEXT:        t__tmp_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2,
// CHECK-NEXT:        e__ssa_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2,
// CHECK-NEXT:        s__ssa_v0: pl.Tile[[16, 1], pl.FP32, pl.MemRef(mem_vec_4,
// CHECK-NEXT:        t__tmp_v1: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2,
// CHECK-NOT:     mem_vec_5
