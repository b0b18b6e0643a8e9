# RUN: pypto-opt %s -p lower-pipeline-loops 2>%t.err | filecheck %s
# RUN: filecheck %s --check-prefix=HINT < %t.err

# pl.pipeline(5, stage=2): a main loop stepping 2 whose body holds two clones
# (the second at i + 1, each defining its own tiles, the output tensor
# threaded through them), marked stage=1 for CanonicalizeIOOrder, and the 5th
# iteration as a straight-line tail. `big` asks for 4 stages of 128 KiB while
# Vec has 192 KiB: the depth drops to 1 with perf hint PH-MR-001.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[80, 128], pl.FP32], out: pl.Out[pl.Tensor[[80, 128], pl.FP32]]) -> pl.Tensor[[80, 128], pl.FP32]:
        for i in pl.pipeline(5, stage=2):
            t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
            e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            out: pl.Tensor[[80, 128], pl.FP32] = pl.tile.store(e, [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def big(self, x: pl.Tensor[[1024, 128], pl.FP32], out: pl.Out[pl.Tensor[[1024, 128], pl.FP32]]) -> pl.Tensor[[1024, 128], pl.FP32]:
        for i in pl.pipeline(4, stage=4):
            t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 128, 0], [128, 128], [128, 128], target_memory=pl.Mem.Vec)
            e: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            out: pl.Tensor[[1024, 128], pl.FP32] = pl.tile.store(e, [i * 128, 0], out)
        return out


# CHECK-LABEL: def big(
# CHECK:         for i in pl.pipeline(4, stage=1):
# CHECK-LABEL: def k(
# CHECK-NEXT:    for i in pl.pipeline(0, 4, 2, stage=1):
# CHECK-NEXT:        t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0],
# CHECK-NEXT:        e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
# CHECK-NEXT:        out_1: pl.Tensor[[80, 128], pl.FP32] = pl.tile.store(e, [i * 16, 0], out)
# CHECK-NEXT:        [[I1:v[0-9]+]]: pl.Scalar[pl.INDEX] = i + 1
# CHECK-NEXT:        t_1: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, {{\[}}[[I1]] * 16, 0],
# CHECK-NEXT:        e_1: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t_1)
# CHECK-NEXT:        out: pl.Tensor[[80, 128], pl.FP32] = pl.tile.store(e_1, {{\[}}[[I1]] * 16, 0], out_1)
# CHECK-NEXT:    t_2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [64, 0],
# CHECK-NEXT:    e_2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t_2)
# CHECK-NEXT:    out: pl.Tensor[[80, 128], pl.FP32] = pl.tile.store(e_2, [64, 0], out)
# CHECK-NEXT:    return out

# HINT: lower-pipeline-loops.py:25:9: remark: pl.pipeline asked for stage=4 but got stage=1: one stage holds 131072 B of Vec tiles and 196608 B of Vec are free (196608 B capacity); lower stage= to 1, or shrink the largest per-stage tile 't' (65536 B in Vec) [PipelineStageCapacity]
