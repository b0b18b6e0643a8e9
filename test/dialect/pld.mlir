// RUN: pypto-opt %s | filecheck %s
// RUN: pypto-opt %s | pypto-opt | filecheck %s

// The pld ops (pypto.language.distributed) print back in the same form and are a fixed point.

// CHECK-LABEL: builtin.module @dist {
// CHECK:         %s1 = "pld.system.notify"(%sig, %p, %z, %z) <{value = 1 : i64, op = #pld<notify_op AtomicAdd>}> : (!pl.tensor<2x1xi32>, index, index, index) -> !pl.tensor<2x1xi32>
// CHECK-NEXT:    %s2 = "pld.system.wait"(%s1, %z, %z) <{expected = 1 : i64, cmp = #pld<wait_cmp Ge>}> : (!pl.tensor<2x1xi32>, index, index) -> !pl.tensor<2x1xi32>
// CHECK-NEXT:    %s3 = "pld.tensor.barrier"(%s2) : (!pl.tensor<2x1xi32>) -> !pl.tensor<2x1xi32>
// CHECK-NEXT:    %d1 = "pld.tensor.broadcast"(%data, %s3) <{root = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
// CHECK-NEXT:    %d2 = "pld.tensor.allreduce"(%d1, %s3) <{op = #pld<reduce_op Sum>, mode = #pld<mode ring>, core_num = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
builtin.module @dist {
  func.func @f(%data: !pl.tensor<1x256xf32>, %sig: !pl.tensor<2x1xi32>, %p: index) -> !pl.tensor<1x256xf32> {
    %z = arith.constant 0 : index
    %s1 = "pld.system.notify"(%sig, %p, %z, %z) <{value = 1 : i64, op = #pld<notify_op AtomicAdd>}> : (!pl.tensor<2x1xi32>, index, index, index) -> !pl.tensor<2x1xi32>
    %s2 = "pld.system.wait"(%s1, %z, %z) <{expected = 1 : i64, cmp = #pld<wait_cmp Ge>}> : (!pl.tensor<2x1xi32>, index, index) -> !pl.tensor<2x1xi32>
    %s3 = "pld.tensor.barrier"(%s2) : (!pl.tensor<2x1xi32>) -> !pl.tensor<2x1xi32>
    %d1 = "pld.tensor.broadcast"(%data, %s3) <{root = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
    %d2 = "pld.tensor.allreduce"(%d1, %s3) <{op = #pld<reduce_op Sum>, mode = #pld<mode ring>, core_num = 1 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
    func.return %d2 : !pl.tensor<1x256xf32>
  }
}
