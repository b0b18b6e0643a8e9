"""ResolveBackendOpLayouts (pass 20): element-wise ops whose backend needs
row_major tiles get row_major tiles.

A ``[N, 1]`` Vec tile (a row reduction's result, or a reshape to a column) is
col_major (DN) by default; the ops whose class states ``ROW_MAJOR``
(:func:`pypto.dialects.op_facts.needs_row_major`: ``add``, ``mul``, ``sqrt``,
``muls``, ...; upstream's backend layout spec) need row_major operands and
result. As upstream does, such a column vector is reshaped (a zero-copy view:
the N elements are contiguous either way) to the row vector ``[1, N]``::

    s = pl.tile.sqrt(v)          # v, s: [16, 1] col_major

becomes::

    s__rm_a0_tmp_v0 = pl.tile.reshape(v, [1, 16])
    s__row_major_tmp_v1 = pl.tile.sqrt(s__rm_a0_tmp_v0)
    s = pl.tile.reshape(s__row_major_tmp_v1, [16, 1])

Other col_major tiles (upstream moves them with ``tile.move(blayout=row_major)``)
are left alone: none of our front end's element-wise operands is one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from pypto.core.analysis.functions import INCORE_KINDS
from pypto.core.analysis.memref import set_type
from pypto.dialects import op_families as F
from pypto.dialects.enums import TileLayout
from pypto.dialects.op_facts import needs_row_major
from pypto.dialects.tile_ops import TileReshapeOp
from pypto.dialects.types import TileType

from .base import FunctionPass, base_name
from .registry import register_pass


def _column_vector(t: object) -> bool:
    """A ``[N, 1]`` col_major tile."""
    return (
        isinstance(t, TileType)
        and len(t.get_shape()) == 2
        and t.get_shape()[1] == 1
        and t.effective_view().blayout.data == TileLayout.col_major
    )


@dataclass
class _Names:
    """upstream's auto names: ``<base>__<qualifier>_tmp_v<n>``, one counter per function."""

    n: int = 0

    def next(self, hint: str | None, qualifier: str) -> str:
        name = f"{base_name(hint).split('__')[0]}__{qualifier}_tmp_v{self.n}"
        self.n += 1
        return name


def _reshape(value: SSAValue, shape: tuple[int, ...], at: Operation, name: str) -> TileReshapeOp:
    op = TileReshapeOp.build_from_args({"input": value}, {"shape": F.INTS.to_attr(list(shape))})
    assert isinstance(op, TileReshapeOp)
    op.location = at.location
    op.result.name_hint = name
    return op


def repair(op: Operation, names: _Names) -> bool:
    """Reshape ``op``'s column-vector operands and result to row vectors; whether it changed."""
    result = op.results[0] if len(op.results) == 1 else None
    fix_out = result is not None and _column_vector(result.type)
    fix_in = [i for i, v in enumerate(op.operands) if _column_vector(v.type)]
    if not fix_in and not fix_out:
        return False
    block = op.parent_block()
    assert block is not None
    hint = result.name_hint if result is not None else "layout_fix"
    for i in fix_in:
        v = op.operands[i]
        assert isinstance(v.type, TileType)
        (n, _) = v.type.get_shape()
        r = _reshape(v, (1, n), op, names.next(hint, f"rm_a{i}"))
        block.insert_op_before(r, op)
        op.operands[i] = r.result
    if fix_out:
        assert result is not None and isinstance(result.type, TileType)
        shape = result.type.get_shape()
        name = result.name_hint
        set_type(result, result.type.with_(shape=(1, shape[0]), view=None))
        result.name_hint = names.next(hint, "row_major")
        back = _reshape(result, shape, op, name or names.next(hint, "tmp"))
        block.insert_op_after(back, op)
        result.replace_all_uses_with(back.result)
        back.operands[0] = result  # the reshape itself reads the row vector
    return True


@register_pass
@dataclass(frozen=True)
class ResolveBackendOpLayouts(FunctionPass):
    """Column-vector operands/results of row_major-only ops -> row vectors (reshape views)."""

    FUNCTION_TYPES = INCORE_KINDS

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        names = _Names()
        for op in [o for o in f.body.walk() if needs_row_major(o)]:
            repair(op, names)
