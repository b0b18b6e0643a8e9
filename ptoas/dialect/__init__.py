"""The ``pto`` dialect in xDSL: PTOAS's types, attributes and op subset (pto-dialect.md).

``PTO`` is the dialect object; :func:`pypto.ptoas.context.make_pto_context` registers
it (loaded on the first ``pto`` op parsed) with builtin, func, arith, scf and memref, and
:mod:`pypto.ptoas.pto_text` reads and writes ``.pto`` text.

Modules: ``attrs`` (enums and attributes), ``types`` (ptr, views, tile_buf),
``base`` (operand views, diagnostics, the ``ins/outs`` syntax), ``view_ops``,
``tile_ops`` (alloc, DMA, moves, cube), ``vector_ops``, ``sync_ops``, ``misc_ops``,
``pipe_ops`` (cube<->vector tpush/tpop/tfree), ``isa_tile_ops`` / ``isa_misc_ops`` /
``isa_attrs`` (the rest of PTOAS's ISA; ``isa_status`` lists every op and its simulator status),
``comm_ops`` (the cross-rank ``pto.comm.*`` ops).
Every op class has ``pipe()``: the hardware pipe it runs on (None for non-pipe ops).

Importing this package (or one of its modules) defines only what is imported: ``PTO``,
``PTO_OPS`` and :func:`op_class` import every op module on first use (PEP 562), so a compile
that emits a few ops does not build all op classes (IRDL class creation is most of a fresh
process's codegen cost).
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from typing import TYPE_CHECKING

from .base import DpsOp, PTOOp, Tile, target_arch, tile_of
from .types import PartitionTensorViewType, PtrType, TensorViewType, TileBufType, TileSpec

if TYPE_CHECKING:
    from xdsl.ir import Dialect, Operation

# (module, its tuple of op classes), in the dialect's order
_OP_MODULES = (
    ("view_ops", "VIEW_OPS"),
    ("tile_ops", "TILE_OPS"),
    ("vector_ops", "VECTOR_OPS"),
    ("sync_ops", "SYNC_OPS"),
    ("misc_ops", "MISC_OPS"),
    ("pipe_ops", "PIPE_OPS"),
    ("isa_tile_ops", "ISA_TILE_OPS"),
    ("isa_misc_ops", "ISA_MISC_OPS"),
    ("comm_ops", "COMM_OPS"),
)


def _ops_of(module: str) -> tuple[type[Operation], ...]:
    return getattr(importlib.import_module(f"{__name__}.{module}"), dict(_OP_MODULES)[module])


@cache
def _all_ops() -> tuple[type[Operation], ...]:
    return tuple(cls for module, _ in _OP_MODULES for cls in _ops_of(module))


@cache
def _dialect() -> Dialect:
    from xdsl.ir import Dialect

    from .attrs import PTO_ATTRS
    from .comm_ops import COMM_ATTRS
    from .isa_attrs import ISA_ATTRS, ISA_TYPES
    from .types import PTO_TYPES

    return Dialect("pto", list(_all_ops()), [*PTO_ATTRS, *PTO_TYPES, *ISA_ATTRS, *ISA_TYPES, *COMM_ATTRS])


def op_class(name: str) -> type[Operation] | None:
    """The pto op class named ``name`` (``"pto.tadd"``): looked up among the op modules already
    imported first; every op module is imported only for a name none of them defines."""
    for module, _ in _OP_MODULES:
        if f"{__name__}.{module}" in sys.modules:
            found = _by_name(module).get(name)
            if found is not None:
                return found
    return {cls.name: cls for cls in _all_ops()}.get(name)


@cache
def _by_name(module: str) -> dict[str, type[Operation]]:
    return {cls.name: cls for cls in _ops_of(module)}


def load_dialect() -> Dialect:
    """The ``pto`` dialect (every op module imported): a loader for ``Context.register_dialect``."""
    return _dialect()


def __getattr__(name: str) -> object:
    """``PTO`` and ``PTO_OPS``, built on first use."""
    if name == "PTO":
        return _dialect()
    if name == "PTO_OPS":
        return _all_ops()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    "load_dialect",
    "op_class",
    "target_arch",
    "tile_of",
]
