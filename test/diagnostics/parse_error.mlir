// RUN: not pypto-opt %s 2>&1 | filecheck %s
// RUN: not pypto-opt --split-input-file %s 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: pypto-opt --split-input-file --verify-diagnostics %s

// A syntax error is one located diagnostic (file:line:col, the line, a
// caret), exit 1, no traceback; with --split-input-file the line is that of
// the whole file and the other chunks are still processed.

// CHECK: parse_error.mlir:[[# @LINE + 9]]:10: error: Operation pl.tensor.frobnicate is not registered
// CHECK-NEXT: {{ *}}[[# @LINE + 8]] |     %0 = "pl.tensor.frobnicate"(%a)
// CHECK-NEXT: {{ *}}|          ^~~~~~~~~~~~~~~~~~~~~~{{$}}
// CHECK-NOT: Traceback

// SPLIT: parse_error.mlir:[[# @LINE + 4]]:10: error: Operation pl.tensor.frobnicate is not registered
// SPLIT: builtin.module @fine
builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    %0 = "pl.tensor.frobnicate"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> // expected-error {{Operation pl.tensor.frobnicate is not registered}}
    func.return
  }
}

// -----

builtin.module @fine {
  func.func @g(%a: !pl.tensor<16x16xf32>) {
    // expected-error @+1 {{Expected shape type}}
    %0 = "pl.tensor.exp"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16x>
    func.return
  }
}

// -----

builtin.module @fine {
}
