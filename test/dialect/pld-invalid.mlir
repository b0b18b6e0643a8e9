// RUN: pypto-opt --split-input-file --verify-diagnostics %s

// pld op verifier errors, each located at the op's line in this file.

builtin.module {
  func.func @f(%data: !pl.tensor<1x256xf32>, %sig: !pl.tensor<2x1xi32>) {
    // expected-error @+1 {{mode=ring requires core_num == 1, got 4}}
    %d = "pld.tensor.allreduce"(%data, %sig) <{op = #pld<reduce_op Sum>, mode = #pld<mode ring>, core_num = 4 : i64}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%sig: !pl.tensor<2x1xf32>) {
    // expected-error @+1 {{operand 'signal' must be an INT32 signal tensor, got pl.FP32}}
    %s = "pld.tensor.barrier"(%sig) : (!pl.tensor<2x1xf32>) -> !pl.tensor<2x1xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%sig: !pl.tensor<2x1xi32>) {
    %z = arith.constant 0 : index
    // expected-error @+1 {{'offsets' has 1 indices, expected 2 (the signal's rank)}}
    %s = "pld.system.wait"(%sig, %z) <{expected = 1 : i64, cmp = #pld<wait_cmp Ge>}> : (!pl.tensor<2x1xi32>, index) -> !pl.tensor<2x1xi32>
    func.return
  }
}
