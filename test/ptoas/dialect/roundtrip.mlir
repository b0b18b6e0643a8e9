// RUN: python -m pypto.ptoas.pto_text %s | filecheck %s
// RUN: python -m pypto.ptoas.pto_text %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto | diff %t.pto -
// RUN: python -m pypto.ptoas.pto_text %s --generic | filecheck %s --check-prefix=GENERIC

// Both tile_buf spellings parse; the key list is printed. Sync ops print their short forms.

module attributes {pto.target_arch = "a2a3"} {
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %a: f32) attributes {pto.entry, pto.kernel_kind = #pto.kernel_kind<vector>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %tv = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>
    %u = pto.alloc_tile valid_row = %c16 valid_col = %c16 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    %h = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
    pto.tload ins(%pv : !pto.partition_tensor_view<16x16xf32>) outs(%t : !pto.tile_buf<vec, 16x16xf32>)
    pto.set_flag[#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, #pto.event<EVENT_ID0>]
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.tmuls ins(%t, %a : !pto.tile_buf<vec, 16x16xf32>, f32) outs(%u : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.barrier #pto.pipe<PIPE_V>
    pto.tcvt ins(%t {rmode = #pto<round_mode CAST_RINT>} : !pto.tile_buf<vec, 16x16xf32>) outs(%h : !pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>)
    pto.record_event[#pto.pipe_event_type<TVEC>, #pto.pipe_event_type<TSTORE_VEC>, #pto.event<EVENT_ID1>]
    pto.wait_event[#pto.pipe_event_type<TVEC>, #pto.pipe_event_type<TSTORE_VEC>, <EVENT_ID1>]
    pto.tstore ins(%t : !pto.tile_buf<vec, 16x16xf32>) outs(%pv : !pto.partition_tensor_view<16x16xf32>) {atomicType = #pto<atomic_type atomic_add>}
    pto.barrier <PIPE_ALL>
    return
  }
}

// CHECK:      module attributes {pto.target_arch = "a2a3"} {
// CHECK-NEXT:   func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %a: f32) attributes {pto.entry, pto.kernel_kind = #pto.kernel_kind<vector>} {
// CHECK:          %tv = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
// CHECK-NEXT:     %pv = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
// CHECK-NEXT:     %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>
// CHECK-NEXT:     %u = pto.alloc_tile valid_row = %c16 valid_col = %c16 : !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?,
// CHECK:          pto.tload ins(%pv : !pto.partition_tensor_view<16x16xf32>) outs(%t : !pto.tile_buf<loc=vec,
// CHECK-NEXT:     pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT:     pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
// CHECK-NEXT:     pto.tmuls ins(%t, %a : !pto.tile_buf<{{.*}}>, f32) outs(%u : !pto.tile_buf<{{.*}}>)
// CHECK-NEXT:     pto.barrier <PIPE_V>
// CHECK-NEXT:     pto.tcvt ins(%t {rmode = #pto<round_mode CAST_RINT>} : !pto.tile_buf<{{.*}}>) outs(%h : !pto.tile_buf<loc=vec, dtype=f16,
// CHECK-NEXT:     pto.record_event [#pto.pipe_event_type<TVEC>, #pto.pipe_event_type<TSTORE_VEC>, <EVENT_ID1>]
// CHECK-NEXT:     pto.wait_event [#pto.pipe_event_type<TVEC>, #pto.pipe_event_type<TSTORE_VEC>, <EVENT_ID1>]
// CHECK-NEXT:     pto.tstore ins(%t : !pto.tile_buf<{{.*}}>) outs(%pv : !pto.partition_tensor_view<16x16xf32>) {atomicType = #pto<atomic_type atomic_add>}
// CHECK-NEXT:     pto.barrier <PIPE_ALL>
// CHECK-NEXT:     return

// GENERIC: "pto.set_flag"() <{src_pipe = #pto.pipe<PIPE_MTE2>, dst_pipe = #pto.pipe<PIPE_V>, event_id = #pto.event<EVENT_ID0>}> : () -> ()
// GENERIC: "pto.tcvt"(%{{.*}}, %{{.*}}) {rmode = #pto<round_mode CAST_RINT>}
