# RUN: pypto-opt %s -p materialize-semantic-aliases | filecheck %s
# RUN: pypto-opt %s -p materialize-semantic-aliases,materialize-semantic-aliases | filecheck %s

# MaterializeSemanticAliases: an in-place result shares its source's buffer.
# Here matmul_acc's result was given a buffer of its own (mem_acc_8): it is
# moved onto the accumulator's mem_acc_7 and the unused alloc disappears; the
# store's result names the output tensor's buffer, not a DDR buffer of its own.

# ruff: noqa: F841  (a DSL program: stores are kept for their effect, as in upstream dumps)
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIC, level=pl.Level.AIC, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[128, 128], pl.FP16, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 32768)], c: pl.Out[pl.Tensor[[128, 128], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 65536)]]) -> pl.Tensor[[128, 128], pl.FP32]:
    mem_mat_2: pl.Ptr = pl.tile.alloc(pl.Mem.Mat, 32768)
    mem_left_3: pl.Ptr = pl.tile.alloc(pl.Mem.Left, 32768)
    mem_right_4: pl.Ptr = pl.tile.alloc(pl.Mem.Right, 32768)
    mem_acc_7: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 65536)
    mem_acc_8: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 65536)
    t: pl.Tile[[128, 128], pl.FP16, pl.MemRef(mem_mat_2, pl.const(0, pl.INT64), 32768), pl.Mem.Mat] = pl.tile.load(a, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
    l: pl.Tile[[128, 128], pl.FP16, pl.MemRef(mem_left_3, pl.const(0, pl.INT64), 32768), pl.Mem.Left] = pl.tile.move(t, target_memory=pl.Mem.Left)
    r: pl.Tile[[128, 128], pl.FP16, pl.MemRef(mem_right_4, pl.const(0, pl.INT64), 32768), pl.Mem.Right] = pl.tile.move(t, target_memory=pl.Mem.Right)
    acc: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_acc_7, pl.const(0, pl.INT64), 65536), pl.Mem.Acc] = pl.tile.matmul(l, r)
    acc2: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_acc_8, pl.const(0, pl.INT64), 65536), pl.Mem.Acc] = pl.tile.matmul_acc(acc, l, r)
    c2: pl.Tensor[[128, 128], pl.FP32, pl.MemRef("mem_ddr_9", pl.const(0, pl.INT64), 65536)] = pl.tile.store(acc2, [0, 0], c)
    return c


# CHECK:      mem_acc_7: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 65536)
# CHECK-NOT:  mem_acc_8
# CHECK:      acc2: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_acc_7, pl.const(0, pl.INT64), 65536), pl.Mem.Acc] = pl.tile.matmul_acc(acc, l, r)
# CHECK-NEXT: c2: pl.Tensor[[128, 128], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 65536)] = pl.tile.store(acc2, [0, 0], c)
