// RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s

// A name_hint already taken is disambiguated as upstream does: a hint naming
// another function (here the parent itself) is namespaced under the parent
// (@orch_orch); a hint an earlier scope of the same parent took gets the
// smallest free numeric suffix (@stage, then @stage_0).

builtin.module @hints {
  func.func @orch(%a: !pl.tensor<16x16xf32>, %o1: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}, %o2: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}, %o3: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}) -> (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
    %c0 = arith.constant 0 : index
    %r1 = "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "orch"}> ({
      %w = "pl.tensor.assemble"(%o1, %a, %c0, %c0) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, index, index) -> !pl.tensor<16x16xf32>
      "pl.yield"(%w) : (!pl.tensor<16x16xf32>) -> ()
    }) : () -> !pl.tensor<16x16xf32>
    %r2 = "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "stage"}> ({
      %w = "pl.tensor.assemble"(%o2, %a, %c0, %c0) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, index, index) -> !pl.tensor<16x16xf32>
      "pl.yield"(%w) : (!pl.tensor<16x16xf32>) -> ()
    }) : () -> !pl.tensor<16x16xf32>
    %r3 = "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "stage"}> ({
      %w = "pl.tensor.assemble"(%o3, %a, %c0, %c0) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, index, index) -> !pl.tensor<16x16xf32>
      "pl.yield"(%w) : (!pl.tensor<16x16xf32>) -> ()
    }) : () -> !pl.tensor<16x16xf32>
    func.return %r1, %r2, %r3 : !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>
  }
}

// CHECK: func.func @orch_orch(
// CHECK: func.func @stage(
// CHECK: func.func @stage_0(
// CHECK: func.func @orch(
// CHECK: func.call @orch_orch(
// CHECK: func.call @stage(
// CHECK: func.call @stage_0(
