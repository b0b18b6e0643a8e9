// RUN: pypto-opt %s | filecheck %s
// RUN: pypto-opt %s | pypto-opt | filecheck %s

// The pld ops (pypto.language.distributed) print back in the same form and are a fixed point.

// CHECK-LABEL: builtin.module @dist {
// CHECK:         %s1 = "pld.system.notify"(%sig, %p, %z, %z, %one) <{op = #pld<notify_op AtomicAdd>, operandSegmentSizes = array<i32: 1, 1, 2, 1>}> : (!pl.tensor<2x1xi32>, index, index, index, i32) -> !pl.tensor<2x1xi32>
// CHECK-NEXT:    %s2 = "pld.system.wait"(%s1, %z, %z, %one) <{cmp = #pld<wait_cmp Ge>, operandSegmentSizes = array<i32: 1, 2, 1>}> : (!pl.tensor<2x1xi32>, index, index, i32) -> !pl.tensor<2x1xi32>
// CHECK-NEXT:    %s3 = "pld.tensor.barrier"(%s2) : (!pl.tensor<2x1xi32>) -> !pl.tensor<2x1xi32>
// CHECK-NEXT:    %d1 = "pld.tensor.broadcast"(%data, %s3) <{root = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
// CHECK-NEXT:    %d2 = "pld.tensor.allreduce"(%d1, %s3) <{op = #pld<reduce_op Sum>, mode = #pld<mode ring>, core_num = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
// CHECK-NEXT:    %ctx = "pld.get_comm_ctx"(%d2) : (!pl.tensor<1x256xf32>) -> index
// CHECK-NEXT:    %me = "pld.rank"(%ctx) : (index) -> index
// CHECK-NEXT:    %t = "pld.tile.remote_load"(%d2, %me, %z, %z) <{shape = array<i64: 1, 256>}> : (!pl.tensor<1x256xf32>, index, index, index) -> !pl.tile<1x256xf32, Vec>
// CHECK-NEXT:    %d3 = "pld.tile.remote_store"(%t, %d2, %p, %z, %z) : (!pl.tile<1x256xf32, Vec>, !pl.tensor<1x256xf32>, index, index, index) -> !pl.tensor<1x256xf32>
// CHECK-NEXT:    %d4 = "pld.tensor.put"(%d3, %p, %data) <{atomic = #pl<atomic Add>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> : (!pl.tensor<1x256xf32>, index, !pl.tensor<1x256xf32>) -> !pl.tensor<1x256xf32>
builtin.module @dist {
  func.func @f(%data: !pl.tensor<1x256xf32>, %sig: !pl.tensor<2x1xi32>, %p: index) -> !pl.tensor<1x256xf32> {
    %z = arith.constant 0 : index
    %one = arith.constant 1 : i32
    %s1 = "pld.system.notify"(%sig, %p, %z, %z, %one) <{op = #pld<notify_op AtomicAdd>, operandSegmentSizes = array<i32: 1, 1, 2, 1>}> : (!pl.tensor<2x1xi32>, index, index, index, i32) -> !pl.tensor<2x1xi32>
    %s2 = "pld.system.wait"(%s1, %z, %z, %one) <{cmp = #pld<wait_cmp Ge>, operandSegmentSizes = array<i32: 1, 2, 1>}> : (!pl.tensor<2x1xi32>, index, index, i32) -> !pl.tensor<2x1xi32>
    %s3 = "pld.tensor.barrier"(%s2) : (!pl.tensor<2x1xi32>) -> !pl.tensor<2x1xi32>
    %d1 = "pld.tensor.broadcast"(%data, %s3) <{root = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
    %d2 = "pld.tensor.allreduce"(%d1, %s3) <{op = #pld<reduce_op Sum>, mode = #pld<mode ring>, core_num = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
    %ctx = "pld.get_comm_ctx"(%d2) : (!pl.tensor<1x256xf32>) -> index
    %me = "pld.rank"(%ctx) : (index) -> index
    %t = "pld.tile.remote_load"(%d2, %me, %z, %z) <{shape = array<i64: 1, 256>}> : (!pl.tensor<1x256xf32>, index, index, index) -> !pl.tile<1x256xf32, Vec>
    %d3 = "pld.tile.remote_store"(%t, %d2, %p, %z, %z) : (!pl.tile<1x256xf32, Vec>, !pl.tensor<1x256xf32>, index, index, index) -> !pl.tensor<1x256xf32>
    %d4 = "pld.tensor.put"(%d3, %p, %data) <{atomic = #pl<atomic Add>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> : (!pl.tensor<1x256xf32>, index, !pl.tensor<1x256xf32>) -> !pl.tensor<1x256xf32>
    func.return %d4 : !pl.tensor<1x256xf32>
  }
}

// CHECK-LABEL: builtin.module @a2av {
// CHECK:         %{{.*}} = "pld.tensor.all_to_all_v"(%in, %out, %{{.*}}, %sc, %rc) : (!pl.tensor<4x64xf32>, !pl.tensor<4x64xf32>, !pl.tensor<2x1xi32>, !pl.tensor<2xi32>, !pl.tensor<2x1xi32>) -> !pl.tensor<4x64xf32>
builtin.module @a2av {
  func.func @f(%in: !pl.tensor<4x64xf32>, %out: !pl.tensor<4x64xf32>, %sig: !pl.tensor<2x1xi32>, %sc: !pl.tensor<2xi32>, %rc: !pl.tensor<2x1xi32>) -> !pl.tensor<4x64xf32> {
    %t = "pld.tensor.all_to_all_v"(%in, %out, %sig, %sc, %rc) : (!pl.tensor<4x64xf32>, !pl.tensor<4x64xf32>, !pl.tensor<2x1xi32>, !pl.tensor<2xi32>, !pl.tensor<2x1xi32>) -> !pl.tensor<4x64xf32>
    func.return %t : !pl.tensor<4x64xf32>
  }
}

// pld.tile.put / get: pld.tensor.put / get staged through an explicit Vec tile (ping, and an optional pong).
// CHECK-LABEL: builtin.module @staged {
// CHECK:         %b1 = "pld.tile.put"(%st, %box, %q, %x) <{atomic = #pl<atomic Add>, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 0, 0>}> : (!pl.tile<1x64xf32, Vec>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>) -> !pl.tensor<2x64xf32>
// CHECK-NEXT:    %b2 = "pld.tile.get"(%st, %st2, %b1, %q, %box, %o, %o, %o, %o) <{shape = array<i64: 1, 64>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 2, 2>}> : (!pl.tile<1x64xf32, Vec>, !pl.tile<1x64xf32, Vec>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>, index, index, index, index) -> !pl.tensor<2x64xf32>
builtin.module @staged {
  func.func @f(%box: !pl.tensor<2x64xf32>, %x: !pl.tensor<2x64xf32>, %st: !pl.tile<1x64xf32, Vec>, %st2: !pl.tile<1x64xf32, Vec>, %q: index) -> !pl.tensor<2x64xf32> {
    %o = arith.constant 0 : index
    %b1 = "pld.tile.put"(%st, %box, %q, %x) <{atomic = #pl<atomic Add>, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 0, 0>}> : (!pl.tile<1x64xf32, Vec>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>) -> !pl.tensor<2x64xf32>
    %b2 = "pld.tile.get"(%st, %st2, %b1, %q, %box, %o, %o, %o, %o) <{shape = array<i64: 1, 64>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 2, 2>}> : (!pl.tile<1x64xf32, Vec>, !pl.tile<1x64xf32, Vec>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>, index, index, index, index) -> !pl.tensor<2x64xf32>
    func.return %b2 : !pl.tensor<2x64xf32>
  }
}
