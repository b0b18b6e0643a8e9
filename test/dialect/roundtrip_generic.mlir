// RUN: pypto-opt --print-op-generic %s | filecheck %s --check-prefix=GENERIC
// RUN: pypto-opt --print-op-generic %s | pypto-opt | filecheck %s
// RUN: pypto-opt --print-op-generic %s | pypto-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

// The generic form (the one upstream MLIR parses) reads back to the same IR.

// GENERIC:      "builtin.module"() <{sym_name = "g"}> ({
// GENERIC-NEXT:   "func.func"() <{sym_name = "f", function_type = (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>, arg_attrs = [{}, {pl.dir = #pl<dir InOut>}]}> ({
// GENERIC-NEXT:   ^bb0(%a: !pl.tensor<16x16xf32>, %acc: !pl.tensor<16x16xf32>):
// GENERIC-NEXT:     %s = "pl.tensor.mul"(%a, %acc) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
// GENERIC-NEXT:     "func.return"(%s) : (!pl.tensor<16x16xf32>) -> ()
// GENERIC-NEXT:   }) {pl.func_type = #pl<func_type InCore>} : () -> ()
// GENERIC-NEXT: }) : () -> ()

// CHECK:      builtin.module @g {
// CHECK-NEXT:   func.func @f(%a: !pl.tensor<16x16xf32>, %acc: !pl.tensor<16x16xf32> {pl.dir = #pl<dir InOut>}) -> !pl.tensor<16x16xf32> attributes {pl.func_type = #pl<func_type InCore>} {
// CHECK-NEXT:     %s = "pl.tensor.mul"(%a, %acc) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
// CHECK-NEXT:     func.return %s : !pl.tensor<16x16xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

builtin.module @g {
  func.func @f(%a: !pl.tensor<16x16xf32>, %acc: !pl.tensor<16x16xf32> {pl.dir = #pl<dir InOut>}) -> !pl.tensor<16x16xf32> attributes {pl.func_type = #pl<func_type InCore>} {
    %s = "pl.tensor.mul"(%a, %acc) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return %s : !pl.tensor<16x16xf32>
  }
}
