// RUN: ptoas %s --emit pto --enable-insert-sync | filecheck %s
// RUN: ptoas %s --emit pto --enable-insert-sync | ptoas - --emit pto --enable-insert-sync | filecheck %s

// The ISA additions take part in sync insertion with their pipes: tsetval writes on PIPE_S what
// tfmod (PIPE_V) reads; tgetval (PIPE_S) reads what tfmod wrote; a FIFO tpop (PIPE_MTE2) fills the
// tile tconcat (PIPE_V) reads. Re-running the pass changes nothing.

// CHECK-LABEL: func.func @isa
// CHECK:      pto.tsetval
// CHECK-NEXT: pto.set_flag[<PIPE_S>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT: pto.wait_flag[<PIPE_S>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT: pto.tfmod
// CHECK-NEXT: pto.set_flag[<PIPE_V>, <PIPE_S>, <EVENT_ID0>]
// CHECK-NEXT: pto.wait_flag[<PIPE_V>, <PIPE_S>, <EVENT_ID0>]
// CHECK-NEXT: %{{.*}} = pto.tgetval
// CHECK:      pto.tpop(
// CHECK-NEXT: pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT: pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT: pto.tconcat
module attributes {pto.target_arch = "a2a3"} {
  func.func @isa() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %f = arith.constant 2.0 : f32
    %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %b = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %d = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tsetval ins(%c0, %f : index, f32) outs(%a : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tfmod ins(%a, %b : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%d : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    %v = pto.tgetval ins(%d, %c1 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>, index) outs : f32
    %r = arith.constant 0 : i32
    %p = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0}(%r : i32) -> !pto.pipe
    %t = pto.declare_tile -> !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, v_row=16, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %u = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, v_row=16, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tpop(%t, %p : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, v_row=16, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.pipe) {split = 0}
    pto.tconcat ins(%t, %u : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, v_row=16, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, v_row=16, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%b : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tfree(%p : !pto.pipe) {split = 0}
    return
  }
}
