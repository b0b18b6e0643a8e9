# RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s --check-prefix=OUTLINE
# RUN: pypto-opt %s -p outline-incore-scopes,convert-tensor-to-tile-ops | filecheck %s --check-prefix=TILE
# RUN: pypto-opt %s -p outline-incore-scopes,convert-tensor-to-tile-ops --emit=mlir | pypto-opt | filecheck %s --check-prefix=MLIR

# The registered passes run on DSL input: the CORE_GROUP scope is outlined
# into an InCore function, whose tensor ops become tile ops.

import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def add(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(out, pl.tensor.add(a, b), [0, 0])
        return out


# OUTLINE:      @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
# OUTLINE-NEXT: def add_incore_0(a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
# OUTLINE:      pl.tensor.add(a, b)
# OUTLINE:      def add(self,
# OUTLINE-NEXT: out: pl.Tensor[[128, 128], pl.FP32] = self.add_incore_0(a, b, out)

# TILE:      def add_incore_0(
# TILE-NEXT: a__tile: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Vec)
# TILE-NEXT: b__tile: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Vec)
# TILE-NEXT: t__tile: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(a__tile, b__tile)
# TILE-NEXT: pl.tile.store(t__tile, [0, 0], out)

# MLIR: func.func @add_incore_0(
# MLIR: "pl.tile.add"
# MLIR: func.call @add_incore_0(%a{{[_0-9]*}}, %b{{[_0-9]*}}, %out{{[_0-9]*}})
