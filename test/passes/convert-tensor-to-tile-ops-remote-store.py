# RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

# pld.tensor.remote_store of a value computed on the core (pl.tensor.add: a tile after this pass)
# becomes pld.tile.remote_store of that tile, as upstream lowers it 1:1 (atomic kept); of a tensor
# parameter it stays (a GM-to-GM put).

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 64], pl.FP32], box: pld.DistributedTensor[[1, 64], pl.FP32],
          peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 64], pl.FP32]:
        s = pl.tensor.add(x, x)
        box = pld.tensor.remote_store(s, box, peer, [0, 0], atomic=pld.AtomicType.Add)
        box = pld.tensor.remote_store(x, box, peer, [0, 0])
        return box


# CHECK:      s__tile: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(x__tile, x__tile)
# CHECK-NEXT: box: pl.Tensor[[1, 64], pl.FP32] = pld.tile.remote_store(s__tile, box, peer, [0, 0], atomic=pl.AtomicType.Add)
# CHECK-NEXT: pld.tensor.remote_store(x, box, peer, [0, 0])
