# RUN: not pypto-opt %s -p outline-incore-scopes 2>&1 | filecheck %s

# A tile computed inside a CORE_GROUP scope and used after it: the outlined
# kernel's call is a task whose results are the tensors it writes, so the tile
# cannot reach the code after the scope. A located error at the tile's
# definition, naming it, as for a scalar (was KernelCodegenError in
# ConvertTensorToTileOps, after every earlier pass had run).

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, a: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [32, 64])
            out = pl.store(t, [0, 0], out)
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(t, [32, 0], out)
        return out


# CHECK: outline-incore-scopes-tile-result.py:17:17: error: 't' is a pl.Tile[[32, 64], pl.FP32{{.*}}] computed inside the pl.at(level=pl.Level.CORE_GROUP) scope and used after it: a kernel gives back only the tensors it writes
# CHECK: hint: store 't' into a tensor inside the scope (out = pl.store(t, offsets, out)) and read that tensor after it
