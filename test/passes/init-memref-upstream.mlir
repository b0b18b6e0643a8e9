// RUN: pypto-opt %shared/reference/upstream-builds/softmax_rows/passes_dump/31_after_MaterializeTensorStrides.py -p init-memref | filecheck %s --check-prefix=SOFTMAX
// RUN: pypto-opt %shared/reference/upstream-builds/matmul_k/passes_dump/31_after_MaterializeTensorStrides.py -p init-memref | filecheck %s --check-prefix=MATMUL

// InitMemRef on upstream's 31 dumps reproduces upstream's 32 dumps: DDR
// parameters mem_ddr_0.., then one alloc per tile in program order (the
// counter runs on from the parameters), offsets 0; matmul_acc and the loop
// carry share the accumulator's buffer (no mem_acc_8); store results name the
// output tensor's buffer.

// SOFTMAX-LABEL: def softmax_rows_incore_0(x__ssa_v0: pl.Tensor[[64, 128], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 32768)], out__ssa_v0: pl.Out[pl.Tensor[[64, 128], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 32768)]])
// SOFTMAX-NEXT:    mem_vec_2: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
// SOFTMAX-NEXT:    mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
// SOFTMAX-NEXT:    mem_vec_4: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 64)
// SOFTMAX-NEXT:    mem_vec_5: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
// SOFTMAX-NEXT:    mem_vec_6: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
// SOFTMAX-NEXT:    mem_vec_7: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 64)
// SOFTMAX-NEXT:    mem_vec_8: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 8192)
// SOFTMAX-NEXT:    for i__idx_v0 in pl.range(4):
// SOFTMAX-NEXT:      t__ssa_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2, pl.const(0, pl.INT64), 8192), pl.Mem.Vec] = pl.tile.load(
// SOFTMAX-NEXT:      tmp__ssa_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_3, pl.const(0, pl.INT64), 8192), pl.Mem.Vec] = pl.tile.create(
// SOFTMAX-NEXT:      mx__ssa_v0: pl.Tile[[16, 1], pl.FP32, pl.MemRef(mem_vec_4, pl.const(0, pl.INT64), 64), pl.Mem.Vec] = pl.tile.row_max(
// SOFTMAX:           t__tmp_v1: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_8, pl.const(0, pl.INT64), 8192), pl.Mem.Vec] = pl.tile.row_expand_div(
// SOFTMAX-NEXT:      out__store: pl.Tensor[[64, 128], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 32768)] = pl.tile.store(

// MATMUL-LABEL: def k_blocked(
// MATMUL:          mem_acc_7: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 65536)
// MATMUL-NEXT:     mem_mat_8: pl.Ptr = pl.tile.alloc(pl.Mem.Mat, 32768)
// MATMUL-NOT:      pl.tile.alloc(pl.Mem.Acc
// MATMUL:          acc__tile: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_acc_7, pl.const(0, pl.INT64), 65536), pl.Mem.Acc] = pl.tile.matmul(
// MATMUL:          acc__tile_1: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_acc_7, pl.const(0, pl.INT64), 65536), pl.Mem.Acc] = pl.tile.matmul_acc(
// MATMUL-NEXT:     acc__rv_v2: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_acc_7, pl.const(0, pl.INT64), 65536), pl.Mem.Acc] = pl.yield_(acc__tile_1)
