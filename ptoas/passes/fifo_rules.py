"""PTOAS's module rules on FIFO pipe inits over reserved buffers (its ResolveReservedBuffers pass).

An ``initialize_l2l_pipe`` / ``initialize_l2g2l_pipe`` names its local buffer by an address
operand. When that address comes from ``pto.reserve_buffer`` (the owner) or
``pto.import_reserved_buffer`` (the peer), the two functions form one logical pipe, keyed by
(owner function, reserve name, direction): exactly two init ops, one in each function, must
take part. Without such an address the init must give an explicit ``flag_base``.

``nosplit`` (PTOAS's PTOInferValidatePipeInit): the inits linked by reserved buffers form one
logical pipe; each init's users (``tpush``/``tpop``/``tfree`` of its pipe, or the frontend
``tpush_to_aiv``... of its function for ``aic/aiv_initialize_pipe``) use ``split = 0`` only, or
``split = 1/2`` only; the whole pipe must agree, and with an explicit ``nosplit``. A frontend init
is named as PTOAS names it after lowering (``initialize_l2l_pipe`` on a5, ``initialize_l2g2l_pipe``
on a2a3). Messages are PTOAS's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from pypto.ptoas.dialect import target_arch
from pypto.ptoas.dialect.base import A2A3
from pypto.ptoas.dialect.isa_misc_ops import (
    AicInitializePipeOp,
    AivInitializePipeOp,
    ImportReservedBufferOp,
    InitializeL2G2LPipeOp,
    InitializeL2LPipeOp,
    ReserveBufferOp,
    TFreeOp,
    TPopOp,
    TPushOp,
)
from pypto.ptoas.dialect.pipe_ops import PIPE_OPS

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


def int_attr(op: Operation, key: str) -> int | None:
    """The value of ``op``'s integer attribute ``key`` (None when absent or not an integer)."""
    attr = op.attributes.get(key)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def _usage(splits: list[int]) -> bool | None | str:
    """True: only ``split = 0``; False: only 1/2; None: no users; "mixed"."""
    zero, other = any(s == 0 for s in splits), any(s != 0 for s in splits)
    if zero and other:
        return "mixed"
    return True if zero else (False if other else None)


def _init_splits(op: Operation, func: FuncOp) -> list[int]:
    if isinstance(op, AicInitializePipeOp | AivInitializePipeOp):
        users = [u for u in func.walk() if isinstance(u, PIPE_OPS)]
    else:
        users = [
            use.operation for r in op.results for use in r.uses if isinstance(use.operation, TPushOp | TPopOp | TFreeOp)
        ]
    return [s for s in (int_attr(u, "split") for u in users) if s is not None]


def _frontend_addrs(op: AicInitializePipeOp | AivInitializePipeOp, dir_mask: int) -> list[tuple[SSAValue, int]]:
    if dir_mask == 3:
        return [(op.c2v_consumer_buf, 1), (op.v2c_consumer_buf, 2)]
    return [(op.c2v_consumer_buf if dir_mask == 1 else op.v2c_consumer_buf, dir_mask)]


@dataclass(frozen=True)
class PipeInit:
    """What PTOAS's passes settle for one pipe init: its ``nosplit`` (explicit, else inferred from
    its logical pipe's users, else false) and its ``flag_base`` (explicit on one init of the
    logical pipe, else 0), the facts its C++ ``TPipe<...>`` token carries."""

    nosplit: bool
    flag_base: int


def check_nosplit(module: ModuleOp) -> None:
    """PTOAS's ``nosplit`` rules over each logical pipe (see the module docstring)."""
    resolve_pipe_inits(module)


def resolve_pipe_inits(module: ModuleOp) -> dict[Operation, PipeInit]:
    """Check the ``nosplit`` rules and settle each init's ``nosplit`` and ``flag_base``."""
    infos: list[tuple[Operation, str, bool | None | str, bool | None]] = []
    keys_of: list[list[Key]] = []
    for op in module.walk():
        if not isinstance(op, InitializeL2LPipeOp | InitializeL2G2LPipeOp | AicInitializePipeOp | AivInitializePipeOp):
            continue
        func = _func_of(op)
        if func is None:
            continue
        mask = op.attributes.get("dir_mask")
        dir_mask = mask.value.data if isinstance(mask, IntegerAttr) else 0
        if isinstance(op, AicInitializePipeOp | AivInitializePipeOp):
            pairs = _frontend_addrs(op, dir_mask)
            name = "pto.initialize_l2g2l_pipe" if target_arch(op) == A2A3 else "pto.initialize_l2l_pipe"
        else:
            addrs = _local_addrs(op)
            pairs = list(zip(addrs, (1, 2), strict=False)) if dir_mask == 3 else [(a, dir_mask) for a in addrs[:1]]
            name = op.name
        keys = [k for a, d in pairs if (k := _peer_key(a, func, d)) is not None]
        explicit = op.attributes.get("nosplit")
        nosplit = bool(explicit.value.data) if isinstance(explicit, IntegerAttr) else None
        infos.append((op, name, _usage(_init_splits(op, func)), nosplit))
        keys_of.append(keys)
    # components: inits that share a logical pipe key, transitively
    parent = list(range(len(infos)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[Key, int] = {}
    for i, keys in enumerate(keys_of):
        for k in keys:
            if k in first:
                parent[find(i)] = find(first[k])
            else:
                first[k] = i
    components: dict[int, list[int]] = {}
    for i in range(len(infos)):
        components.setdefault(find(i), []).append(i)
    settled: dict[Operation, PipeInit] = {}
    for members in components.values():
        component = [infos[i] for i in members]
        nosplit = _resolve(component)
        bases = [b.value.data for op, *_ in component if isinstance(b := op.attributes.get("flag_base"), IntegerAttr)]
        for op, *_ in component:
            settled[op] = PipeInit(nosplit, bases[0] if bases else 0)
    return settled


def _resolve(component: list[tuple[Operation, str, bool | None | str, bool | None]]) -> bool:
    """The component's ``nosplit`` (PTOAS's errors when its inits or users disagree)."""
    explicit: bool | None = None
    for op, name, usage, nosplit in component:
        if usage == "mixed":
            raise pass_error(
                op, f"'{name}' op cannot mix 'split = 0' with 'split = 1' or 'split = 2' on the same logical pipe"
            )
        if nosplit is None:
            continue
        if explicit is not None and explicit != nosplit:
            raise pass_error(op, f"'{name}' op conflicting explicit 'nosplit' across peer pipe init ops")
        explicit = nosplit
    inferred: bool | None = None
    for op, name, usage, _ in component:
        if usage is None or usage == "mixed":
            continue
        if inferred is not None and inferred != usage:
            raise pass_error(op, f"'{name}' op conflicting pipe split usage across peer pipe init ops")
        inferred = bool(usage)
    if explicit is None or inferred is None or explicit == inferred:
        return explicit if explicit is not None else bool(inferred)
    for op, name, _, nosplit in component:
        if nosplit is None or nosplit == inferred:
            continue
        if nosplit:
            raise pass_error(
                op,
                f"'{name}' op explicit 'nosplit = true' conflicts with downstream users that require split = 1 or split = 2",
            )
        raise pass_error(
            op, f"'{name}' op explicit 'nosplit = false' conflicts with downstream users that require split = 0"
        )
    return explicit
