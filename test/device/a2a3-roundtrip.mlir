// RUN: python -m pypto.device %s | filecheck %s
// RUN: python -m pypto.device %s | python -m pypto.device - | filecheck %s
// RUN: python -m pypto.device a2a3 | python -m pypto.device - | filecheck %s --check-prefix=A2A3
// RUN: echo 'npu.target @bad clock_hz = 1.0 block_bytes = 32 { npu.cores aic = 0 aiv_per_aic = 2 }' | not python -m pypto.device - 2>&1 | filecheck %s --check-prefix=ERR

// The npu dialect's custom syntax round-trips (print -> parse -> print is stable),
// on a small target using every op and on the packaged a2a3 description.

npu.target @tiny clock_hz = 1.0e9 block_bytes = 32 attributes {note = "a test chip"} {
  npu.cores aic = 2 aiv_per_aic = 2
  npu.dispatch_latency cycles = 100
  npu.aicpu threads = 2 submit = 10 alloc = 5 complete = 3 release = 2 dispatch = 4
  npu.events per_pipe_pair = 8
  npu.pipe "MTE2" pto = "PIPE_MTE2"
  npu.pipe "VECTOR" pto = "PIPE_V"
  npu.buffer "Vec" bytes = 1024 hw = "UB"
  npu.buffer "Bias" bytes = 64 align = 64
  npu.op_pipe "TLOAD" dst = "Vec" -> "MTE2"
  npu.op_pipe "TMOV", "TGEMV*" src = "Vec" dst = "Vec" -> "VECTOR" {note = "rule"}
  npu.op_pipe "*" -> "VECTOR"
  npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26
  npu.compute_cost "TEXP" dtype = any cols = * slope = 0.0314 bias = 30.1
  npu.matmul_cost a_dtype = any head = 6 per_fractal = 1 fractal_m = 16 fractal_k_bytes = 32 fractal_n = 16
  npu.transfer "GM_TO_UB" gib_per_s = 100.9 hill_peak_gib_per_s = 247.16 hill_k_bytes = 30643
  npu.transfer "UB_TO_UB" gib_per_s = 1024.0
  npu.transfer_key "TLOAD" dst = "Vec" -> "GM_TO_UB"
  npu.fallback op = "TDIVS" dtype = int16 cycles = 4
  npu.fallback pipe = "MTE2" cycles = 3 + 2 * elems / 64
  npu.fallback pipe = "VECTOR" cycles = 2 + elems / 32
  npu.sync_cost "set_flag", "wait_flag" cycles = 1
}

// CHECK:      npu.target @tiny clock_hz = 1.0e9 block_bytes = 32 attributes {note = "a test chip"} {
// CHECK-NEXT:   npu.cores aic = 2 aiv_per_aic = 2
// CHECK-NEXT:   npu.dispatch_latency cycles = 100
// CHECK-NEXT:   npu.aicpu threads = 2 submit = 10 alloc = 5 complete = 3 release = 2 dispatch = 4
// CHECK-NEXT:   npu.events per_pipe_pair = 8
// CHECK-NEXT:   npu.pipe "MTE2" pto = "PIPE_MTE2"
// CHECK-NEXT:   npu.pipe "VECTOR" pto = "PIPE_V"
// CHECK-NEXT:   npu.buffer "Vec" bytes = 1024 hw = "UB"
// CHECK-NEXT:   npu.buffer "Bias" bytes = 64 align = 64
// CHECK-NEXT:   npu.op_pipe "TLOAD" dst = "Vec" -> "MTE2"
// CHECK-NEXT:   npu.op_pipe "TMOV", "TGEMV*" src = "Vec" dst = "Vec" -> "VECTOR" {note = "rule"}
// CHECK-NEXT:   npu.op_pipe "*" -> "VECTOR"
// CHECK-NEXT:   npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26
// CHECK-NEXT:   npu.compute_cost "TEXP" dtype = any cols = * slope = 0.0314 bias = 30.1
// CHECK-NEXT:   npu.matmul_cost a_dtype = any head = 6 per_fractal = 1 fractal_m = 16 fractal_k_bytes = 32 fractal_n = 16
// CHECK-NEXT:   npu.transfer "GM_TO_UB" gib_per_s = 100.9 hill_peak_gib_per_s = 247.16 hill_k_bytes = 30643
// CHECK-NEXT:   npu.transfer "UB_TO_UB" gib_per_s = 1024
// CHECK-NEXT:   npu.transfer_key "TLOAD" dst = "Vec" -> "GM_TO_UB"
// CHECK-NEXT:   npu.fallback op = "TDIVS" dtype = int16 cycles = 4
// CHECK-NEXT:   npu.fallback pipe = "MTE2" cycles = 3 + 2 * elems / 64
// CHECK-NEXT:   npu.fallback pipe = "VECTOR" cycles = 2 + elems / 32
// CHECK-NEXT:   npu.sync_cost "set_flag", "wait_flag" cycles = 1
// CHECK-NEXT: }

// A2A3:      npu.target @a2a3 clock_hz = 1.85e9 block_bytes = 32 {
// A2A3-NEXT:   npu.cores aic = 24 aiv_per_aic = 2
// A2A3-NEXT:   npu.dispatch_latency cycles = 740
// A2A3-NEXT:   npu.aicpu threads = 3 submit = 185 alloc = 92 complete = 37 release = 19 dispatch = 37
// A2A3:        npu.buffer "Vec" bytes = 196608 hw = "UB"
// A2A3-NEXT:   npu.buffer "Mat" bytes = 524288 hw = "L1"
// A2A3-NEXT:   npu.buffer "Left" bytes = 65536 hw = "L0A" align = 512
// A2A3-NEXT:   npu.buffer "Right" bytes = 65536 hw = "L0B" align = 512
// A2A3-NEXT:   npu.buffer "Acc" bytes = 131072 hw = "L0C" align = 512
// A2A3:        npu.op_pipe "TLOAD" dst = "Vec" -> "MTE2"
// A2A3:        npu.compute_cost "TADDS" dtype = fp32 cols = 32 slope = 0.0156 bias = 25
// A2A3:        npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26
// A2A3:        npu.fallback pipe = "VECTOR" cycles = 2 + elems / 32
// A2A3:        npu.matmul_cost a_dtype = fp32 head = 6 per_fractal = 2
// A2A3:        npu.transfer "GM_TO_UB" gib_per_s = 100.9 hill_peak_gib_per_s = 247.16 hill_k_bytes = 30643
// A2A3:        npu.transfer_key "TSTORE" src = "Acc" -> "L0C_TO_GM"
// A2A3:        npu.sync_cost "set_flag", "wait_flag", "pipe_barrier"

// ERR: error: <stdin>: npu.cores: field 'aic' must be positive, got 0
