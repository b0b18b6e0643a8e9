# RUN: not pypto-opt %s -p init-memref,materialize-semantic-aliases,memory-reuse,allocate-memory-addr 2>&1 | filecheck %s

# A tile larger than its memory space is a user error located at the op that
# defines it, naming the tile, its bytes, the space and the space's capacity.

# ruff: noqa: F841  (a DSL program: stores are kept for their effect, as in upstream dumps)
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[256, 256], pl.FP32], o: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
    big: pl.Tile[[256, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [256, 256], [256, 256], target_memory=pl.Mem.Vec)
    o2: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store(big, [0, 0], o)
    return o


# CHECK: allocate-memory-addr-overflow.py:12:{{[0-9]+}}: error: tile 'big' needs 262144 bytes of Vec at address 0, which exceeds platform limit: Vec capacity is 196608 bytes on a2a3
# CHECK: big: pl.Tile
