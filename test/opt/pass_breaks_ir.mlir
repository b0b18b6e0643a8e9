// RUN: pypto-opt --verify-diagnostics --load-pass-plugin %inputs/plugin_passes.py -p test-break-ir %s
// RUN: not pypto-opt --load-pass-plugin %inputs/plugin_passes.py -p test-break-ir %s 2>&1 | filecheck %s

// The IR is verified after every pass; a pass that breaks it is reported at
// the op that fails verification, naming the pass.

builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    // CHECK: pass_breaks_ir.mlir:[[# @LINE + 3]]:5: error: pl.tensor.add: result type pl.Tensor[[1, 1], pl.FP32] does not match
    // CHECK: note: the IR after pass 'test-break-ir' does not verify
    // expected-error @+1 {{does not match the inferred}}
    %0 = "pl.tensor.add"(%a, %a) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return
  }
}
