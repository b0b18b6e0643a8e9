// RUN: ptoas %s --emit pto --enable-insert-sync | filecheck %s
// RUN: ptoas %s --emit pto --enable-insert-sync | ptoas - --emit pto --enable-insert-sync | filecheck %s
// RUN: ptoas %s --emit pto --enable-insert-sync --memory-planner | filecheck %s

// Cube<->vector frontend pipes: a tpop writes its result tile on PIPE_MTE2
// (GM -> UB), so the vector op reading it waits on an MTE2 -> V flag; a
// tpush of an acc tile reads it on PIPE_FIX (L0C -> GM), so it waits for the
// matmul writing it on an M -> FIX flag. tfree is not a pipe op.
// (The tpop's tile has no known address, so it may overlap the tload's:
// insert-sync orders the two MTE2 writes with a barrier, not checked here.)

// CHECK-LABEL: func.func @vec_kernel
// CHECK:      %t = pto.tpop_from_aic {split = 0}
// CHECK-NEXT: pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT: pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT: pto.tadd ins(%t, %tb
// CHECK-NEXT: pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
// CHECK-NEXT: pto.tfree_from_aic {split = 0}
// CHECK-NEXT: pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
// CHECK-NEXT: pto.tstore
// CHECK-NEXT: pto.barrier <PIPE_ALL>
// CHECK-NEXT: return

// CHECK-LABEL: func.func @cube_kernel
// CHECK:      pto.tmatmul
// CHECK-NEXT: pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
// CHECK-NEXT: pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
// CHECK-NEXT: pto.tpush_to_aiv(%acc : {{.*}}) {split = 0}
// CHECK-NEXT: pto.barrier <PIPE_ALL>
// CHECK-NEXT: return
// CHECK-NOT:  pto.set_flag
module attributes {pto.target_arch = "a2a3"} {
  func.func @vec_kernel(%b: !pto.ptr<f32>, %o: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0_i64 = arith.constant 0 : i64
    %c4096_i64 = arith.constant 4096 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %vb = pto.make_tensor_view %b, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %vo = pto.make_tensor_view %o, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %po = pto.partition_view %vo, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %tb = pto.alloc_tile addr = %c0_i64 : !pto.tile_buf<vec, 16x16xf32>
    %td = pto.alloc_tile addr = %c4096_i64 : !pto.tile_buf<vec, 16x16xf32>
    pto.tload ins(%pb : !pto.partition_tensor_view<16x16xf32>) outs(%tb : !pto.tile_buf<vec, 16x16xf32>)
    %t = pto.tpop_from_aic {split = 0} -> !pto.tile_buf<vec, 16x16xf32>
    pto.tadd ins(%t, %tb : !pto.tile_buf<vec, 16x16xf32>, !pto.tile_buf<vec, 16x16xf32>) outs(%td : !pto.tile_buf<vec, 16x16xf32>)
    pto.tfree_from_aic {split = 0}
    pto.tstore ins(%td : !pto.tile_buf<vec, 16x16xf32>) outs(%po : !pto.partition_tensor_view<16x16xf32>)
    return
  }
  func.func @cube_kernel() attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
    %a = pto.alloc_tile : !pto.tile_buf<loc=left, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>
    %w = pto.alloc_tile : !pto.tile_buf<loc=right, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=col_major, fractal=512, pad=0>
    %acc = pto.alloc_tile : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>
    pto.tmatmul ins(%a, %w : !pto.tile_buf<loc=left, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>, !pto.tile_buf<loc=right, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=col_major, fractal=512, pad=0>) outs(%acc : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>)
    pto.tpush_to_aiv(%acc : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>) {split = 0}
    return
  }
}
