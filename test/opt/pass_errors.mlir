// RUN: pypto-opt --split-input-file --verify-diagnostics --load-pass-plugin %inputs/plugin_passes.py -p 'test-error-at{op="pl.tensor.exp"}' %s
// RUN: not pypto-opt --split-input-file --load-pass-plugin %inputs/plugin_passes.py -p 'test-error-at{op="pl.tensor.exp"}' %s 2>&1 | filecheck %s

// A pass error (pypto.diagnostics.DiagnosticError) is one located diagnostic;
// with --split-input-file the other chunks are still processed.

// CHECK: pass_errors.mlir:[[# @LINE + 6]]:5: error: test error at pl.tensor.exp
// CHECK-NEXT: {{ *}}[[# @LINE + 5]] |     %0 = "pl.tensor.exp"(%a)
// CHECK-NEXT: {{ *}}|     ^
// CHECK-NEXT: hint: this pass always fails
builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    %0 = "pl.tensor.exp"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> // expected-error {{test error at pl.tensor.exp}}
    func.return
  }
}

// -----

// CHECK: builtin.module @ok
builtin.module @ok {
  func.func @g(%a: !pl.tensor<16x16xf32>) {
    func.return
  }
}
// CHECK-NOT: Traceback
