// RUN: not pypto-opt --verify-diagnostics %s 2>&1 | filecheck %s

// The right message on the wrong line does not count.

builtin.module {
  func.func @f(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x64xf32>) {
    // expected-error @+3 {{do not broadcast}}
    // CHECK-DAG: error: expected error "do not broadcast" was not produced
    %c = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x64xf32>) -> !pl.tensor<128x128xf32>
    // CHECK-DAG: verify_wrong_line.mlir:[[# @LINE - 1]]:5: error: unexpected error: pl.tensor.add: operand shapes
    func.return
  }
}
