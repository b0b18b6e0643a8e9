"""The xDSL context ptoas parses ``.pto`` files in."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect


def _builtin() -> Dialect:
    from xdsl.dialects.builtin import Builtin

    return Builtin


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _scf() -> Dialect:
    from xdsl.dialects.scf import Scf

    return Scf


def _memref() -> Dialect:
    from .dialect.memref_compat import MemRefPTOAS

    return MemRefPTOAS


def _pto() -> Dialect:
    from .dialect import load_dialect

    return load_dialect()


LOADERS: dict[str, Callable[[], Dialect]] = {
    "builtin": _builtin,
    "func": _func,
    "arith": _arith,
    "scf": _scf,
    "memref": _memref,
    "pto": _pto,
}
"""Each dialect's loader: a dialect is imported and loaded when the first of its ops or attributes
is parsed (``Context.register_dialect``), so a context that only runs passes loads none."""


def make_pto_context(allow_unregistered: bool = False) -> Context:
    """A context with builtin, func, arith, scf, memref (internal memref operands; PTOAS's
    ``reinterpret_cast`` rule: ``dialect.memref_compat``) and pto, each
    registered to load on first use."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, loader in LOADERS.items():
        ctx.register_dialect(name, loader)
    return ctx
