// The a2a3 chip (Ascend 910B-class), as the simulated device sees it.
//
// Copy this file, edit the numbers and pass the copy to the run:
//     RunConfig(target="/path/to/my-chip.mlir")
// (docs/target.md). Each line states one fact; the comments give its source.
// "ref" = ../shared/reference/a2a3-costs.md (facts from hw-native-sys/pto-isa,
// include/pto/costmodel/...); "pto-dialect" = ../shared/reference/pto-dialect.md.
//
// Header: clock 1.85e9 Hz (ref §1, kMainFrequencyHz); DMA block and on-chip
// address alignment 32 B (ref §1, kBlockBytes).
npu.target @a2a3 clock_hz = 1.85e9 block_bytes = 32 {
  // 24 AI cores, each 1 AIC (cube side) + 2 AIV (vector side): 24 AIC + 48 AIV
  // (issue 6; ref §1 VEC_CORES_PER_AIC).
  npu.cores aic = 24 aiv_per_aic = 2
  // ASSUMPTION (no measured source): 0.4 us from dispatch to kernel start, the
  // dispatch->start gap of the example record in runtime-dfx-formats.md §2
  // (20 ticks of the 50 MHz system counter) = 740 core cycles.
  npu.dispatch_latency cycles = 740
  // The AICPU side (pypto/runtime/scheduler.py), in core cycles. ASSUMPTIONS (no measured
  // source; small against the 740-cycle dispatch->start above, so totals move little):
  // threads = 3 scheduler threads (upstream runs 4 AICPU threads, one of them the
  // orchestrator; RunConfig.aicpu_thread_num overrides); submit = 185 (0.1 us per task
  // submit); alloc = 92 (0.05 us per tensor.create the submitting task is first to use);
  // complete = 37 (20 ns per finished task a thread retires); release = 19 (10 ns per
  // fanout edge resolved); dispatch = 37 (20 ns per task, or SPMD block, popped and written to a
  // core); drain = 74 (40 ns: a pl.spmd(sync_start=True) launch first reserves the idle cores all
  // its blocks need, then publishes every block at once; twice a pop, as it scans the thread's cores).
  npu.aicpu threads = 3 submit = 185 alloc = 92 complete = 37 release = 19 dispatch = 37 drain = 74
  // 8 hardware event ids per (src, dst) pipe pair (ref §8; PTOAS kTotalEventIdNum).
  npu.events per_pipe_pair = 8

  // ---- pipes (ref §3 perf_sim stages; MTE2_AIV and MTE2_AIC are both "MTE2") ----
  npu.pipe "SCALAR" pto = "PIPE_S"
  npu.pipe "MTE2" pto = "PIPE_MTE2"
  npu.pipe "MTE1" pto = "PIPE_MTE1"
  npu.pipe "CUBE" pto = "PIPE_M"
  npu.pipe "FIXPIPE" pto = "PIPE_FIX"
  npu.pipe "VECTOR" pto = "PIPE_V"
  npu.pipe "MTE3" pto = "PIPE_MTE3"

  // ---- on-chip buffers, by pl memory space ----
  // UB 192 KiB, L1 512 KiB, L0A/L0B 64 KiB, L0C 128 KiB (ref §6, perf_sim defaults).
  // align: where plan-memory may place a tile, 512 B for L0A/L0B/L0C, else block_bytes
  // (pto-dialect §6, PTOAS PTOPlanMemory.cpp); the TASSIGN check of ptoas/include/pto_cpu.hpp.
  npu.buffer "Vec" bytes = 196608 hw = "UB"
  npu.buffer "Mat" bytes = 524288 hw = "L1"
  npu.buffer "Left" bytes = 65536 hw = "L0A" align = 512
  npu.buffer "Right" bytes = 65536 hw = "L0B" align = 512
  npu.buffer "Acc" bytes = 131072 hw = "L0C" align = 512
  // FALLBACKS: not in the cost model. Bias table and fixpipe (scaling) buffer use
  // PTOAS's a2a3 plan-memory sizes (pto-dialect §6).
  npu.buffer "Bias" bytes = 65536 hw = "BT"
  npu.buffer "Scaling" bytes = 196608 hw = "FB"
  // FALLBACKS: MX scale buffers do not exist on a2a3; 4 KiB is pto-isa's a5 CPU
  // model L0A/L0B_MX size (pto-dialect §6). ScalarLocal: no source, 16 KiB.
  npu.buffer "LeftScale" bytes = 4096 hw = "L0A_MX"
  npu.buffer "RightScale" bytes = 4096 hw = "L0B_MX"
  npu.buffer "ScalarLocal" bytes = 16384

  // ---- which pipe an instruction occupies (ref §3, cm/perf_sim/latency.hpp) ----
  // First matching row wins; src/dst are the tile spaces.
  npu.op_pipe "TLOAD" dst = "Vec" -> "MTE2"
  npu.op_pipe "TLOAD", "TPREFETCH" -> "MTE2"
  npu.op_pipe "TSTORE" src = "Acc" -> "FIXPIPE"
  npu.op_pipe "TSTORE" -> "MTE3"
  npu.op_pipe "TMOV", "TEXTRACT" src = "Acc" -> "FIXPIPE"
  npu.op_pipe "TINSERT" src = "Acc" -> "FIXPIPE"
  npu.op_pipe "TMOV", "TEXTRACT" src = "Mat" dst = "Vec" -> "MTE1"
  npu.op_pipe "TMOV", "TEXTRACT" dst = "Vec" -> "VECTOR"
  npu.op_pipe "TMOV", "TEXTRACT" src = "Vec" -> "MTE3"
  npu.op_pipe "TMOV", "TEXTRACT" -> "MTE1"
  npu.op_pipe "TTRANS", "TIMG2COL" -> "MTE1"
  npu.op_pipe "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS", "TGEMV*" -> "CUBE"
  npu.op_pipe "TSYNC", "TRESHAPE", "TASSIGN", "TPRINT", "TGET_SCALE_ADDR", "TSUBVIEW", "TALLOC", "TFREE", "TPUSH", "TPOP" -> "SCALAR"
  // The rest of PTOAS's ISA (issue 18): pipes as the dialect's op classes give them.
  npu.op_pipe "TGETVAL", "TSETVAL", "TSCATTER" -> "SCALAR"
  npu.op_pipe "MGATHER", "TGET_ASYNC" -> "MTE2"
  npu.op_pipe "MSCATTER", "TPUT_ASYNC" -> "MTE3"
  npu.op_pipe "TMOV_FP" -> "MTE1"
  npu.op_pipe "TSTORE_FP", "TEXTRACT_FP", "TINSERT_FP" -> "FIXPIPE"
  npu.op_pipe "TMATMUL_MX*" -> "CUBE"
  npu.op_pipe "*" -> "VECTOR"

  // ---- compute formula rows (ref §4): cycles = llround(slope * rows * cols + bias) ----
  // Verbatim cm/a2a3/formula_costmodel/formula_params.csv (274 rows). Picked by exact
  // (op, dtype, cols); "dtype = any cols = *" rows match anything else for that op.
  // TADDS
  npu.compute_cost "TADDS" dtype = fp32 cols = 32 slope = 0.0156 bias = 25
  npu.compute_cost "TADDS" dtype = fp32 cols = 48 slope = 0.0164 bias = 21
  npu.compute_cost "TADDS" dtype = fp32 cols = 64 slope = 0.0156 bias = 25
  npu.compute_cost "TADDS" dtype = fp32 cols = 80 slope = 0.0156 bias = 42
  npu.compute_cost "TADDS" dtype = fp32 cols = 96 slope = 0.0156 bias = 42
  npu.compute_cost "TADDS" dtype = fp32 cols = 112 slope = 0.0156 bias = 42
  npu.compute_cost "TADDS" dtype = fp32 cols = 128 slope = 0.0169 bias = 16.5
  npu.compute_cost "TADDS" dtype = fp32 cols = 176 slope = 0.0156 bias = 42
  npu.compute_cost "TADDS" dtype = fp32 cols = 336 slope = 0.0156 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 32 slope = 0.0078 bias = 25
  npu.compute_cost "TADDS" dtype = fp16 cols = 64 slope = 0.0078 bias = 25
  npu.compute_cost "TADDS" dtype = fp16 cols = 96 slope = 0.0078 bias = 25
  npu.compute_cost "TADDS" dtype = fp16 cols = 128 slope = 0.0078 bias = 25
  npu.compute_cost "TADDS" dtype = fp16 cols = 144 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 160 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 192 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 208 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 240 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 272 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 464 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 496 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 592 slope = 0.0078 bias = 42
  npu.compute_cost "TADDS" dtype = fp16 cols = 1008 slope = 0.0078 bias = 42
  // TCOLMAX
  npu.compute_cost "TCOLMAX" dtype = fp32 cols = 8 slope = 2.125 bias = 24
  npu.compute_cost "TCOLMAX" dtype = fp32 cols = 32 slope = 0.5391 bias = 16
  npu.compute_cost "TCOLMAX" dtype = fp32 cols = 64 slope = 0.2734 bias = 17
  npu.compute_cost "TCOLMAX" dtype = fp32 cols = 96 slope = 0.3646 bias = 2
  npu.compute_cost "TCOLMAX" dtype = fp32 cols = 128 slope = 0.1571 bias = 10
  npu.compute_cost "TCOLMAX" dtype = fp16 cols = 32 slope = 0.5352 bias = 16
  npu.compute_cost "TCOLMAX" dtype = fp16 cols = 64 slope = 0.2695 bias = 16
  npu.compute_cost "TCOLMAX" dtype = fp16 cols = 96 slope = 0.1836 bias = 19
  npu.compute_cost "TCOLMAX" dtype = fp16 cols = 128 slope = 0.1367 bias = 17
  npu.compute_cost "TCOLMAX" dtype = fp16 cols = 160 slope = 0.2187 bias = 2
  npu.compute_cost "TCOLMAX" dtype = fp16 cols = 192 slope = 0.1823 bias = 2.3325
  // TCOLSUM
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 8 slope = 2.375 bias = 29
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 16 slope = 1.1958 bias = 18.271
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 32 slope = 0.6016 bias = 15
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 64 slope = 0.3047 bias = 15
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 96 slope = 0.2187 bias = 14
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 128 slope = 0.1728 bias = 8
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 144 slope = 0.1578 bias = 27
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 176 slope = 0.1314 bias = 30
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 208 slope = 0.1166 bias = 36
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 240 slope = 0.1031 bias = 36
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 272 slope = 0.096 bias = 35
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 304 slope = 0.0876 bias = 35
  npu.compute_cost "TCOLSUM" dtype = fp32 cols = 336 slope = 0.0833 bias = 34
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 16 slope = 1.1916 bias = 20.664
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 32 slope = 0.5977 bias = 15
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 64 slope = 0.3008 bias = 15
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 96 slope = 0.2044 bias = 15
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 128 slope = 0.1523 bias = 15
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 160 slope = 0.1312 bias = 14
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 208 slope = 0.1029 bias = 25
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 240 slope = 0.09 bias = 28
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 272 slope = 0.0838 bias = 27
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 304 slope = 0.0755 bias = 30
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 336 slope = 0.069 bias = 30
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 368 slope = 0.069 bias = 30
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 400 slope = 0.0616 bias = 29
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 432 slope = 0.057 bias = 36
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 464 slope = 0.0536 bias = 36
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 496 slope = 0.0507 bias = 36
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 528 slope = 0.0498 bias = 35
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 560 slope = 0.0474 bias = 35
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 592 slope = 0.0453 bias = 35
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 624 slope = 0.0434 bias = 35
  npu.compute_cost "TCOLSUM" dtype = fp16 cols = 656 slope = 0.0431 bias = 34
  // TDIVS
  npu.compute_cost "TDIVS" dtype = fp32 cols = 32 slope = 0.0781 bias = 45
  npu.compute_cost "TDIVS" dtype = fp32 cols = 48 slope = 0.0792 bias = 40
  npu.compute_cost "TDIVS" dtype = fp32 cols = 64 slope = 0.0781 bias = 45
  npu.compute_cost "TDIVS" dtype = fp32 cols = 80 slope = 0.0781 bias = 62
  npu.compute_cost "TDIVS" dtype = fp32 cols = 96 slope = 0.0781 bias = 62
  npu.compute_cost "TDIVS" dtype = fp32 cols = 112 slope = 0.0781 bias = 62
  npu.compute_cost "TDIVS" dtype = fp32 cols = 128 slope = 0.0794 bias = 36.5
  npu.compute_cost "TDIVS" dtype = fp32 cols = 208 slope = 0.0781 bias = 62
  npu.compute_cost "TDIVS" dtype = fp32 cols = 304 slope = 0.0781 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 32 slope = 0.0703 bias = 45
  npu.compute_cost "TDIVS" dtype = fp16 cols = 64 slope = 0.0703 bias = 45
  npu.compute_cost "TDIVS" dtype = fp16 cols = 80 slope = 0.0709 bias = 38
  npu.compute_cost "TDIVS" dtype = fp16 cols = 96 slope = 0.0703 bias = 45
  npu.compute_cost "TDIVS" dtype = fp16 cols = 128 slope = 0.0703 bias = 45
  npu.compute_cost "TDIVS" dtype = fp16 cols = 144 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 160 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 192 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 208 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 240 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 272 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 336 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 528 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 656 slope = 0.0703 bias = 62
  npu.compute_cost "TDIVS" dtype = fp16 cols = 784 slope = 0.0703 bias = 62
  // TEXP
  npu.compute_cost "TEXP" dtype = any cols = * slope = 0.0314 bias = 30.1
  // TMINS
  npu.compute_cost "TMINS" dtype = fp32 cols = 32 slope = 0.0156 bias = 23
  npu.compute_cost "TMINS" dtype = fp32 cols = 64 slope = 0.0156 bias = 23
  npu.compute_cost "TMINS" dtype = fp32 cols = 96 slope = 0.0156 bias = 40
  npu.compute_cost "TMINS" dtype = fp32 cols = 128 slope = 0.0169 bias = 14.5
  npu.compute_cost "TMINS" dtype = fp32 cols = 144 slope = 0.0156 bias = 40
  npu.compute_cost "TMINS" dtype = fp16 cols = 32 slope = 0.0078 bias = 23
  npu.compute_cost "TMINS" dtype = fp16 cols = 64 slope = 0.0078 bias = 23
  npu.compute_cost "TMINS" dtype = fp16 cols = 96 slope = 0.0078 bias = 23
  npu.compute_cost "TMINS" dtype = fp16 cols = 128 slope = 0.0078 bias = 23
  npu.compute_cost "TMINS" dtype = fp16 cols = 160 slope = 0.0078 bias = 40
  npu.compute_cost "TMINS" dtype = fp16 cols = 192 slope = 0.0078 bias = 40
  // TMUL
  npu.compute_cost "TMUL" dtype = fp32 cols = 32 slope = 0.0625 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26
  npu.compute_cost "TMUL" dtype = fp32 cols = 80 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 96 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 112 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 128 slope = 0.0325 bias = 17.5
  npu.compute_cost "TMUL" dtype = fp32 cols = 144 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 176 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 208 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 240 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 272 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 304 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp32 cols = 336 slope = 0.0312 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 32 slope = 0.0625 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 64 slope = 0.0313 bias = 42
  npu.compute_cost "TMUL" dtype = fp16 cols = 80 slope = 0.025 bias = 42
  npu.compute_cost "TMUL" dtype = fp16 cols = 96 slope = 0.0208 bias = 42
  npu.compute_cost "TMUL" dtype = fp16 cols = 112 slope = 0.0179 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 128 slope = 0.0156 bias = 26
  npu.compute_cost "TMUL" dtype = fp16 cols = 144 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 160 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 176 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 208 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 240 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 272 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 304 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 336 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 368 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 400 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 432 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 464 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 496 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 528 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 560 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 592 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 624 slope = 0.0156 bias = 43
  npu.compute_cost "TMUL" dtype = fp16 cols = 656 slope = 0.0156 bias = 43
  // TMULS
  npu.compute_cost "TMULS" dtype = fp32 cols = 32 slope = 0.0156 bias = 26
  npu.compute_cost "TMULS" dtype = fp32 cols = 48 slope = 0.0164 bias = 21
  npu.compute_cost "TMULS" dtype = fp32 cols = 64 slope = 0.0156 bias = 26
  npu.compute_cost "TMULS" dtype = fp32 cols = 80 slope = 0.0156 bias = 43
  npu.compute_cost "TMULS" dtype = fp32 cols = 96 slope = 0.0156 bias = 43
  npu.compute_cost "TMULS" dtype = fp32 cols = 112 slope = 0.0156 bias = 43
  npu.compute_cost "TMULS" dtype = fp32 cols = 128 slope = 0.0169 bias = 17.5
  npu.compute_cost "TMULS" dtype = fp32 cols = 304 slope = 0.0156 bias = 43
  npu.compute_cost "TMULS" dtype = fp32 cols = 400 slope = 0.0156 bias = 43
  npu.compute_cost "TMULS" dtype = fp32 cols = 432 slope = 0.0156 bias = 43
  npu.compute_cost "TMULS" dtype = fp32 cols = 464 slope = 0.0156 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 32 slope = 0.0078 bias = 26
  npu.compute_cost "TMULS" dtype = fp16 cols = 64 slope = 0.0078 bias = 26
  npu.compute_cost "TMULS" dtype = fp16 cols = 96 slope = 0.0078 bias = 26
  npu.compute_cost "TMULS" dtype = fp16 cols = 112 slope = 0.0083 bias = 23
  npu.compute_cost "TMULS" dtype = fp16 cols = 128 slope = 0.0078 bias = 26
  npu.compute_cost "TMULS" dtype = fp16 cols = 160 slope = 0.0078 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 176 slope = 0.0078 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 192 slope = 0.0078 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 208 slope = 0.0078 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 240 slope = 0.0078 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 272 slope = 0.0078 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 432 slope = 0.0078 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 688 slope = 0.0079 bias = 43
  npu.compute_cost "TMULS" dtype = fp16 cols = 816 slope = 0.0079 bias = 43
  // TROWEXPAND
  npu.compute_cost "TROWEXPAND" dtype = fp32 cols = 8 slope = 1.7596 bias = 33.4
  npu.compute_cost "TROWEXPAND" dtype = fp32 cols = 32 slope = 0.4375 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp32 cols = 64 slope = 0.2187 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp32 cols = 96 slope = 0.1562 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp32 cols = 128 slope = 0.1176 bias = 34.5
  npu.compute_cost "TROWEXPAND" dtype = fp16 cols = 32 slope = 0.4375 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp16 cols = 64 slope = 0.2187 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp16 cols = 96 slope = 0.1458 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp16 cols = 128 slope = 0.1094 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp16 cols = 160 slope = 0.0937 bias = 37
  npu.compute_cost "TROWEXPAND" dtype = fp16 cols = 192 slope = 0.0781 bias = 37
  // TROWMAX
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 8 slope = 0.875 bias = 46
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 32 slope = 0.2188 bias = 47
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 64 slope = 0.1094 bias = 32
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 96 slope = 0.0937 bias = 61
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 128 slope = 0.0625 bias = 48
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 144 slope = 0.0692 bias = 77
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 176 slope = 0.0558 bias = 79
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 208 slope = 0.0517 bias = 100
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 240 slope = 0.0448 bias = 100
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 272 slope = 0.0485 bias = 98
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 304 slope = 0.0434 bias = 110
  npu.compute_cost "TROWMAX" dtype = fp32 cols = 336 slope = 0.0418 bias = 131
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 32 slope = 0.2187 bias = 48
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 64 slope = 0.1094 bias = 43
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 96 slope = 0.0729 bias = 43
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 128 slope = 0.0547 bias = 33
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 160 slope = 0.0562 bias = 62
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 208 slope = 0.0433 bias = 63
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 240 slope = 0.0388 bias = 62
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 272 slope = 0.0369 bias = 74
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 304 slope = 0.0323 bias = 80
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 336 slope = 0.0302 bias = 97
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 368 slope = 0.0276 bias = 93
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 400 slope = 0.0279 bias = 92
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 432 slope = 0.025 bias = 101
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 464 slope = 0.0232 bias = 119
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 496 slope = 0.0222 bias = 119
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 528 slope = 0.0254 bias = 111
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 560 slope = 0.0241 bias = 110
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 592 slope = 0.0232 bias = 127
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 624 slope = 0.022 bias = 127
  npu.compute_cost "TROWMAX" dtype = fp16 cols = 656 slope = 0.0224 bias = 125
  // TROWSUM
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 8 slope = 0.875 bias = 58
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 32 slope = 0.2187 bias = 59
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 64 slope = 0.1094 bias = 44
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 96 slope = 0.0938 bias = 75
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 128 slope = 0.0625 bias = 61.5
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 144 slope = 0.0698 bias = 92
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 176 slope = 0.0575 bias = 93
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 208 slope = 0.0535 bias = 99
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 240 slope = 0.0469 bias = 99
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 272 slope = 0.0484 bias = 104
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 304 slope = 0.0431 bias = 104
  npu.compute_cost "TROWSUM" dtype = fp32 cols = 336 slope = 0.0419 bias = 121
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 32 slope = 0.2188 bias = 62
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 64 slope = 0.1094 bias = 57
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 96 slope = 0.0729 bias = 57
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 128 slope = 0.0547 bias = 47
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 160 slope = 0.0563 bias = 78
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 208 slope = 0.0436 bias = 79
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 240 slope = 0.0391 bias = 79
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 272 slope = 0.0366 bias = 94
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 304 slope = 0.0323 bias = 102
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 336 slope = 0.0298 bias = 115
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 368 slope = 0.0272 bias = 111
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 400 slope = 0.0275 bias = 103
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 432 slope = 0.0255 bias = 103
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 464 slope = 0.0238 bias = 121
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 496 slope = 0.0229 bias = 121
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 528 slope = 0.0249 bias = 111
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 560 slope = 0.0234 bias = 106
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 592 slope = 0.0219 bias = 140
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 624 slope = 0.0208 bias = 140
  npu.compute_cost "TROWSUM" dtype = fp16 cols = 656 slope = 0.0213 bias = 126
  // TSQRT
  npu.compute_cost "TSQRT" dtype = any cols = * slope = 0.0314 bias = 31.1
  // TSUB
  npu.compute_cost "TSUB" dtype = fp32 cols = 32 slope = 0.0625 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 64 slope = 0.0313 bias = 25
  npu.compute_cost "TSUB" dtype = fp32 cols = 96 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 128 slope = 0.0325 bias = 16.5
  npu.compute_cost "TSUB" dtype = fp32 cols = 144 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 176 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 208 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 240 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 272 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 304 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp32 cols = 336 slope = 0.0312 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 32 slope = 0.0625 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 64 slope = 0.0312 bias = 41
  npu.compute_cost "TSUB" dtype = fp16 cols = 96 slope = 0.0208 bias = 41
  npu.compute_cost "TSUB" dtype = fp16 cols = 128 slope = 0.0156 bias = 25
  npu.compute_cost "TSUB" dtype = fp16 cols = 160 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 176 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 208 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 240 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 272 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 304 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 336 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 368 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 400 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 432 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 464 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 496 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 528 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 560 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 592 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 624 slope = 0.0156 bias = 42
  npu.compute_cost "TSUB" dtype = fp16 cols = 656 slope = 0.0156 bias = 42

  // ---- perf_sim fallback when no row gives > 0 cycles (ref §4, cm/perf_sim/costmodel_provider.hpp) ----
  // elems = rows * cols, integer maths. The pipe is perf_sim's static lookup (no tile
  // spaces), which puts TMOV and TEXTRACT on Vector: hence their op rows.
  npu.fallback op = "TDIVS" dtype = int16 cycles = 4
  npu.fallback op = "TDIVS" dtype = int32 cycles = 4
  npu.fallback op = "TMOV" cycles = 2 + elems / 32
  npu.fallback op = "TEXTRACT" cycles = 2 + elems / 32
  // The rest of PTOAS's ISA (issue 18): formula_params.csv has no row for any of these ops, so they
  // cost their pipe's row below, except where the op's work is not that of one vector pass:
  // TSCATTER on a2a3 is a scalar loop (pto-isa: one UB store per element), TGATHER gathers at half
  // the vector rate, TGETVAL/TSETVAL are one scalar access. (Estimates, not measurements: TFMOD(S),
  // TCOLPROD, TCOLARGMAX/MIN, TCONCAT, TCI, TTRI, TSELS, TFILLPAD_EXPAND/INPLACE use the VECTOR row.)
  npu.fallback op = "TSCATTER" cycles = 2 + elems / 1
  npu.fallback op = "TGATHER" cycles = 2 + elems / 16
  // TSORT32, TMRGSORT, TGATHERB are one vector intrinsic each, priced per REPEAT: for these three rows
  // `elems` is the instruction's repeat count, which the simulator computes
  // (pypto/device/interpreter/pto_impls.py, repeats()). head + slope * repeats from the a2a3 CCE
  // intrinsic costs (reference a2a3_cce_intrinsic_costs.csv; tail 0 for all three): vbitsort 6 / 2
  // (a repeat: 32 values -> 32 pairs, 256 B of dst), vmrgsort4 20 / 78 (repeat = bits [7:0] of its
  // config: format 1 one per group of 4 lists, format 2 one merge), vgatherb 6 / 2 (a repeat: 256 B,
  // 8 blocks of 32 B, of dst). Not from the table: the repeat granularity of vbitsort / vgatherb
  // (PTO-ISA's instructions; 256 B is the a2a3 vector repeat), and head is charged once per op where
  // the CCE mock charges it only when the VECTOR queue is empty.
  npu.fallback op = "TSORT32" cycles = 6 + 2 * elems / 1
  npu.fallback op = "TMRGSORT" cycles = 20 + 78 * elems / 1
  npu.fallback op = "TGATHERB" cycles = 6 + 2 * elems / 1
  // A5-only ops (issue 18; PTOAS verifies them on a5 only, the simulator runs them whatever the arch).
  // A5-only op, a2a3 fallback cost, assumption: THISTOGRAM is about 4 vector passes over its ui16
  // source (pto-isa A5: byte deinterleave, compare with idx, chistv2 count, interleaved bin store).
  npu.fallback op = "THISTOGRAM" cycles = 2 + elems / 8
  // A5-only op, a2a3 fallback cost, assumption: TPACK is one vector pass (a narrowing vector copy).
  npu.fallback op = "TPACK" cycles = 2 + elems / 32
  // A5-only op, a2a3 fallback cost, assumption: MGATHER / MSCATTER cost by index-tile / source
  // element: one small GM access of ~4 cycles each, as pto-isa's a2a3 form does a scalar GM<->UB copy
  // per element (element form) or one DMA per row (row form; its index tile has one element a row).
  npu.fallback op = "MGATHER" cycles = 3 + 4 * elems / 1
  npu.fallback op = "MSCATTER" cycles = 3 + 4 * elems / 1
  // A5-only op, a2a3 fallback cost, assumption: TRANDOM is ~90 vector instructions per 256 outputs
  // (10 Philox rounds of 2 vmull + 4 vxor + 2 vadds over 64 lanes, then 4 interleaves, 4 stores),
  // one cycle each; rounds = 7 is priced as 10.
  npu.fallback op = "TRANDOM" cycles = 2 + 90 * elems / 256
  // A5-only op, a2a3 fallback cost, assumption: TGET_SCALE_ADDR is one scalar shift of an address.
  npu.fallback op = "TGET_SCALE_ADDR" cycles = 1
  npu.fallback op = "TGETVAL" cycles = 1
  npu.fallback op = "TSETVAL" cycles = 1
  npu.fallback pipe = "SCALAR" cycles = 1
  npu.fallback pipe = "CUBE" cycles = 4 + elems / 16
  npu.fallback pipe = "MTE2" cycles = 3 + 2 * elems / 64
  npu.fallback pipe = "MTE3" cycles = 3 + 2 * elems / 64
  npu.fallback pipe = "FIXPIPE" cycles = 3 + 2 * elems / 64
  npu.fallback pipe = "MTE1" cycles = 1 + elems / 64
  npu.fallback pipe = "VECTOR" cycles = 2 + elems / 32

  // ---- matmul (ref §5, TryEstimateMadCycles) ----
  // cycles = head + per_fractal * ceil(m/16) * ceil(k/(32/sizeof(A))) * ceil(n/16);
  // per_fractal 2 when A is fp32, else 1 (the CCE mad has the same shape).
  npu.matmul_cost a_dtype = fp32 head = 6 per_fractal = 2 fractal_m = 16 fractal_k_bytes = 32 fractal_n = 16
  npu.matmul_cost a_dtype = any head = 6 per_fractal = 1 fractal_m = 16 fractal_k_bytes = 32 fractal_n = 16

  // ---- transfer bandwidths (ref §6, kA2A3ArchConfig in cm/arch_config.hpp; a2a3_bandwidth.csv) ----
  // cycles = trunc(bytes / 2^30 / gib_per_s * clock_hz) (CCE mock, EstimateBandwidthCycles).
  // hill_*: the optional fitted model bw(B) = peak * B / (k + B) (PTO_BW_MODE=fitted).
  npu.transfer "GM_TO_UB" gib_per_s = 100.9 hill_peak_gib_per_s = 247.16 hill_k_bytes = 30643
  npu.transfer "GM_TO_L1" gib_per_s = 135.0 hill_peak_gib_per_s = 28.61 hill_k_bytes = 1107
  npu.transfer "UB_TO_GM" gib_per_s = 188.46 hill_peak_gib_per_s = 28.19 hill_k_bytes = 1755
  npu.transfer "L1_TO_GM" gib_per_s = 32.0
  npu.transfer "UB_TO_UB" gib_per_s = 1024.0
  npu.transfer "L0C_TO_GM" gib_per_s = 70.0 hill_peak_gib_per_s = 41.25 hill_k_bytes = 29104
  npu.transfer "L0C_TO_L1" gib_per_s = 128.0
  npu.transfer "L1_TO_L0A" gib_per_s = 441.0
  npu.transfer "L1_TO_L0B" gib_per_s = 220.5
  npu.transfer "L1_TO_BT" gib_per_s = 32.0
  npu.transfer "L1_TO_FB" gib_per_s = 32.0
  npu.transfer "L1_FILL" gib_per_s = 32.0

  // ---- which bandwidth a move uses (ref §6, formula_backend_transfer.hpp) ----
  // The tile is dst for TLOAD/TMOV, src for TSTORE. TEXTRACT rows follow TMOV (it lowers
  // to the same copy intrinsics, e.g. load_cbuf_to_ca/cb for L1 -> L0A/L0B).
  npu.transfer_key "TLOAD" dst = "Vec" -> "GM_TO_UB"
  npu.transfer_key "TLOAD" dst = "Mat" -> "GM_TO_L1"
  npu.transfer_key "TSTORE" src = "Vec" -> "UB_TO_GM"
  npu.transfer_key "TSTORE" src = "Mat" -> "L1_TO_GM"
  npu.transfer_key "TSTORE" src = "Acc" -> "L0C_TO_GM"
  npu.transfer_key "TMOV", "TEXTRACT" dst = "Vec" -> "UB_TO_UB"
  npu.transfer_key "TMOV", "TEXTRACT" dst = "Mat" -> "L0C_TO_L1"
  npu.transfer_key "TMOV", "TEXTRACT" dst = "Left" -> "L1_TO_L0A"
  npu.transfer_key "TMOV", "TEXTRACT" dst = "Right" -> "L1_TO_L0B"
  npu.transfer_key "TMOV", "TEXTRACT" dst = "Bias" -> "L1_TO_BT"
  npu.transfer_key "TMOV", "TEXTRACT" dst = "Scaling" -> "L1_TO_FB"
  // TINSERT acc -> mat: the FIXPIPE write-back into L1 (converting FP32 -> FP16/BF16 on the way).
  npu.transfer_key "TINSERT" src = "Acc" dst = "Mat" -> "L0C_TO_L1"

  // ---- sync (ref §8) ----
  // perf_sim, whose queue model the interpreter follows: set_flag and wait_flag are 0-cycle SIGNAL / WAIT
  // entries and a barrier a 0-cycle entry. (The CCE mock, cce_costmodel_sync.hpp, charges 1 cycle for
  // each: set these to 1 for that view.)
  npu.sync_cost "set_flag", "wait_flag", "pipe_barrier" cycles = 0
  // CCE mock only (perf_sim has no entry for them): 1 cycle each
  npu.sync_cost "ffts_cross_core_sync", "wait_flag_dev", "dsb" cycles = 1

  // ---- chip-to-chip link (multi-chip runs, pypto.runtime.distributed) ----
  // ASSUMPTION from the public Atlas 800T A2 (910B) spec, no measured source: HCCS
  // full mesh of 8 chips, 392 GB/s per chip over 7 peer links = 56 GB/s per link and
  // direction; 2 us per hop (software + link latency) = 3700 core cycles at 1.85 GHz.
  // A hop of n bytes: latency + ceil(n / bandwidth * clock); a read is a request then the data (latency +
  // hop). ASSUMPTION, no measured source (pypto/device/interpreter/comm_impls.py): in a kernel a transfer
  // occupies the link only for its bytes; each MTE pipe's DMA keeps several transfers in flight, delivered in
  // order, so back-to-back transfers overlap their latency and a notify issued after a put lands after it.
  npu.link gb_per_s = 56 latency_cycles = 3700
}
