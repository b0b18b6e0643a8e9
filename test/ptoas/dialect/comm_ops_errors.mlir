// RUN: not python -m pypto.ptoas.pto_text %s 2>&1 | filecheck %s

// A signal cell is one i32 element.

module {
  func.func @k(%p: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %v1 = arith.constant 1 : i32
    %tv = pto.make_tensor_view %p, shape = [%c1, %c1], strides = [%c1, %c1] : !pto.tensor_view<1x1xf32>
    %c = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c1, %c1] : !pto.tensor_view<1x1xf32> -> !pto.partition_tensor_view<1x1xf32>
    // CHECK: comm_ops_errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: {{.*}}expects the signal cell to be i32
    pto.comm.tnotify(%c, %v1 : !pto.partition_tensor_view<1x1xf32>, i32) {notifyOp = #pto<notify_op atomic_add>}
    return
  }
}
