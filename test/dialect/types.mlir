// RUN: pypto-opt %s | filecheck %s
// RUN: pypto-opt %s | pypto-opt | filecheck %s

// The pl types print back as they are written (docs/ir.md "Types").

// CHECK-LABEL: builtin.module @types
// CHECK: func.func @f(%t: !pl.tensor<128x128xf32, memref<"mem_ddr_0", 0, 65536>>, %v: !pl.tile<16x128xf32, Vec>, %w: !pl.tile<16x128xf32, Vec, memref<"mem_vec_2", 0, 8192>, view<row_major, none_box, 512>>, %p: !pl.ptr, %h: !pl.tensor<64x64xf16>, %b: !pl.tensor<8x8xbf16>)
builtin.module @types {
  func.func @f(%t: !pl.tensor<128x128xf32, memref<"mem_ddr_0", 0, 65536>>, %v: !pl.tile<16x128xf32, Vec>, %w: !pl.tile<16x128xf32, Vec, memref<"mem_vec_2", 0, 8192>, view<row_major, none_box, 512>>, %p: !pl.ptr, %h: !pl.tensor<64x64xf16>, %b: !pl.tensor<8x8xbf16>) {
    func.return
  }
}
