# Perf hints are remarks: --verify-diagnostics checks them like any other
# diagnostic, so a test can pin that a kernel triggers (or stops triggering) one.
# RUN: pypto-opt %s -p lower-pipeline-loops --verify-diagnostics
# RUN: sed 's/asked for stage=4/asked for stage=3/' %s > %t.py
# RUN: not pypto-opt %t.py -p lower-pipeline-loops --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def big(self, x: pl.Tensor[[1024, 128], pl.FP32], out: pl.Out[pl.Tensor[[1024, 128], pl.FP32]]) -> pl.Tensor[[1024, 128], pl.FP32]:
        # expected-remark @+1 {{pl.pipeline asked for stage=4 but got stage=1}}
        for i in pl.pipeline(4, stage=4):
            t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 128, 0], [128, 128], [128, 128], target_memory=pl.Mem.Vec)
            e: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            out: pl.Tensor[[1024, 128], pl.FP32] = pl.tile.store(e, [i * 128, 0], out)
        return out

# WRONG: expected remark "pl.pipeline asked for stage=3 but got stage=1" was not produced
