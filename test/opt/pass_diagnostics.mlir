// RUN: pypto-opt --split-input-file --verify-diagnostics --load-pass-plugin %inputs/plugin_passes.py -p test-remark-ops %s

// Warnings and remarks emitted by passes (pypto.diagnostics.emit) are checked
// by --verify-diagnostics like errors. Line numbers are those of the whole
// file, whichever chunk the op is in.

builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    // expected-warning @+2 {{first pl.tensor.add}}
    // expected-remark @+1 {{saw pl.tensor.add}}
    %0 = "pl.tensor.add"(%a, %a) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    %1 = "pl.tensor.add"(%0, %a) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> // expected-remark {{saw pl.tensor.add}}
    func.return
  }
}

// -----

builtin.module {
  func.func @g(%a: !pl.tensor<16x16xf32>) {
    %0 = "pl.tensor.add"(%a, %a) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    // expected-warning @-1 {{first pl.tensor.add}}
    // expected-remark @-2 {{saw pl.tensor.add}}
    func.return
  }
}

