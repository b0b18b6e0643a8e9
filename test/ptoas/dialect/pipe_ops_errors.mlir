// RUN: not python -m pypto.ptoas.pto_text %s 2>&1 | filecheck %s

// A frontend pipe op's split must be 0, 1 or 2; the error is located at the op.

module {
  func.func @cube() {
    %acc = pto.alloc_tile : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>
    pto.tpush_to_aiv(%acc : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>) {split = 3}
    return
  }
}

// CHECK: pipe_ops_errors.mlir:8:5: error: 'pto.tpush_to_aiv' op split must be 0, 1 or 2, got 3
