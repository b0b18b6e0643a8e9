"""User-level DSL functions (``pl.add``, ``pl.load``, ...) and how each maps
onto a ``pl.tile.*`` / ``pl.tensor.*`` op (docs/ir.md, "Ops")."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pypto.dialects import PL

PL_OPS: dict[str, type] = {op.name: op for op in PL.operations if op.name.startswith(("pl.tile.", "pl.tensor."))}
"""Every ``pl.tile.*`` / ``pl.tensor.*`` op by its MLIR (= printed DSL) name."""


class OpTable(Mapping[str, type]):
    """Every pl op and pld op (pypto.language.distributed) by name. The pld ops (the multi-chip
    dialect) are imported on the first ``pld.`` name looked up, or when the table is listed: a
    single-chip kernel never builds their classes. An op's ``FULL_PATH`` (upstream's
    ``pld.system.rank`` for ``pld.rank``) is looked up too, but not listed."""

    def __init__(self, ops: dict[str, type]):
        self._ops = dict(ops)
        self._aliases: dict[str, type] = {}
        self._pld = False

    def _all(self) -> dict[str, type]:
        if not self._pld:
            from pypto.dialects.distributed_ops import PLD

            self._ops.update({op.name: op for op in PLD.operations})
            self._aliases.update({op.FULL_PATH: op for op in PLD.operations if hasattr(op, "FULL_PATH")})
            self._pld = True
        return self._ops

    def _for(self, name: object) -> dict[str, type]:
        return self._all() if isinstance(name, str) and name.startswith("pld.") else self._ops

    def __getitem__(self, name: str) -> type:
        ops = self._for(name)
        return ops[name] if name in ops else self._aliases[name]

    def __contains__(self, name: object) -> bool:
        return name in self._for(name) or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


OPS = OpTable(PL_OPS)


@dataclass(frozen=True)
class Sugar:
    """How ``pl.<name>(...)`` resolves.

    ``layer``: "dispatch" (tile or tensor by the first operand), "tile" or
    ``tensor``; ``op``: the op's short name; ``scalar_op``: the op when the
    second operand is a scalar; ``rename``: user keyword -> op argument;
    ``positional``: the user signature's positional names when it differs
    from the op's; ``drop``: user arguments accepted and ignored;
    ``default_from``: op argument -> the argument it copies when omitted.
    """

    layer: str
    op: str
    scalar_op: str | None = None
    positional: tuple[str, ...] | None = None
    rename: dict[str, str] = field(default_factory=dict)
    drop: tuple[str, ...] = ()
    default_from: dict[str, str] = field(default_factory=dict)


def _dispatch(name: str, scalar: str | None = None) -> Sugar:
    return Sugar("dispatch", name, scalar)


def _both_layers() -> list[str]:
    """Short names of the ops defined on both layers (``add`` for ``pl.tile.add`` and ``pl.tensor.add``)."""
    tile = {n.removeprefix("pl.tile.") for n in PL_OPS if n.startswith("pl.tile.")}
    return [n.removeprefix("pl.tensor.") for n in PL_OPS if n.startswith("pl.tensor.") and n[len("pl.tensor."):] in tile]


SUGAR: dict[str, Sugar] = {
    # ``pl.<op>`` picks the tile or the tensor op by its first operand; ``add`` with a
    # scalar right-hand side becomes ``adds`` (when a ``<op>s`` op exists).
    **{
        n: _dispatch(n, n + "s" if n + "s" in _both_layers() else None)
        for n in _both_layers()
        if n not in ("full", "create")
    },
    "full": Sugar("tensor", "full"),
    "load": Sugar(
        "tile",
        "load",
        positional=("tensor", "offsets", "shapes", "valid_shapes", "target_memory"),
        rename={"valid_shape": "valid_shapes", "t": "tensor"},
        drop=("clamp",),
        default_from={"valid_shapes": "shapes"},
    ),
    "store": Sugar(
        "tile",
        "store",
        positional=("tile", "offsets", "output", "shapes"),
        rename={"out": "output", "output_tensor": "output"},  # upstream's pl.tile.store keyword
        drop=("shapes",),
    ),
    "move": Sugar("tile", "move"),
    "create_tile": Sugar("tile", "create"),
    # ``memory_type`` (upstream 05_matmul passes pl.Mem.DDR): a tensor always lives in DDR.
    "create_tensor": Sugar("tensor", "create", drop=("layout", "manual_dep", "memory_type")),
}


def sugar_op_name(s: Sugar, layer: str, scalar_rhs: bool) -> str:
    """The op a sugar call resolves to, given the first operand's layer."""
    short = s.scalar_op if scalar_rhs and s.scalar_op else s.op
    return f"pl.{layer if s.layer == 'dispatch' else s.layer}.{short}"
