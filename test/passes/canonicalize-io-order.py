# RUN: pypto-opt %s -p canonicalize-io-order | filecheck %s
# RUN: pypto-opt %s -p lower-pipeline-loops,canonicalize-io-order | filecheck %s --check-prefix=CHAIN

# In a pipeline loop (the stage=1 marker LowerPipelineLoops leaves), the body
# is reordered scalar -> loads -> compute -> stores, dependencies kept, and the
# loop becomes a plain pl.range. Loops that are not pipelines keep their order.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        for i in pl.pipeline(4, stage=2):
            t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
            e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            out: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(e, [i * 16, 0], out)
        for j in pl.range(4):
            u: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [j * 16, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
            out: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(u, [j * 16, 0], out)
            w: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
            out: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(w, [0, 0], out)
        return out


# CHECK-NOT:  pl.pipeline
# CHECK:      for i in pl.range(4):
# CHECK-NEXT:     v0: pl.Scalar[pl.INDEX] = i * 16
# CHECK-NEXT:     v1: pl.Scalar[pl.INDEX] = i * 16
# CHECK-NEXT:     t: pl.Tile
# CHECK-NEXT:     e: pl.Tile
# CHECK-NEXT:     out: pl.Tensor
# CHECK:      for j in pl.range(4):
# CHECK-NEXT:     u: pl.Tile
# CHECK-NEXT:     out_1: pl.Tensor
# CHECK-NEXT:     w: pl.Tile
# CHECK-NEXT:     out: pl.Tensor

# CHAIN-NOT:  pl.pipeline
# CHAIN:      for i in pl.range(0, 4, 2):
# CHAIN:          t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(
# CHAIN-NEXT:     t_1: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(
# CHAIN-NEXT:     e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
# CHAIN-NEXT:     e_1: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t_1)
# CHAIN-NEXT:     out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(e,
# CHAIN-NEXT:     out: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(e_1, {{.*}}, out_1)
