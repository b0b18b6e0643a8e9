// RUN: ptoas %s | filecheck %s
// RUN: ptoas %s -o %t.cpp && g++ -std=c++17 -fsyntax-only -I %S/../../../ptoas/include %t.cpp

// The C++ header fills with 0xFF only the on-chip bytes a kernel may read before it writes them
// (pypto.ptoas.emitc.fill): @writes loads its tile and computes the other in full (no fill); @reads_partly_written
// loads the first 8 rows of a 16x16 tile through an 8-row tile over the same bytes and stores all 16 rows,
// so its rows 8-15 (vec bytes [512, 1024)) are filled at each launch.

// CHECK-LABEL: __global__ AICORE void writes(
// CHECK:       #if !defined(PTO_NPU)
// CHECK-NEXT:      pto::cpu::fill_before_read({});  // no on-chip byte is read before written: no fill
// CHECK-NEXT:  #endif
// CHECK:           TLOAD(

// CHECK-LABEL: __global__ AICORE void reads_partly_written(
// CHECK:       #if !defined(PTO_NPU)
// CHECK-NEXT:      pto::cpu::fill_before_read({{[{][{]}}TileType::Vec, 512, 1024{{[}][}]}});  // the on-chip bytes read before written: 0xFF
// CHECK-NEXT:  #endif
// CHECK:           TLOAD(

module attributes {pto.target_arch = "a2a3"} {
  func.func @writes(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a0 = arith.constant 0 : i64
    %a1k = arith.constant 1024 : i64
    %x = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %y = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %xv = pto.partition_view %x, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %xh = pto.partition_view %x, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
    %yv = pto.partition_view %y, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>

    %t = pto.alloc_tile addr = %a0 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%xv : !pto.partition_tensor_view<16x16xf32>) outs(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    %u = pto.alloc_tile addr = %a1k valid_row = %c16 valid_col = %c16 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tadd ins(%t, %t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>, !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%u : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%u : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%yv : !pto.partition_tensor_view<16x16xf32>)
    return
  }
  func.func @reads_partly_written(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a0 = arith.constant 0 : i64
    %a1k = arith.constant 1024 : i64
    %x = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %y = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %xv = pto.partition_view %x, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %xh = pto.partition_view %x, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<8x16xf32>
    %yv = pto.partition_view %y, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>

    %t = pto.alloc_tile addr = %a0 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %h = pto.alloc_tile addr = %a0 : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%xh : !pto.partition_tensor_view<8x16xf32>) outs(%h : !pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.tstore ins(%t : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>) outs(%yv : !pto.partition_tensor_view<16x16xf32>)
    return
  }
}
