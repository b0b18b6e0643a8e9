// RUN: not python -m pypto.ptoas.pto_text %s 2>&1 | filecheck %s

// tile_buf keys come in PTOAS's fixed order; a bad one is a located parse error.

func.func @f(%t: !pto.tile_buf<loc=vec, dtype=f32, cols=16, rows=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) {
  return
}

// CHECK: parse_errors.mlir:5:52: error: Expected 'rows' (!pto.tile_buf keys come in the order loc, dtype, rows, cols
