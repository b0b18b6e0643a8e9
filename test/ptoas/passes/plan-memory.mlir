// RUN: ptoas %shared/corpus/pto/vadd.pto --emit pto --memory-planner | filecheck %s
// RUN: not ptoas %s --emit pto 2>&1 | filecheck %s --check-prefix=ERR

// vadd: three 32x32 f32 UB tiles, all live together: 0, 4096, 8192.
// CHECK-DAG: %c0_i64 = arith.constant 0 : i64
// CHECK-DAG: %c4096_i64 = arith.constant 4096 : i64
// CHECK-DAG: %c8192_i64 = arith.constant 8192 : i64
// CHECK: pto.alloc_tile addr = %c0_i64
// CHECK: pto.alloc_tile addr = %c4096_i64
// CHECK: pto.alloc_tile addr = %c8192_i64

// ERR: plan-memory.mlir:15:5: error: plan-memory: vec tile of 262144 bytes does not fit
module {
  func.func @too_big() {
    %a = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=256, cols=256, v_row=256, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    return
  }
}
