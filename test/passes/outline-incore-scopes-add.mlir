// RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s

// One CORE_GROUP scope in an Opaque function: it becomes @add_incore_0
// (InCore), called from @add (now Orchestration). The Out param keeps its
// direction; the InCore function returns the Out param (upstream 09 dump) and
// the call result replaces the scope result.

builtin.module @add_prog {
  func.func @add(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x128xf32>, %out: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> {
    %r = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
      %c0 = arith.constant 0 : index
      %s = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32> loc("add.py":4:18)
      %out2 = "pl.tensor.assemble"(%out, %s, %c0, %c0) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32> loc("add.py":4:9)
      "pl.yield"(%out2) : (!pl.tensor<128x128xf32>) -> ()
    }) : () -> !pl.tensor<128x128xf32> loc("add.py":3:5)
    func.return %r : !pl.tensor<128x128xf32>
  }
}

// CHECK-LABEL: func.func @add_incore_0(
// CHECK-SAME:    %a{{[_0-9]*}}: !pl.tensor<128x128xf32>
// CHECK-SAME:    %b{{[_0-9]*}}: !pl.tensor<128x128xf32>
// CHECK-SAME:    %[[OUT:out[_0-9]*]]: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}
// CHECK-SAME:    -> !pl.tensor<128x128xf32>
// CHECK-SAME:    pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[S:.*]] = "pl.tensor.add"(%a{{[_0-9]*}}, %b{{[_0-9]*}})
// CHECK:         "pl.tensor.assemble"(%[[OUT]], %[[S]], %[[C0]], %[[C0]])
// CHECK:         func.return %[[OUT]] : !pl.tensor<128x128xf32>
// CHECK-LABEL: func.func @add(
// CHECK-SAME:    pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>
// CHECK-NOT:     "pl.at"
// CHECK:         %[[R:.*]] = func.call @add_incore_0(%{{.*}}, %{{.*}}, %{{.*}}) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
// CHECK-NEXT:    func.return %[[R]] : !pl.tensor<128x128xf32>
