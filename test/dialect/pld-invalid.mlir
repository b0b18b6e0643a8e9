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
    %s = "pld.system.wait"(%sig, %z) <{cmp = #pld<wait_cmp Ge>, operandSegmentSizes = array<i32: 1, 1, 0>}> : (!pl.tensor<2x1xi32>, index) -> !pl.tensor<2x1xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%data: !pl.tensor<1x64xf32>, %p: index) {
    %z = arith.constant 0 : index
    // expected-error @+1 {{shape [1, 128] must have the rank of 'target' [1, 64] and fit in it}}
    %t = "pld.tile.remote_load"(%data, %p, %z, %z) <{shape = array<i64: 1, 128>}> : (!pl.tensor<1x64xf32>, index, index, index) -> !pl.tile<1x128xf32, Vec>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%dst: !pl.tensor<1x64xf32>, %src: !pl.tensor<1x64xf16>, %p: index) {
    // expected-error @+1 {{operands 'dst' (pl.FP32) and 'src' (pl.FP16) must have one dtype}}
    %d = "pld.tensor.put"(%dst, %p, %src) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> : (!pl.tensor<1x64xf32>, index, !pl.tensor<1x64xf16>) -> !pl.tensor<1x64xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%in: !pl.tensor<4x64xf32>, %out: !pl.tensor<4x64xf32>, %sig: !pl.tensor<2x1xi32>, %sc: !pl.tensor<2x2xi32>, %rc: !pl.tensor<2x1xi32>) {
    // expected-error @+1 {{operand 'send_counts' must be INT32 [world_size] or [world_size, 1], got pl.INT32 [2, 2]}}
    %t = "pld.tensor.all_to_all_v"(%in, %out, %sig, %sc, %rc) : (!pl.tensor<4x64xf32>, !pl.tensor<4x64xf32>, !pl.tensor<2x1xi32>, !pl.tensor<2x2xi32>, !pl.tensor<2x1xi32>) -> !pl.tensor<4x64xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%box: !pl.tensor<2x64xf32>, %st: !pl.tile<4x64xf32, Vec>, %p: index) {
    // expected-error @+1 {{the staging tile 'stage' [4, 64] must fit in the transfer flattened to [rows, cols] = [2, 64]}}
    %b = "pld.tile.put"(%st, %box, %p, %box) <{operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 0, 0>}> : (!pl.tile<4x64xf32, Vec>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>) -> !pl.tensor<2x64xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%box: !pl.tensor<2x64xf32>, %st: !pl.tile<1x64xf32, Mat>, %p: index) {
    // expected-error @+1 {{the staging tile 'stage' must be a Vec tile (UB), got pl.Mem.Mat}}
    %b = "pld.tile.get"(%st, %box, %p, %box) <{operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 0, 0>}> : (!pl.tile<1x64xf32, Mat>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>) -> !pl.tensor<2x64xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%box: !pl.tensor<2x64xf32>, %st: !pl.tile<1x64xf16, Vec>, %p: index) {
    // expected-error @+1 {{the staging tile 'stage' (pl.FP16) must have the dtype of 'dst' (pl.FP32)}}
    %b = "pld.tile.put"(%st, %box, %p, %box) <{operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 0, 0>}> : (!pl.tile<1x64xf16, Vec>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>) -> !pl.tensor<2x64xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @f(%box: !pl.tensor<2x64xf32>, %st: !pl.tile<1x64xf32, Vec>, %st2: !pl.tile<1x32xf32, Vec>, %p: index) {
    // expected-error @+1 {{the ping-pong staging tiles must have one shape, got [1, 64] and [1, 32]}}
    %b = "pld.tile.put"(%st, %st2, %box, %p, %box) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (!pl.tile<1x64xf32, Vec>, !pl.tile<1x32xf32, Vec>, !pl.tensor<2x64xf32>, index, !pl.tensor<2x64xf32>) -> !pl.tensor<2x64xf32>
    func.return
  }
}
