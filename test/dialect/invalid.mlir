// RUN: pypto-opt --split-input-file --verify-diagnostics %s

// Op verifier errors, each located at the op's line in this file.

builtin.module {
  func.func @f(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x64xf32>) {
    // expected-error @+1 {{operand shapes [128, 128] and [128, 64] do not broadcast}}
    %c = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x64xf32>) -> !pl.tensor<128x128xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>, %b: !pl.tensor<16x16xf16>) {
    %c = "pl.tensor.mul"(%a, %b) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf16>) -> !pl.tensor<16x16xf32> // expected-error {{pl.tensor.mul}}
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    %c = "pl.tensor.exp"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<8x8xf32>
    // expected-error @-1 {{pl.tensor.exp}}
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> {
    // The builtin verifiers are located too.
    // expected-error @+1 {{Expected arguments to have the same types as the function output types}}
    func.return
  }
}
