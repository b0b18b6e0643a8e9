# RUN: pypto-opt %s -p unroll-loops | filecheck %s
# RUN: pypto-opt %s -p unroll-loops,simplify | filecheck %s --check-prefix=FOLD

# UnrollLoops replaces a pl.unroll loop (literal bounds) by one copy of its body
# per iteration: the index becomes the literal, a carried value flows from one
# copy to the next, the loop's result is the last copy's value. pl.range loops
# are left alone. Simplify then folds the index arithmetic.

import pypto.language as pl


@pl.program
class U:
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, x: pl.Tensor[[96, 128], pl.FP32], o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        for i in pl.unroll(0, 48, 16):
            t = pl.load(x, [i * 2, 0], [16, 128])
            o = pl.store(t, [i, 0], o)
        for j in pl.range(2):
            t = pl.load(x, [j, 0], [16, 128])
        return o


# CHECK-NOT:  pl.unroll
# CHECK:      t: {{.*}} = pl.tile.load(x, [0 * 2, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
# CHECK-NEXT: o: {{.*}} = pl.tile.store(t, [0, 0], o)
# CHECK-NEXT: t_1: {{.*}} = pl.tile.load(x, [16 * 2, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
# CHECK-NEXT: o: {{.*}} = pl.tile.store(t_1, [16, 0], o)
# CHECK-NEXT: t_2: {{.*}} = pl.tile.load(x, [32 * 2, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
# CHECK-NEXT: o: {{.*}} = pl.tile.store(t_2, [32, 0], o)
# CHECK-NEXT: for j in pl.range(2):
# CHECK:      return o

# FOLD:      pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
# FOLD:      pl.tile.load(x, [32, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
# FOLD:      pl.tile.load(x, [64, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
