# RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

# pl.matmul(a, b, a_trans=True / b_trans=True) on tensors: each transposed operand is loaded into Mat in its
# natural orientation and read through a zero-copy pl.tile.transpose_view, as upstream lowers it (q @ k.T of
# attention). It stopped with "b_trans=True is not supported by ConvertTensorToTileOps yet".

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def qk(self, q: pl.Tensor[[32, 64], pl.FP16], k: pl.Tensor[[48, 64], pl.FP16],
           out: pl.Out[pl.Tensor[[32, 48], pl.FP32]]) -> pl.Tensor[[32, 48], pl.FP32]:
        out = pl.assemble(out, pl.matmul(q, k, out_dtype=pl.FP32, b_trans=True), [0, 0])
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def at_bt(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[48, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 48], pl.FP32]]) -> pl.Tensor[[32, 48], pl.FP32]:
        out = pl.assemble(out, pl.matmul(a, b, a_trans=True, b_trans=True), [0, 0])
        return out


# CHECK-LABEL: def at_bt(
# CHECK:         [[LA:a[a-z_0-9]*]]: pl.Tile{{\[\[}}64, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 32], [64, 32], target_memory=pl.Mem.Mat)
# CHECK:         [[LB:b[a-z_0-9]*]]: pl.Tile{{\[\[}}48, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [48, 64], [48, 64], target_memory=pl.Mem.Mat)
# CHECK:         [[VA:a[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 64], pl.FP32, pl.Mem.Mat, pl.TileView({{.*}} = pl.tile.transpose_view([[LA]])
# CHECK-NEXT:    [[VB:b[a-z_0-9]*]]: pl.Tile{{\[\[}}64, 48], pl.FP32, pl.Mem.Mat, pl.TileView({{.*}} = pl.tile.transpose_view([[LB]])
# CHECK-NEXT:    {{[a-z_0-9]+}}: pl.Tile{{\[\[}}32, 48], pl.FP32, pl.Mem.Acc] = pl.tile.matmul([[VA]], [[VB]])
# CHECK-NOT:     pl.tensor.matmul

# CHECK-LABEL: def qk(
# CHECK:         [[Q:q[a-z_0-9]*]]: pl.Tile{{\[\[}}32, 64], pl.FP16, pl.Mem.Mat] = pl.tile.load(q,
# CHECK:         [[K:k[a-z_0-9]*]]: pl.Tile{{\[\[}}48, 64], pl.FP16, pl.Mem.Mat] = pl.tile.load(k,
# CHECK:         [[KT:k[a-z_0-9]*]]: pl.Tile{{\[\[}}64, 48], pl.FP16, pl.Mem.Mat, pl.TileView({{.*}} = pl.tile.transpose_view([[K]])
# CHECK-NEXT:    {{[a-z_0-9]+}}: pl.Tile{{\[\[}}32, 48], pl.FP32, pl.Mem.Acc] = pl.tile.matmul([[Q]], [[KT]])
