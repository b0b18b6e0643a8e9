// RUN: pypto-opt %s -p normalize-return-order | filecheck %s

// A kernel returning its outputs out of Out-parameter order (o2's store first)
// is normalised to (o1, o2); the caller's results follow, so it still returns
// the same values.

builtin.module @p {
  func.func @k(%a: !pl.tensor<16x16xf32>, %o1: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}, %o2: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}) -> (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) attributes {pl.func_type = #pl<func_type AIV>, pl.level = #pl<level AIV>, pl.role = #pl<role SubWorker>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %t = "pl.tile.load"(%a, %c0, %c0, %c16, %c16) <{shapes = array<i64: 16, 16>, target_memory = #pl<mem Vec>, operandSegmentSizes = array<i32: 1, 2, 2>}> : (!pl.tensor<16x16xf32>, index, index, index, index) -> !pl.tile<16x16xf32, Vec>
    %e = "pl.tile.exp"(%t) : (!pl.tile<16x16xf32, Vec>) -> !pl.tile<16x16xf32, Vec>
    %s1 = "pl.tile.store"(%t, %c0, %c0, %o1) : (!pl.tile<16x16xf32, Vec>, index, index, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    %s2 = "pl.tile.store"(%e, %c0, %c0, %o2) : (!pl.tile<16x16xf32, Vec>, index, index, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return %s2, %s1 : !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>
  }
  func.func @main(%a: !pl.tensor<16x16xf32>, %o1: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}, %o2: !pl.tensor<16x16xf32> {pl.dir = #pl<dir Out>}) -> (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
    %r2, %r1 = func.call @k(%a, %o1, %o2) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>)
    func.return %r2, %r1 : !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>
  }
}

// CHECK-LABEL: func.func @k(
// CHECK:         %s1 = "pl.tile.store"(%t,
// CHECK:         %s2 = "pl.tile.store"(%e,
// CHECK-NEXT:    func.return %s1, %s2 : !pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %r1, %r2 = func.call @k(
// CHECK-NEXT:    func.return %r2, %r1
