// RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

// A matmul result (an Acc tile) read by a vector op is moved to Vec once,
// right after the matmul, as upstream does (ExpandMixedKernel later turns the
// move into the cube -> vector push/pop); it used to be rejected.

builtin.module @_jit_mixed {
  func.func @mixed_k(%a: !pl.tensor<64x64xf16>, %b: !pl.tensor<64x64xf16>, %bias: !pl.tensor<64x64xf32>, %out: !pl.tensor<64x64xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<64x64xf32> attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
    %c0 = arith.constant 0 : index
    %acc = "pl.tensor.matmul"(%a, %b) <{out_dtype = f32, a_trans = false, b_trans = false, c_matrix_nz = false}> : (!pl.tensor<64x64xf16>, !pl.tensor<64x64xf16>) -> !pl.tensor<64x64xf32> loc("mix.py":5:15)
    %s = "pl.tensor.add"(%acc, %bias) : (!pl.tensor<64x64xf32>, !pl.tensor<64x64xf32>) -> !pl.tensor<64x64xf32> loc("mix.py":6:19)
    %m = "pl.tensor.mul"(%acc, %s) : (!pl.tensor<64x64xf32>, !pl.tensor<64x64xf32>) -> !pl.tensor<64x64xf32> loc("mix.py":7:19)
    %o = "pl.tensor.assemble"(%out, %m, %c0, %c0) : (!pl.tensor<64x64xf32>, !pl.tensor<64x64xf32>, index, index) -> !pl.tensor<64x64xf32> loc("mix.py":8:9)
    func.return %out : !pl.tensor<64x64xf32>
  }
}

// CHECK-LABEL: func.func @mixed_k(
// CHECK:         %[[ACC:[a-z_0-9]+]] = "pl.tile.matmul"({{.*}} -> !pl.tile<64x64xf32, Acc>
// CHECK-NEXT:    %[[VEC:[a-z_0-9]+]] = "pl.tile.move"(%[[ACC]]) <{target_memory = #pl<mem Vec>}> : (!pl.tile<64x64xf32, Acc>) -> !pl.tile<64x64xf32, Vec>
// CHECK:         "pl.tile.add"(%[[VEC]],
// CHECK:         "pl.tile.mul"(%[[VEC]],
// CHECK-NOT:     "pl.tile.move"
