// RUN: pypto-opt --split-input-file %s | filecheck %s
// RUN: pypto-opt --split-input-file --print-debuginfo %s | filecheck %s --check-prefix=LOC

// Each chunk is parsed, verified and printed on its own; the outputs are
// separated by `// -----`. Locations are lines of the whole file.

// CHECK:      builtin.module @one {
// CHECK:      {{^}}}
// CHECK-NEXT: // -----
// CHECK-NEXT: builtin.module @two {
// CHECK:        "pl.tensor.exp"
// CHECK:      }
// CHECK-NOT:  // -----

// LOC: "pl.tensor.neg"{{.*}} loc("{{.*}}split_input_file.mlir":[[# @LINE + 5]]:5)
// LOC: "pl.tensor.exp"{{.*}} loc("{{.*}}split_input_file.mlir":[[# @LINE + 13]]:5)

builtin.module @one {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    %0 = "pl.tensor.neg"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return
  }
}

// -----

builtin.module @two {
  func.func @g(%a: !pl.tensor<16x16xf32>) {
    %0 = "pl.tensor.exp"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return
  }
}
