// RUN: ptoas %s --emit pto --enable-insert-sync | filecheck %s

// GM partitions of one kernel argument are byte ranges of it (ptoas/passes/access.py, gm_region): a
// partition_view of a make_tensor_view with constant strides and sizes is the bounding interval of its
// offsets' constant parts, comparable with another one whose offsets have the same symbolic parts. A tload
// of rows 8..15 after a tstore of rows 0..7 at the same column %base (or %base + 0) needs no MTE3 -> MTE2
// flag; rows 4..11, another symbolic column, or the same rows through a peer_view (the peer may be this
// rank) do. Rows 8..15 through a peer_view are disjoint too: only ranges prove it.

// CHECK-LABEL: func.func @rows_after
// CHECK:      pto.tstore
// CHECK-NEXT: pto.tload
// CHECK-NEXT: pto.barrier <PIPE_ALL>
// CHECK-LABEL: func.func @rows_overlap
// CHECK:      pto.tstore
// CHECK-NEXT: pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>
// CHECK-NEXT: pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>
// CHECK-NEXT: pto.tload
// CHECK-LABEL: func.func @other_column
// CHECK:      pto.tstore
// CHECK-NEXT: pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>
// CHECK-NEXT: pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>
// CHECK-NEXT: pto.tload
// CHECK-LABEL: func.func @peer_rows
// CHECK:      pto.tstore
// CHECK-NEXT: pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>
// CHECK-NEXT: pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>
// CHECK-NEXT: pto.tload
// CHECK-LABEL: func.func @peer_rows_after
// CHECK:      pto.tstore
// CHECK-NEXT: pto.tload
// CHECK-NEXT: pto.barrier <PIPE_ALL>
module attributes {pto.target_arch = "a2a3"} {
  func.func @rows_after(%x: !pto.ptr<f32>, %d: !pto.ptr<f32>, %base: index, %other: index, %peer: index) {
    %c0_i64 = arith.constant 0 : i64
    %c16384_i64 = arith.constant 16384 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    %vx = pto.make_tensor_view %x, shape = [%c8, %c512], strides = [%c512, %c1] : !pto.tensor_view<?x?xf32>
    %vd = pto.make_tensor_view %d, shape = [%c16, %c1024], strides = [%c1024, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %p0 = pto.partition_view %vd, offsets = [%c0, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %b1 = arith.addi %base, %c0 : index
    %q = pto.partition_view %vd, offsets = [%c8, %b1], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %ta = pto.alloc_tile addr = %c0_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %tb = pto.alloc_tile addr = %c16384_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%px : !pto.partition_tensor_view<8x512xf32>) outs(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%p0 : !pto.partition_tensor_view<8x512xf32>)
    pto.tload ins(%q : !pto.partition_tensor_view<8x512xf32>) outs(%tb : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    return
  }
  func.func @rows_overlap(%x: !pto.ptr<f32>, %d: !pto.ptr<f32>, %base: index, %other: index, %peer: index) {
    %c0_i64 = arith.constant 0 : i64
    %c16384_i64 = arith.constant 16384 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    %vx = pto.make_tensor_view %x, shape = [%c8, %c512], strides = [%c512, %c1] : !pto.tensor_view<?x?xf32>
    %vd = pto.make_tensor_view %d, shape = [%c16, %c1024], strides = [%c1024, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %p0 = pto.partition_view %vd, offsets = [%c0, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %q = pto.partition_view %vd, offsets = [%c4, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %ta = pto.alloc_tile addr = %c0_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %tb = pto.alloc_tile addr = %c16384_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%px : !pto.partition_tensor_view<8x512xf32>) outs(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%p0 : !pto.partition_tensor_view<8x512xf32>)
    pto.tload ins(%q : !pto.partition_tensor_view<8x512xf32>) outs(%tb : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    return
  }
  func.func @other_column(%x: !pto.ptr<f32>, %d: !pto.ptr<f32>, %base: index, %other: index, %peer: index) {
    %c0_i64 = arith.constant 0 : i64
    %c16384_i64 = arith.constant 16384 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    %vx = pto.make_tensor_view %x, shape = [%c8, %c512], strides = [%c512, %c1] : !pto.tensor_view<?x?xf32>
    %vd = pto.make_tensor_view %d, shape = [%c16, %c1024], strides = [%c1024, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %p0 = pto.partition_view %vd, offsets = [%c0, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %q = pto.partition_view %vd, offsets = [%c8, %other], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %ta = pto.alloc_tile addr = %c0_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %tb = pto.alloc_tile addr = %c16384_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%px : !pto.partition_tensor_view<8x512xf32>) outs(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%p0 : !pto.partition_tensor_view<8x512xf32>)
    pto.tload ins(%q : !pto.partition_tensor_view<8x512xf32>) outs(%tb : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    return
  }
  func.func @peer_rows(%x: !pto.ptr<f32>, %d: !pto.ptr<f32>, %base: index, %other: index, %peer: index) {
    %c0_i64 = arith.constant 0 : i64
    %c16384_i64 = arith.constant 16384 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    %vx = pto.make_tensor_view %x, shape = [%c8, %c512], strides = [%c512, %c1] : !pto.tensor_view<?x?xf32>
    %vd = pto.make_tensor_view %d, shape = [%c16, %c1024], strides = [%c1024, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %p0 = pto.partition_view %vd, offsets = [%c0, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %pd = pto.comm.peer_view %vd, %peer : !pto.tensor_view<?x?xf32> -> !pto.tensor_view<?x?xf32>
    %q = pto.partition_view %pd, offsets = [%c0, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %ta = pto.alloc_tile addr = %c0_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %tb = pto.alloc_tile addr = %c16384_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%px : !pto.partition_tensor_view<8x512xf32>) outs(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%p0 : !pto.partition_tensor_view<8x512xf32>)
    pto.tload ins(%q : !pto.partition_tensor_view<8x512xf32>) outs(%tb : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    return
  }
  func.func @peer_rows_after(%x: !pto.ptr<f32>, %d: !pto.ptr<f32>, %base: index, %other: index, %peer: index) {
    %c0_i64 = arith.constant 0 : i64
    %c16384_i64 = arith.constant 16384 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    %vx = pto.make_tensor_view %x, shape = [%c8, %c512], strides = [%c512, %c1] : !pto.tensor_view<?x?xf32>
    %vd = pto.make_tensor_view %d, shape = [%c16, %c1024], strides = [%c1024, %c1] : !pto.tensor_view<?x?xf32>
    %px = pto.partition_view %vx, offsets = [%c0, %c0], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %p0 = pto.partition_view %vd, offsets = [%c0, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %pd = pto.comm.peer_view %vd, %peer : !pto.tensor_view<?x?xf32> -> !pto.tensor_view<?x?xf32>
    %q = pto.partition_view %pd, offsets = [%c8, %base], sizes = [%c8, %c512] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x512xf32>
    %ta = pto.alloc_tile addr = %c0_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %tb = pto.alloc_tile addr = %c16384_i64 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%px : !pto.partition_tensor_view<8x512xf32>) outs(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%ta : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%p0 : !pto.partition_tensor_view<8x512xf32>)
    pto.tload ins(%q : !pto.partition_tensor_view<8x512xf32>) outs(%tb : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=512, v_row=8, v_col=512, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    return
  }
}
