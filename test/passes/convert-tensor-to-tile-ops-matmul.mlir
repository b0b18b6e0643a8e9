// RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

// matmul_k after OutlineIncoreScopes (upstream 11 dump): slices feeding
// matmuls become Mat loads of the window (t__tile, t__tile_1, ...), matmul /
// matmul_acc become tile ops into Acc, the loop carry is retyped to the Acc
// tile and the final assemble becomes c__tile = pl.tile.store.

builtin.module @_jit_matmul_k {
  func.func @k_blocked(%a: !pl.tensor<128x512xf16>, %b: !pl.tensor<512x128xf16>, %c: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %0 = "pl.tensor.slice"(%a, %c0, %c0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<128x512xf16>, index, index) -> !pl.tensor<128x128xf16> loc("mm.py":4:30)
    %1 = "pl.tensor.slice"(%b, %c0, %c0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<512x128xf16>, index, index) -> !pl.tensor<128x128xf16> loc("mm.py":4:45)
    %acc = "pl.tensor.matmul"(%0, %1) <{out_dtype = f32, a_trans = false, b_trans = false, c_matrix_nz = false}> : (!pl.tensor<128x128xf16>, !pl.tensor<128x128xf16>) -> !pl.tensor<128x128xf32> loc("mm.py":4:15)
    %acc__rv_v2 = scf.for %k = %c1 to %c4 step %c1 iter_args(%acc__iter_v1 = %acc) -> (!pl.tensor<128x128xf32>) {
      %k0 = arith.muli %k, %c128 : index
      %2 = "pl.tensor.slice"(%a, %c0, %k0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<128x512xf16>, index, index) -> !pl.tensor<128x128xf16> loc("mm.py":7:30)
      %3 = "pl.tensor.slice"(%b, %k0, %c0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<512x128xf16>, index, index) -> !pl.tensor<128x128xf16> loc("mm.py":7:50)
      %acc__ssa_v3 = "pl.tensor.matmul_acc"(%acc__iter_v1, %2, %3) <{a_trans = false, b_trans = false}> : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf16>, !pl.tensor<128x128xf16>) -> !pl.tensor<128x128xf32> loc("mm.py":7:19)
      scf.yield %acc__ssa_v3 : !pl.tensor<128x128xf32>
    }
    %c__ssa_v1 = "pl.tensor.assemble"(%c, %acc__rv_v2, %c0, %c0) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32> loc("mm.py":8:9)
    func.return %c : !pl.tensor<128x128xf32>
  }
}

// CHECK-LABEL: func.func @k_blocked(
// CHECK:         %t__tile = "pl.tile.load"(%a{{[_0-9]*}}, {{.*}}target_memory = #pl<mem Mat>{{.*}} -> !pl.tile<128x128xf16, Mat>
// CHECK:         %t__tile_1 = "pl.tile.load"(%b{{[_0-9]*}}, {{.*}}target_memory = #pl<mem Mat>{{.*}} -> !pl.tile<128x128xf16, Mat>
// CHECK:         %acc__tile = "pl.tile.matmul"(%t__tile, %t__tile_1) : (!pl.tile<128x128xf16, Mat>, !pl.tile<128x128xf16, Mat>) -> !pl.tile<128x128xf32, Acc>
// CHECK:         %[[RV:.*]] = scf.for %{{.*}} iter_args(%[[IT:.*]] = %acc__tile) -> (!pl.tile<128x128xf32, Acc>) {
// CHECK:           %t__tile_2 = "pl.tile.load"(%a{{[_0-9]*}}, {{.*}}target_memory = #pl<mem Mat>
// CHECK:           %t__tile_3 = "pl.tile.load"(%b{{[_0-9]*}}, {{.*}}target_memory = #pl<mem Mat>
// CHECK:           %acc__tile_1 = "pl.tile.matmul_acc"(%[[IT]], %t__tile_2, %t__tile_3) : (!pl.tile<128x128xf32, Acc>, !pl.tile<128x128xf16, Mat>, !pl.tile<128x128xf16, Mat>) -> !pl.tile<128x128xf32, Acc>
// CHECK:           scf.yield %acc__tile_1 : !pl.tile<128x128xf32, Acc>
// CHECK:         %c__tile = "pl.tile.store"(%[[RV]], %{{.*}}, %{{.*}}, %[[C:c[_0-9]*]]) : (!pl.tile<128x128xf32, Acc>, index, index, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
// CHECK-NOT:     "pl.tensor.
// CHECK:         func.return %[[C]]
