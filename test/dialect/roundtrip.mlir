// RUN: pypto-opt %s | filecheck %s
// RUN: pypto-opt %s | pypto-opt | filecheck %s

// A program (functions with pl attributes, Out parameters, tensor ops, a
// loop) prints back in the same form and is a fixed point.

// CHECK-LABEL: builtin.module @prog {
// CHECK-NEXT:    func.func @add(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x128xf32>, %out: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
// CHECK-NEXT:      %[[T:.+]] = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
// CHECK-NEXT:      %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT:      %out_1 = "pl.tensor.assemble"(%out, %[[T]], %[[Z]], %[[Z]]) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32>
// CHECK-NEXT:      func.return %out_1 : !pl.tensor<128x128xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @k(%x: !pl.tensor<64x128xf32>) attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
// CHECK:           scf.for %i = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:             %[[O:.+]] = arith.muli %i, %{{.+}} : index
// CHECK-NEXT:        %xt = "pl.tile.load"(%x, %[[O]], {{.+}}) <{shapes = array<i64: 16, 16>, target_memory = #pl<mem Vec>, operandSegmentSizes = array<i32: 1, 2, 2>}> : (!pl.tensor<64x128xf32>, index, index, index, index) -> !pl.tile<16x16xf32, Vec>
// CHECK-NEXT:      }
// CHECK-NEXT:      func.return
// CHECK-NEXT:    }
// CHECK-NEXT:  }

builtin.module @prog {
  func.func @add(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x128xf32>, %out: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
    %0 = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
    %1 = arith.constant 0 : index
    %out_1 = "pl.tensor.assemble"(%out, %0, %1, %1) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32>
    func.return %out_1 : !pl.tensor<128x128xf32>
  }
  func.func @k(%x: !pl.tensor<64x128xf32>) attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
    %2 = arith.constant 0 : index
    %3 = arith.constant 4 : index
    %4 = arith.constant 1 : index
    scf.for %i = %2 to %3 step %4 {
      %5 = arith.constant 16 : index
      %6 = arith.muli %i, %5 : index
      %xt = "pl.tile.load"(%x, %6, %2, %5, %5) <{shapes = array<i64: 16, 16>, target_memory = #pl<mem Vec>, operandSegmentSizes = array<i32: 1, 2, 2>}> : (!pl.tensor<64x128xf32>, index, index, index, index) -> !pl.tile<16x16xf32, Vec>
    }
    func.return
  }
}
