// RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s

// Task options go from the scope to its call: no_dep_args= (outer tensor base
// names) becomes the argument positions pl.no_dep_indices; pl.manual_dep
// (pl.manual_scope), pl.allow_early_resolve, the task handle and deps= are
// copied as they are.

builtin.module @opts {
  func.func @orch(%a: !pl.tensor<16x16xf32>, %out: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}, %o2: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}) -> (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
    %c0 = arith.constant 0 : index
    %r1 = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
      %w = "pl.tensor.assemble"(%out, %a, %c0, %c0) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, index, index) -> !pl.tensor<16x16xf32>
      "pl.yield"(%w) : (!pl.tensor<16x16xf32>) -> ()
    }) {pl.no_dep_args = ["out"], pl.task_handle = "first", pl.allow_early_resolve} : () -> !pl.tensor<16x16xf32>
    %r2 = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
      %w = "pl.tensor.assemble"(%o2, %a, %c0, %c0) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, index, index) -> !pl.tensor<16x16xf32>
      "pl.yield"(%w) : (!pl.tensor<16x16xf32>) -> ()
    }) {pl.manual_dep, pl.user_deps = ["first"]} : () -> !pl.tensor<16x16xf32>
    func.return %r1, %r2 : !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>
  }
}

// CHECK-LABEL: func.func @orch(
// CHECK:         func.call @orch_incore_0(%out{{[_0-9]*}}, %a{{[_0-9]*}}) {pl.task_handle = "first", pl.no_dep_indices = [0 : i64], pl.allow_early_resolve}
// CHECK:         func.call @orch_incore_1({{.*}}) {pl.user_deps = ["first"], pl.manual_dep}
