// RUN: python -m pypto.ptoas.pto_text %s | filecheck %s
// RUN: python -m pypto.ptoas.pto_text %s > %t.pto && python -m pypto.ptoas.pto_text %t.pto | diff %t.pto -

// PTOAS's cross-rank ops (pto.comm.*, as upstream PyPTO emits them) print back in the same form.

module {
  func.func @k(%p: !pto.ptr<f32>, %s: !pto.ptr<i32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %v1 = arith.constant 1 : i32
    // CHECK: pto.comm.get_rank : i64
    %r = pto.comm.get_rank : i64
    // CHECK-NEXT: pto.comm.get_nranks : i64
    %n = pto.comm.get_nranks : i64
    %tv = pto.make_tensor_view %p, shape = [%c1, %c64], strides = [%c64, %c1] : !pto.tensor_view<1x64xf32>
    %sv = pto.make_tensor_view %s, shape = [%c1, %c1], strides = [%c1, %c1] : !pto.tensor_view<1x1xi32>
    // CHECK: pto.comm.peer_view %{{.*}}, %{{.*}} : !pto.tensor_view<1x64xf32> -> !pto.tensor_view<1x64xf32>
    %peer = pto.comm.peer_view %tv, %c1 : !pto.tensor_view<1x64xf32> -> !pto.tensor_view<1x64xf32>
    %a = pto.partition_view %peer, offsets = [%c0, %c0], sizes = [%c1, %c64] : !pto.tensor_view<1x64xf32> -> !pto.partition_tensor_view<1x64xf32>
    %b = pto.partition_view %tv, offsets = [%c0, %c0], sizes = [%c1, %c64] : !pto.tensor_view<1x64xf32> -> !pto.partition_tensor_view<1x64xf32>
    // CHECK: pto.comm.tput(%{{.*}}, %{{.*}} : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>) {atomicType = #pto<atomic_type atomic_add>}
    pto.comm.tput(%a, %b : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>) {atomicType = #pto<atomic_type atomic_add>}
    // CHECK-NEXT: pto.comm.tget(%{{.*}}, %{{.*}} : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>)
    pto.comm.tget(%b, %a : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>)
    %st = pto.alloc_tile : !pto.tile_buf<vec, 1x64xf32>
    // pld.tile.put / get: the staging tile(s) in buf(...), with their types beside them
    // CHECK: pto.comm.tput(%{{.*}}, %{{.*}}, buf(%st : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=64{{.*}}>) : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>) {atomicType = #pto<atomic_type atomic_add>}
    pto.comm.tput(%a, %b, buf(%st : !pto.tile_buf<vec, 1x64xf32>) : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>) {atomicType = #pto<atomic_type atomic_add>}
    // CHECK-NEXT: pto.comm.tget(%{{.*}}, %{{.*}}, buf(%st, %st : !pto.tile_buf<{{.*}}>, !pto.tile_buf<{{.*}}>) : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>)
    pto.comm.tget(%b, %a, buf(%st, %st : !pto.tile_buf<vec, 1x64xf32>, !pto.tile_buf<vec, 1x64xf32>) : !pto.partition_tensor_view<1x64xf32>, !pto.partition_tensor_view<1x64xf32>)
    %c = pto.partition_view %sv, offsets = [%c0, %c0], sizes = [%c1, %c1] : !pto.tensor_view<1x1xi32> -> !pto.partition_tensor_view<1x1xi32>
    // CHECK: pto.comm.tnotify(%{{.*}}, %{{.*}} : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op set>}
    pto.comm.tnotify(%c, %v1 : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op set>}
    // CHECK-NEXT: pto.comm.twait(%{{.*}}, %{{.*}} : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>}
    pto.comm.twait(%c, %v1 : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>}
    return
  }
}
