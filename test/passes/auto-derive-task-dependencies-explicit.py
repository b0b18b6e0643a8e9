# RUN: pypto-opt %s -p auto-derive-task-dependencies --emit=mlir | filecheck %s

# deps= handles (pl.user_deps) become pl.explicit_deps, the tasks they name, which may be the
# call itself (a loop-carried task-id array: its instance of the previous iteration) or a later
# call; pl.task_deps keeps only earlier tasks. Under pl.manual_scope no data edge is derived:
# the second call's pl.task_deps holds only its explicit dependency on the first.

import pypto.language as pl


@pl.program
class Tasks:
    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def k(self, a: pl.Tensor[[64, 128], pl.FP32], o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        x: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(x, [0, 0], o)
        return o2

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.manual_scope():
            ids = pl.array.create(1, pl.TASK_ID)
            for _i, (prev,) in pl.range(2, init_values=(ids,)):
                nxt = pl.array.create(1, pl.TASK_ID)
                out, t = pl.submit(self.k, a, out, deps=[prev])
                nxt[0] = t
                out, u = pl.submit(self.k, a, out, deps=[t])
                ids = pl.yield_(nxt)
        return out


# CHECK-LABEL: func.func @main(
# CHECK:       func.call @k({{.*}}) {pl.manual_dep, pl.task_handle = "t", pl.user_deps = ["t"], pl.task_id = 0 : i64, pl.task_deps = [], pl.explicit_deps = [0 : i64]}
# CHECK:       func.call @k({{.*}}) {pl.manual_dep, pl.task_handle = "u", pl.user_deps = ["t"], pl.task_id = 1 : i64, pl.task_deps = [0 : i64], pl.explicit_deps = [0 : i64]}
