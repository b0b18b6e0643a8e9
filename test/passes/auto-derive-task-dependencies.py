# RUN: pypto-opt %s -p init-memref,derive-call-directions,auto-derive-task-dependencies --emit=mlir | filecheck %s
# RUN: pypto-opt %s -p auto-derive-task-dependencies --emit=mlir | filecheck %s

# In an Orchestration function each kernel call is a task, numbered in
# program order (pl.task_id); pl.task_deps lists the earlier tasks it waits
# for: k2 reads the tensor k1 wrote (t1), so task 1 depends on task 0; the
# second k1 (task 2) overwrites t, which task 0 wrote (write after write).

# ruff: noqa: F841  (a DSL program: stores are kept for their effect, as in upstream dumps)
import pypto.language as pl


@pl.program
class Tasks:
    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def k1(self, a: pl.Tensor[[64, 128], pl.FP32], o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        x: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(x, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def k2(self, a: pl.Tensor[[64, 128], pl.FP32], o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        x: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        y: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x)
        o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(y, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        t: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.create([64, 128], dtype=pl.FP32)
        t1: pl.Tensor[[64, 128], pl.FP32] = self.k1(a, t)
        r: pl.Tensor[[64, 128], pl.FP32] = self.k2(t1, out)
        t2: pl.Tensor[[64, 128], pl.FP32] = self.k1(a, t)
        return r


# CHECK-LABEL: func.func @main(
# CHECK:       func.call @k1({{.*}}) {{{.*}}pl.task_id = 0 : i64, pl.task_deps = []}
# CHECK:       func.call @k2({{.*}}) {{{.*}}pl.task_id = 1 : i64, pl.task_deps = [0 : i64]}
# CHECK:       func.call @k1({{.*}}) {{{.*}}pl.task_id = 2 : i64, pl.task_deps = [0 : i64, 1 : i64]}
