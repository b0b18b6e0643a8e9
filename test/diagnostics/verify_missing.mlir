// RUN: not pypto-opt --verify-diagnostics %s 2>&1 | filecheck %s

// --verify-diagnostics fails when an expected diagnostic is not produced, or
// is produced with a different message or on a different line.

builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    // CHECK: verify_missing.mlir:[[# @LINE + 1]]:8: error: expected error "this op is fine" was not produced
    // expected-error @+1 {{this op is fine}}
    %c = "pl.tensor.exp"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return
  }
}
