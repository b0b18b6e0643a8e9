# RUN: pypto-opt %s -p init-memref --emit mlir | filecheck %s

# Two parameters of a kernel that the caller passes views of one buffer (two
# slices of x, as upstream's qwen3 decode passes rope_cos[.., 0:64] and
# rope_cos[.., 64:128]): both parameters take the caller's name. The parameter
# already named like it (lo, mem_ddr_0 in both functions) stays; it used to be
# moved aside as a "callee-local buffer", then renamed back, round after round,
# and the call failed verification (operand type mismatch).

import pypto.language as pl


@pl.program
class TwoSlices:
    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def k(self, lo: pl.Tensor[[32, 128], pl.FP32], hi: pl.Tensor[[32, 128], pl.FP32], o: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        a: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(lo, [0, 0], [32, 128], [32, 128], target_memory=pl.Mem.Vec)
        b: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(hi, [0, 0], [32, 128], [32, 128], target_memory=pl.Mem.Vec)
        c: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, b)
        o2: pl.Tensor[[32, 128], pl.FP32] = pl.tile.store(c, [0, 0], o)
        return o2

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        lo: pl.Tensor[[32, 128], pl.FP32] = x[0:32, 0:128]
        hi: pl.Tensor[[32, 128], pl.FP32] = x[32:64, 0:128]
        r: pl.Tensor[[32, 128], pl.FP32] = self.k(lo, hi, out)
        return r


# CHECK-LABEL: func.func @k(
# CHECK-SAME:    %lo: !pl.tensor<32x128xf32, memref<"mem_ddr_0", 0, 16384>>
# CHECK-SAME:    %hi: !pl.tensor<32x128xf32, memref<"mem_ddr_0", 0, 16384>>
# CHECK-SAME:    %o: !pl.tensor<32x128xf32, memref<"mem_ddr_1", 0, 16384>>
# CHECK-LABEL: func.func @main(
# CHECK:         "pl.tensor.slice"({{.*}} -> !pl.tensor<32x128xf32, memref<"mem_ddr_0", 0, 16384>>
# CHECK:         "pl.tensor.slice"({{.*}} -> !pl.tensor<32x128xf32, memref<"mem_ddr_0", 0, 16384>>
# CHECK:         func.call @k({{.*}}) : (!pl.tensor<32x128xf32, memref<"mem_ddr_0", 0, 16384>>, !pl.tensor<32x128xf32, memref<"mem_ddr_0", 0, 16384>>, !pl.tensor<32x128xf32, memref<"mem_ddr_1", 0, 16384>>) -> !pl.tensor<32x128xf32, memref<"mem_ddr_1", 0, 16384>>
