"""PTOAS's module rules on FIFO pipe inits over reserved buffers (its ResolveReservedBuffers pass).

An ``initialize_l2l_pipe`` / ``initialize_l2g2l_pipe`` names its local buffer by an address
operand. When that address comes from ``pto.reserve_buffer`` (the owner) or
``pto.import_reserved_buffer`` (the peer), the two functions form one logical pipe, keyed by
(owner function, reserve name, direction): exactly two init ops, one in each function, must
take part. Without such an address the init must give an explicit ``flag_base``.
Messages are PTOAS's.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from pypto.ptoas.dialect.isa_misc_ops import (
    ImportReservedBufferOp,
    InitializeL2G2LPipeOp,
    InitializeL2LPipeOp,
    ReserveBufferOp,
)

from .errors import pass_error

Key = tuple[str, str, int]


def _func_of(op: Operation) -> FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return parent


def _peer_key(addr: SSAValue, func: FuncOp, direction: int) -> Key | None:
    owner = addr.owner
    name = owner.attributes.get("name") if isinstance(owner, Operation) else None
    if isinstance(owner, ReserveBufferOp) and isinstance(name, StringAttr):
        return func.sym_name.data, name.data, direction
    peer = owner.attributes.get("peer_func") if isinstance(owner, ImportReservedBufferOp) else None
    if isinstance(peer, SymbolRefAttr) and isinstance(name, StringAttr):
        return peer.root_reference.data, name.data, direction
    return None


def _local_addrs(op: InitializeL2LPipeOp | InitializeL2G2LPipeOp) -> list[SSAValue]:
    """(local, peer local) address operands (an l2g2l init starts with its GM slot buffer)."""
    addrs = list(op.addrs)
    return addrs[1:] if isinstance(op, InitializeL2G2LPipeOp) else addrs


def check_peer_inits(module: ModuleOp) -> None:
    """Raise PTOAS's error for an init without a reserved local buffer nor ``flag_base``, or for a
    logical pipe over a reserved buffer that lacks one init in each of its two functions."""
    inits: dict[Key, list[tuple[Operation, str]]] = {}
    participants: dict[Key, set[str]] = {}
    for op in module.walk():
        if not isinstance(op, InitializeL2LPipeOp | InitializeL2G2LPipeOp):
            continue
        func = _func_of(op)
        if func is None:
            continue
        mask = op.attributes.get("dir_mask")
        dir_mask = mask.value.data if isinstance(mask, IntegerAttr) else 0
        addrs = _local_addrs(op)
        pairs = list(zip(addrs, (1, 2), strict=False)) if dir_mask == 3 else [(a, dir_mask) for a in addrs[:1]]
        recorded = False
        for addr, direction in pairs:
            key = _peer_key(addr, func, direction)
            if key is None:
                continue
            recorded = True
            inits.setdefault(key, []).append((op, func.sym_name.data))
            participants.setdefault(key, set()).update((func.sym_name.data, key[0]))
        if not recorded and "flag_base" not in op.attributes:
            raise pass_error(
                op,
                f"'{op.name}' op requires local_addr to come from pto.reserve_buffer or "
                "pto.import_reserved_buffer when 'flag_base' is not explicit",
            )
    for key, group in inits.items():
        if len(participants[key]) == 2 and len(group) == 2 and len({f for _, f in group}) == 2:
            continue
        op = group[0][0]
        raise pass_error(
            op,
            f"'{op.name}' op requires a complete peer init pair when local_addr comes from "
            "pto.reserve_buffer or pto.import_reserved_buffer",
        )
