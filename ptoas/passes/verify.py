"""``verify``: the op verifiers and ptoas's module rules, as a pipeline step.

Besides the op verifiers, the target facts that hold whether or not memory is
planned: ``pto.target_arch`` names a known arch, and every ``pto.alloc_tile``
fits its address space on that arch at an aligned address; PTOAS's rules on FIFO inits over reserved
buffers (:mod:`.fifo_rules`).

Raises :class:`pypto.ptoas.pto_text.PTOVerifyError` (message names the op
and operand; located through the op's ``loc`` or the source map).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from pypto.ptoas.dialect import target_arch
from pypto.ptoas.dialect.tile_ops import AllocTileOp
from pypto.ptoas.dialect.types import TileBufType, element_bits
from pypto.ptoas.limits import ARCHS, alignment, capacity
from pypto.ptoas.pto_text import verify_pto

from .access import constant_int
from .errors import pass_error
from .fifo_rules import check_nosplit, check_peer_inits


def tile_bytes(t: TileBufType) -> int:
    """The bytes of one tile buffer."""
    return t.rows.data * t.cols.data * element_bits(t.dtype) // 8


def check_target(module: ModuleOp, check_addresses: bool = True) -> None:
    """A known ``pto.target_arch``; every tile no larger than its address
    space and, with ``check_addresses``, a constant address that keeps it inside
    and is aligned as the space's addresses must be (32 B for vec, 512 B for the L0 buffers)."""
    arch_attr = module.attributes.get("pto.target_arch")
    if isinstance(arch_attr, StringAttr) and arch_attr.data.lower() not in ARCHS:
        raise pass_error(module, f"unknown pto.target_arch {arch_attr.data!r} (known: {', '.join(ARCHS)})")
    for op in module.walk():
        if not isinstance(op, AllocTileOp) or not isinstance(op.result.type, TileBufType):
            continue
        arch = target_arch(op)
        space, size = op.result.type.space.value, tile_bytes(op.result.type)
        cap = capacity(space, arch)
        if cap is None:
            continue
        if size > cap:
            raise pass_error(op, f"{space} tile of {size} bytes is larger than the {space} buffer ({cap} bytes on {arch})")
        addr = constant_int(op.addr) if check_addresses and op.addr is not None else None
        if addr is not None and (addr < 0 or addr + size > cap):
            raise pass_error(
                op,
                f"{space} tile at address {addr} of {size} bytes ends at {addr + size}, "
                f"past the end of the {space} buffer ({cap} bytes on {arch})",
            )
        if addr is not None and addr % (align := alignment(space)):
            raise pass_error(op, f"{space} tile at address {addr} is not {align}-byte aligned: a {space} address is a "
                                 f"multiple of {align} on {arch}")  # fmt: skip


@dataclass(frozen=True)
class VerifyPass(ModulePass):
    """``verify``: :func:`pypto.ptoas.pto_text.verify_pto`."""

    name = "verify"
    check_addresses: bool = True
    """Check given tile addresses against the target (off when plan-memory re-plans them all)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Verify the module and its target facts."""
        verify_pto(op)
        check_target(op, self.check_addresses)
        check_peer_inits(op)
        check_nosplit(op)
