// RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s

// A scope that writes its Out tensor with pl.tile.store inside a loop and
// yields nothing (softmax_rows). The InCore function is named by name_hint,
// takes the captured loop bound first (first-use order), returns the Out param; the unnamed
// store result is named out__store; the parent's later use of %out reads the
// call result. A tensor that is read before it is written becomes InOut.

builtin.module @softmax_prog {
  func.func @softmax(%x: !pl.tensor<64x128xf32>, %out: !pl.tensor<64x128xf32> {pl.dir = #pl<dir Out>}, %acc: !pl.tensor<16x128xf32> {pl.dir = #pl<dir Out>}, %n: index) -> !pl.tensor<64x128xf32> {
    "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "rows"}> ({
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      scf.for %i = %c0 to %n step %c1 {
        %row = arith.muli %i, %c16 : index
        %t = "pl.tile.load"(%x, %row, %c0, %c16, %c128) <{shapes = array<i64: 16, 128>, target_memory = #pl<mem Vec>, operandSegmentSizes = array<i32: 1, 2, 2>}> : (!pl.tensor<64x128xf32>, index, index, index, index) -> !pl.tile<16x128xf32, Vec> loc("sm.py":6:17)
        %e = "pl.tile.exp"(%t) : (!pl.tile<16x128xf32, Vec>) -> !pl.tile<16x128xf32, Vec> loc("sm.py":7:17)
        %0 = "pl.tile.store"(%e, %row, %c0, %out) : (!pl.tile<16x128xf32, Vec>, index, index, !pl.tensor<64x128xf32>) -> !pl.tensor<64x128xf32> loc("sm.py":8:13)
        scf.yield
      }
      %a = "pl.tensor.add"(%acc, %acc) : (!pl.tensor<16x128xf32>, !pl.tensor<16x128xf32>) -> !pl.tensor<16x128xf32> loc("sm.py":9:13)
      %acc2 = "pl.tensor.assemble"(%acc, %a, %c0, %c0) : (!pl.tensor<16x128xf32>, !pl.tensor<16x128xf32>, index, index) -> !pl.tensor<16x128xf32> loc("sm.py":9:9)
      "pl.yield"() : () -> ()
    }) : () -> () loc("sm.py":4:5)
    func.return %out : !pl.tensor<64x128xf32>
  }
}

// CHECK-LABEL: func.func @rows(
// CHECK-SAME:    %n{{[_0-9]*}}: index
// CHECK-SAME:    %x{{[_0-9]*}}: !pl.tensor<64x128xf32>
// CHECK-SAME:    %[[OUT:out[_0-9]*]]: !pl.tensor<64x128xf32> {pl.dir = #pl<dir Out>}
// CHECK-SAME:    %[[ACC:acc[_0-9]*]]: !pl.tensor<16x128xf32> {pl.dir = #pl<dir InOut>}
// CHECK-SAME:    -> (!pl.tensor<64x128xf32>, !pl.tensor<16x128xf32>)
// CHECK-SAME:    pl.func_type = #pl<func_type InCore>
// CHECK:         scf.for
// CHECK:           %out__store = "pl.tile.store"({{.*}}, %[[OUT]])
// CHECK:         "pl.tensor.assemble"(%[[ACC]],
// CHECK:         func.return %[[OUT]], %[[ACC]] : !pl.tensor<64x128xf32>, !pl.tensor<16x128xf32>
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    pl.func_type = #pl<func_type Orchestration>
// CHECK:         %[[R:out[_0-9]*]], %{{[a-z0-9_]+}} = func.call @rows(%n{{[_0-9]*}}, %x{{[_0-9]*}}, %out{{[_0-9]*}}, %acc{{[_0-9]*}})
// CHECK-NEXT:    func.return %[[R]] : !pl.tensor<64x128xf32>
