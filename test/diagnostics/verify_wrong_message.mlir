// RUN: not pypto-opt --verify-diagnostics %s 2>&1 | filecheck %s

// The error is produced, but with another message: both the unexpected
// error and the unmatched expectation are reported.

builtin.module {
  func.func @f(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x64xf32>) {
    // CHECK-DAG: verify_wrong_message.mlir:[[# @LINE + 1]]:8: error: expected error "dtype mismatch" was not produced
    // expected-error @+1 {{dtype mismatch}}
    %c = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x64xf32>) -> !pl.tensor<128x128xf32>
    // CHECK-DAG: verify_wrong_message.mlir:[[# @LINE - 1]]:5: error: unexpected error: pl.tensor.add: operand shapes [128, 128] and [128, 64] do not broadcast
    func.return
  }
}
