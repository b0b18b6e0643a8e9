// RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

// The add kernel after OutlineIncoreScopes (upstream 11 dump): entry Vec loads
// a__tile / b__tile, t__tile = pl.tile.add, the assemble into the Out param
// becomes out__tile = pl.tile.store. Functions that are not InCore keep their
// tensor ops.

builtin.module @add_prog {
  func.func @add_incore_0(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x128xf32>, %out: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
    %c0 = arith.constant 0 : index
    %0 = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32> loc("add.py":4:18)
    %s = arith.constant 2.0 : f32
    %1 = "pl.tensor.muls"(%0, %s) : (!pl.tensor<128x128xf32>, f32) -> !pl.tensor<128x128xf32> loc("add.py":5:18)
    %2 = "pl.tensor.sub"(%1, %a) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32> loc("add.py":6:18)
    %out__ssa_v1 = "pl.tensor.assemble"(%out, %2, %c0, %c0) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32> loc("add.py":7:9)
    func.return %out : !pl.tensor<128x128xf32>
  }
  func.func @helper(%a: !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32> {
    %0 = "pl.tensor.exp"(%a) : (!pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
    func.return %0 : !pl.tensor<128x128xf32>
  }
}

// CHECK-LABEL: func.func @add_incore_0(
// CHECK:         %a__tile = "pl.tile.load"(%[[A:a[_0-9]*]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{shapes = array<i64: 128, 128>, target_memory = #pl<mem Vec>{{.*}}}> : (!pl.tensor<128x128xf32>, index, index, index, index) -> !pl.tile<128x128xf32, Vec>
// CHECK:         %b__tile = "pl.tile.load"(%b{{[_0-9]*}},
// CHECK-NOT:     "pl.tile.load"
// CHECK:         %t__tile = "pl.tile.add"(%a__tile, %b__tile) : (!pl.tile<128x128xf32, Vec>, !pl.tile<128x128xf32, Vec>) -> !pl.tile<128x128xf32, Vec>
// CHECK:         %t__tile_1 = "pl.tile.muls"(%t__tile, %{{.*}}) : (!pl.tile<128x128xf32, Vec>, f32) -> !pl.tile<128x128xf32, Vec>
// CHECK:         %t__tile_2 = "pl.tile.sub"(%t__tile_1, %a__tile)
// CHECK:         %out__tile = "pl.tile.store"(%t__tile_2, %{{.*}}, %{{.*}}, %[[OUT:out[_0-9]*]]) : (!pl.tile<128x128xf32, Vec>, index, index, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
// CHECK-NOT:     "pl.tensor.
// CHECK:         func.return %[[OUT]] : !pl.tensor<128x128xf32>
// CHECK-LABEL: func.func @helper(
// CHECK:         "pl.tensor.exp"
