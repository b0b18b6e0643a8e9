// RUN: ptoas %shared/corpus/pto/vadd.pto --emit pto --memory-planner | filecheck %s
// RUN: not ptoas %s --emit pto 2>&1 | filecheck %s --check-prefix=ERR

// vadd: three 32x32 f32 UB tiles, all live together: 0, 4096, 8192.
// CHECK-DAG: %c0_i64 = arith.constant 0 : i64
// CHECK-DAG: %c4096_i64 = arith.constant 4096 : i64
// CHECK-DAG: %c8192_i64 = arith.constant 8192 : i64
// CHECK: pto.alloc_tile addr = %c0_i64
// CHECK: pto.alloc_tile addr = %c4096_i64
// CHECK: pto.alloc_tile addr = %c8192_i64

// Two 128 KiB tiles live together do not fit the 192 KiB UB (each alone does).
// ERR: plan-memory.mlir:17:5: error: plan-memory: vec tile of 131072 bytes does not fit (needs 262144
module {
  func.func @too_big() {
    %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=128, cols=256, v_row=128, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %b = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=128, cols=256, v_row=128, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tadd ins(%a, %b : !pto.tile_buf<loc=vec, dtype=f32, rows=128, cols=256, v_row=128, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=f32, rows=128, cols=256, v_row=128, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%a : !pto.tile_buf<loc=vec, dtype=f32, rows=128, cols=256, v_row=128, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    return
  }
}
