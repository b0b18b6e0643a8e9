"""InferTileMemorySpace: every tile ends up in the memory space its consumers need.

What upstream PyPTO's pass 18 does (``18_after_InferTileMemorySpace`` of the
matmul_k build): a tile matmul reads its operands from L0A / L0B, so a
``pl.tile.matmul`` / ``pl.tile.matmul_acc`` operand that lives in Mat (L1) gets a
``pl.tile.move`` to Left (lhs) or Right (rhs), inserted right before its first
consumer and named ``<src>_Left`` / ``<src>_Right``; later consumers the move
dominates reuse it.

In this IR every tile type already carries a space (the front end and
ConvertTensorToTileOps choose Vec / Mat / Acc), so the "inference" half of the
upstream pass is the type system itself; what remains is inserting the moves
the cube unit needs. Only InCore-like functions (InCore, AIC, AIV) are
rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from pypto.core.analysis.functions import INCORE_KINDS
from pypto.dialects.enums import MemorySpace, enum_attr
from pypto.dialects.tile_ops import TileMatmulAccOp, TileMatmulOp, TileMoveOp
from pypto.dialects.types import TileType

from .base import FunctionPass, NameGen
from .registry import register_pass

# op class -> (operand index, the space the cube unit reads that operand from).
_CUBE_OPERANDS: dict[type[Operation], tuple[tuple[int, MemorySpace], ...]] = {
    TileMatmulOp: ((0, MemorySpace.Left), (1, MemorySpace.Right)),
    TileMatmulAccOp: ((1, MemorySpace.Left), (2, MemorySpace.Right)),
}


def _dominates(move: Operation, user: Operation) -> bool:
    """Whether ``move``'s result is visible at ``user`` (same block, earlier,
    or in an enclosing block)."""
    block = move.parent_block()
    assert block is not None
    op: Operation | None = user
    while op is not None:
        if op.parent_block() is block:
            return block.get_operation_index(move) < block.get_operation_index(op)
        op = op.parent_op()
    return False


class _MoveInserter:
    """Inserts the Mat -> Left/Right moves of one function."""

    def __init__(self, f: func.FuncOp):
        self.names = NameGen.for_function(f)
        self.moves: dict[tuple[SSAValue, MemorySpace], list[TileMoveOp]] = {}

    def move_for(self, value: SSAValue, space: MemorySpace, user: Operation) -> SSAValue:
        for move in self.moves.get((value, space), []):
            if _dominates(move, user):
                return move.result
        move = TileMoveOp.build_from_args({"tile": value}, {"target_memory": enum_attr(space)})
        assert isinstance(move, TileMoveOp)
        move.location = user.location
        move.result.name_hint = self.names.fresh(f"{value.name_hint or 't'}_{space.value}")
        block = user.parent_block()
        assert block is not None
        block.insert_op_before(move, user)
        self.moves.setdefault((value, space), []).append(move)
        return move.result

    def run_block(self, block: Block) -> None:
        for op in list(block.ops):
            for region in op.regions:
                for inner in region.blocks:
                    self.run_block(inner)
            spec = _CUBE_OPERANDS.get(type(op))
            if spec is None:
                continue
            for index, space in spec:
                value = op.operands[index]
                t = value.type
                if isinstance(t, TileType) and t.memory_space is MemorySpace.Mat:
                    op.operands[index] = self.move_for(value, space, op)


def infer_function(f: func.FuncOp) -> None:
    """Insert the operand moves the cube ops of ``f`` need."""
    inserter = _MoveInserter(f)
    for block in f.body.blocks:
        inserter.run_block(block)


@register_pass
@dataclass(frozen=True)
class InferTileMemorySpace(FunctionPass):
    """Matmul operands in Mat get ``pl.tile.move`` to Left / Right."""

    FUNCTION_TYPES = INCORE_KINDS

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        infer_function(f)
