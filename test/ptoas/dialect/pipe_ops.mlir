// RUN: python -m pypto.ptoas.pto_text %s | filecheck %s
// RUN: python -m pypto.ptoas.pto_text %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto | diff %t.pto -
// RUN: python -m pypto.ptoas.pto_text %s --generic | filecheck %s --check-prefix=GENERIC
// RUN: python -m pypto.ptoas.pto_text %s --generic > %t.generic.pto && python -m pypto.ptoas.pto_text %t.generic.pto | diff %t.pto -

// The cube<->vector frontend pipe ops: tpush (operand + split), tpop (result,
// optional dynamic valid dims) and tfree (split only) print as written.

module attributes {pto.target_arch = "a2a3"} {
  func.func @cube() attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
    %acc = pto.alloc_tile : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>
    pto.tpush_to_aiv(%acc : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>) {split = 0}
    %m = pto.tpop_from_aiv {split = 1} -> !pto.tile_buf<loc=mat, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>
    pto.tfree_from_aiv {split = 1}
    return
  }
  func.func @vector(%vr: index, %vc: index) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
    %t = pto.tpop_from_aic {split = 0} -> !pto.tile_buf<vec, 16x16xf32>
    %d = pto.tpop_from_aic(%vr, %vc) {split = 2} -> !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tfree_from_aic {split = 0}
    pto.tpush_to_aic(%t : !pto.tile_buf<vec, 16x16xf32>) {split = 2}
    return
  }
}

// CHECK-LABEL: func.func @cube
// CHECK:      pto.tpush_to_aiv(%acc : !pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>) {split = 0}
// CHECK-NEXT: %m = pto.tpop_from_aiv {split = 1} -> !pto.tile_buf<loc=mat, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>
// CHECK-NEXT: pto.tfree_from_aiv {split = 1}
// CHECK-LABEL: func.func @vector
// CHECK:      %t = pto.tpop_from_aic {split = 0} -> !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
// CHECK-NEXT: %d = pto.tpop_from_aic(%vr, %vc) {split = 2} -> !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>
// CHECK-NEXT: pto.tfree_from_aic {split = 0}
// CHECK-NEXT: pto.tpush_to_aic(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) {split = 2}

// GENERIC: "pto.tpush_to_aiv"(%{{.*}}) {split = 0 : i64}
// GENERIC: "pto.tpop_from_aiv"() <{operandSegmentSizes = array<i32: 0, 0>}> {split = 1 : i64}
// GENERIC: "pto.tfree_from_aiv"() {split = 1 : i64}
// GENERIC: "pto.tpop_from_aic"(%{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1>}> {split = 2 : i64}
