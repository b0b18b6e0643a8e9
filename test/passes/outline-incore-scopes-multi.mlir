// RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s

// Two CORE_GROUP scopes in one Orchestration function become @orch_incore_0
// and @orch_incore_1 (in order); a scope of another level stays (it is left
// for OutlineHierarchyScopes). Scalars are passed; constants are cloned in.

builtin.module @multi {
  func.func @orch(%a: !pl.tensor<16x16xf32>, %o1: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}, %o2: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}, %s: f32) -> (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
    %c0 = arith.constant 0 : index
    %r1 = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
      %m = "pl.tensor.muls"(%a, %s) : (!pl.tensor<16x16xf32>, f32) -> !pl.tensor<16x16xf32>
      %w = "pl.tensor.assemble"(%o1, %m, %c0, %c0) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, index, index) -> !pl.tensor<16x16xf32>
      "pl.yield"(%w) : (!pl.tensor<16x16xf32>) -> ()
    }) : () -> !pl.tensor<16x16xf32>
    %r2 = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
      %e = "pl.tensor.exp"(%r1) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
      %w = "pl.tensor.assemble"(%o2, %e, %c0, %c0) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, index, index) -> !pl.tensor<16x16xf32>
      "pl.yield"(%w) : (!pl.tensor<16x16xf32>) -> ()
    }) : () -> !pl.tensor<16x16xf32>
    "pl.at"() <{level = #pl<level HOST>}> ({
      "pl.yield"() : () -> ()
    }) : () -> ()
    func.return %r1, %r2 : !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>
  }
}

// CHECK-LABEL: func.func @orch_incore_0(
// CHECK-SAME:    %a{{[_0-9]*}}: !pl.tensor<16x16xf32>
// CHECK-SAME:    %s{{[_0-9]*}}: f32
// CHECK-SAME:    %[[O1:o1[_0-9]*]]: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}
// CHECK:         arith.constant 0 : index
// CHECK:         "pl.tensor.muls"
// CHECK:         func.return %[[O1]]
// CHECK-LABEL: func.func @orch_incore_1(
// CHECK-SAME:    %{{[a-z0-9_]+}}: !pl.tensor<16x16xf32>
// CHECK-SAME:    %[[O2:o2[_0-9]*]]: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}
// CHECK:         "pl.tensor.exp"
// CHECK:         func.return %[[O2]]
// CHECK-LABEL: func.func @orch(
// CHECK:         %[[R1:.*]] = func.call @orch_incore_0(
// CHECK:         %[[R2:.*]] = func.call @orch_incore_1(%[[R1]],
// CHECK:         "pl.at"() <{level = #pl<level HOST>}>
// CHECK:         func.return %[[R1]], %[[R2]]
