// RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

// Row softmax written with tensor ops in an InCore function: slices feeding
// vector ops become Vec loads of the window; row reductions get a scratch
// tile (tmp__tile = pl.tile.create); expands and unary ops switch to tile ops.

builtin.module @softmax_prog {
  func.func @rows(%x: !pl.tensor<64x128xf32>, %out: !pl.tensor<64x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<64x128xf32> attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %out__rv_v2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%out__iter_v1 = %out) -> (!pl.tensor<64x128xf32>) {
      %row = arith.muli %i, %c16 : index
      %t = "pl.tensor.slice"(%x, %row, %c0) <{shape = array<i64: 16, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<64x128xf32>, index, index) -> !pl.tensor<16x128xf32> loc("sm.py":6:17)
      %mx = "pl.tensor.row_max"(%t) : (!pl.tensor<16x128xf32>) -> !pl.tensor<16x1xf32> loc("sm.py":7:18)
      %d = "pl.tensor.row_expand_sub"(%t, %mx) : (!pl.tensor<16x128xf32>, !pl.tensor<16x1xf32>) -> !pl.tensor<16x128xf32> loc("sm.py":8:17)
      %e = "pl.tensor.exp"(%d) : (!pl.tensor<16x128xf32>) -> !pl.tensor<16x128xf32> loc("sm.py":8:17)
      %s = "pl.tensor.row_sum"(%e) : (!pl.tensor<16x128xf32>) -> !pl.tensor<16x1xf32> loc("sm.py":9:17)
      %y = "pl.tensor.row_expand_div"(%e, %s) : (!pl.tensor<16x128xf32>, !pl.tensor<16x1xf32>) -> !pl.tensor<16x128xf32> loc("sm.py":10:17)
      %out__ssa_v1 = "pl.tensor.assemble"(%out__iter_v1, %y, %row, %c0) : (!pl.tensor<64x128xf32>, !pl.tensor<16x128xf32>, index, index) -> !pl.tensor<64x128xf32> loc("sm.py":10:13)
      scf.yield %out__ssa_v1 : !pl.tensor<64x128xf32>
    }
    func.return %out : !pl.tensor<64x128xf32>
  }
}

// CHECK-LABEL: func.func @rows(
// CHECK:         scf.for %{{.*}} iter_args(%[[OIT:.*]] = %out{{[_0-9]*}}) -> (!pl.tensor<64x128xf32>) {
// CHECK:           %t__tile = "pl.tile.load"(%x{{[_0-9]*}}, %row{{[_0-9]*}}, {{.*}}target_memory = #pl<mem Vec>{{.*}} -> !pl.tile<16x128xf32, Vec>
// CHECK:           %tmp__tile = "pl.tile.create"() <{shape = array<i64: 16, 128>, dtype = f32, target_memory = #pl<mem Vec>}> : () -> !pl.tile<16x128xf32, Vec>
// CHECK:           %mx__tile = "pl.tile.row_max"(%t__tile, %tmp__tile) {{.*}} -> !pl.tile<16x1xf32, Vec>
// CHECK:           %d__tile = "pl.tile.row_expand_sub"(%t__tile, %mx__tile)
// CHECK:           %e__tile = "pl.tile.exp"(%d__tile)
// CHECK:           %tmp__tile_1 = "pl.tile.create"()
// CHECK:           %s__tile = "pl.tile.row_sum"(%e__tile, %tmp__tile_1)
// CHECK:           %y__tile = "pl.tile.row_expand_div"(%e__tile, %s__tile)
// CHECK:           %[[ST:out__tile]] = "pl.tile.store"(%y__tile, %row{{[_0-9]*}}, %{{.*}}, %[[OIT]])
// CHECK:           scf.yield %[[ST]] : !pl.tensor<64x128xf32>
// CHECK-NOT:     "pl.tensor.
