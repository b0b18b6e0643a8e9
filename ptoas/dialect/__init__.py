"""The ``pto`` dialect in xDSL: PTOAS's types, attributes and op subset (pto-dialect.md).

``PTO`` is the dialect object; :func:`pypto.ptoas.context.make_pto_context` loads
it with builtin, func, arith, scf and memref, and :mod:`pypto.ptoas.pto_text`
reads and writes ``.pto`` text.

Modules: ``attrs`` (enums and attributes), ``types`` (ptr, views, tile_buf),
``base`` (operand views, diagnostics, the ``ins/outs`` syntax), ``view_ops``,
``tile_ops`` (alloc, DMA, moves, cube), ``vector_ops``, ``sync_ops``, ``misc_ops``,
``pipe_ops`` (cube<->vector tpush/tpop/tfree), ``isa_tile_ops`` / ``isa_misc_ops`` /
``isa_attrs`` (the rest of PTOAS's ISA; ``comm_ops``: the cross-rank ``pto.comm.*`` ops; ``isa_status`` lists every op and its simulator status).
Every op class has ``pipe()``: the hardware pipe it runs on (None for non-pipe ops).
"""

from xdsl.ir import Dialect

from .attrs import PTO_ATTRS
from .base import DpsOp, PTOOp, Tile, target_arch, tile_of
from .comm_ops import COMM_ATTRS, COMM_OPS
from .isa_attrs import ISA_ATTRS, ISA_TYPES
from .isa_misc_ops import ISA_MISC_OPS
from .isa_tile_ops import ISA_TILE_OPS
from .misc_ops import MISC_OPS
from .pipe_ops import PIPE_OPS
from .sync_ops import SYNC_OPS
from .tile_ops import TILE_OPS
from .types import PTO_TYPES, PartitionTensorViewType, PtrType, TensorViewType, TileBufType, TileSpec
from .vector_ops import VECTOR_OPS
from .view_ops import VIEW_OPS

PTO_OPS = (*VIEW_OPS, *TILE_OPS, *VECTOR_OPS, *SYNC_OPS, *MISC_OPS, *PIPE_OPS, *ISA_TILE_OPS, *ISA_MISC_OPS, *COMM_OPS)

PTO = Dialect("pto", list(PTO_OPS), [*PTO_ATTRS, *PTO_TYPES, *ISA_ATTRS, *ISA_TYPES, *COMM_ATTRS])

__all__ = [
    "PTO",
    "PTO_OPS",
    "DpsOp",
    "PTOOp",
    "PartitionTensorViewType",
    "PtrType",
    "TensorViewType",
    "Tile",
    "TileBufType",
    "TileSpec",
    "target_arch",
    "tile_of",
]
