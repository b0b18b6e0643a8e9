"""The xDSL context ptoas parses ``.pto`` files in."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.scf import Scf

from .dialect import PTO
from .dialect.memref_compat import MemRefPTOAS


def make_pto_context(allow_unregistered: bool = False) -> Context:
    """A context with builtin, func, arith, scf, memref (internal memref operands; PTOAS's
    ``reinterpret_cast`` rule: ``dialect.memref_compat``) and pto."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Arith, Scf, MemRefPTOAS, PTO):
        ctx.load_dialect(dialect)
    return ctx
