// RUN: pypto-opt %shared/reference/upstream-builds/matmul_k/passes_dump/33_after_MaterializeSemanticAliases.py -p memory-reuse | filecheck %s

// The loop body's Mat/Left/Right tiles reuse the buffers of the tiles before
// the loop (dead by then); the accumulator keeps mem_acc_7.

// CHECK-LABEL:   def k_blocked(
// CHECK-NEXT:      mem_mat_3: pl.Ptr = pl.tile.alloc(pl.Mem.Mat, 32768)
// CHECK-NEXT:      mem_mat_4: pl.Ptr = pl.tile.alloc(pl.Mem.Mat, 32768)
// CHECK-NEXT:      mem_left_5: pl.Ptr = pl.tile.alloc(pl.Mem.Left, 32768)
// CHECK-NEXT:      mem_right_6: pl.Ptr = pl.tile.alloc(pl.Mem.Right, 32768)
// CHECK-NEXT:      mem_acc_7: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 65536)
// CHECK-NOT:       pl.tile.alloc
// CHECK:             t__tile_2: pl.Tile[[128, 128], pl.FP16, pl.MemRef(mem_mat_3,
// CHECK-NEXT:        t__tile_3: pl.Tile[[128, 128], pl.FP16, pl.MemRef(mem_mat_4,
// CHECK-NEXT:        t__tile_Left_1: pl.Tile[[128, 128], pl.FP16, pl.MemRef(mem_left_5,
// CHECK-NEXT:        t__tile_Right_1: pl.Tile[[128, 128], pl.FP16, pl.MemRef(mem_right_6,
