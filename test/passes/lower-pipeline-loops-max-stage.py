# RUN: pypto-opt %s -p lower-pipeline-loops 2>%t.err | filecheck %s
# RUN: filecheck %s --check-prefix=HINT < %t.err

# pl.pipeline(n, stage=100) with a dynamic bound and a body with no tiles:
# the tiles' capacity does not bound the depth, and each stage is a copy of the
# body (stage=2000 took 15 s to compile, 10**6 did not finish). At most
# MAX_STAGE = 64 copies, with perf hint PH-MR-001; the loop computes the same.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[128, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        n: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx() + 3
        j: pl.Scalar[pl.INDEX] = 0
        for i in pl.pipeline(n, stage=100):
            j = j + i
        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [j, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        out: pl.Tensor[[128, 64], pl.FP32] = pl.tile.store(t, [0, 0], out)
        return out


# CHECK-LABEL: def k(
# CHECK:         v0: pl.Scalar[pl.INDEX] = n // 64 * 64
# CHECK-NEXT:    for i, (j_1,) in pl.pipeline(0, v0, 64, stage=1, init_values=(j,)):
# CHECK-NEXT:        j_2: pl.Scalar[pl.INDEX] = j_1 + i
# CHECK:             j_65: pl.Scalar[pl.INDEX] = j_64 + (i + 63)
# CHECK-NEXT:        j_66: pl.Scalar[pl.INDEX] = pl.yield_(j_65)
# CHECK-NEXT:    for i_1 in pl.range(v0, n):

# HINT: lower-pipeline-loops-max-stage.py:18:9: remark: pl.pipeline asked for stage=100 but got stage=64: a pipeline is at most 64 copies of its body (one per stage); lower stage= to 64 [PipelineStageCapacity]
