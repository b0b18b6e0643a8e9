// RUN: pypto-opt %shared/reference/upstream-builds/softmax_rows/passes_dump/34_after_MemoryReuse.py -p allocate-memory-addr | filecheck %s
// RUN: pypto-opt %shared/reference/upstream-builds/add/passes_dump/34_after_MemoryReuse.py -p allocate-memory-addr | filecheck %s --check-prefix=ADD

// Sequential 32-byte-aligned addresses per space, in alloc order; a MemRef's
// offset is its buffer's address (upstream's 35 dumps).

// CHECK:       t__ssa_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2, pl.const(0, pl.INT64), 8192)
// CHECK-NEXT:  tmp__ssa_v0: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_3, pl.const(8192, pl.INT64), 8192)
// CHECK-NEXT:  mx__ssa_v0: pl.Tile[[16, 1], pl.FP32, pl.MemRef(mem_vec_4, pl.const(16384, pl.INT64), 64)
// CHECK:       s__ssa_v0: pl.Tile[[16, 1], pl.FP32, pl.MemRef(mem_vec_4, pl.const(16384, pl.INT64), 64)

// ADD:       a__tile: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_vec_3, pl.const(0, pl.INT64), 65536)
// ADD-NEXT:  b__tile: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_vec_4, pl.const(65536, pl.INT64), 65536)
