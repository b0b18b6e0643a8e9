"""Calls between the functions of a module: the argument directions recorded
on a call, and call sites and callees agreeing on DDR MemRefs."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp

from pypto.dialects.enums import ParamDirection, ParamDirectionAttr
from pypto.dialects.types import TensorType

from .functions import calls_in, functions_by_name
from .memref import memref_of, rename_bases, set_type, strip_bases, sync_signature, used_bases

ARG_DIRECTIONS = "pl.arg_directions"
"""The discardable attribute on ``func.call`` DeriveCallDirections writes."""

UPSTREAM_ADIR: dict[ParamDirection, str] = {
    ParamDirection.In: "input",
    ParamDirection.Out: "output_existing",
    ParamDirection.InOut: "inout",
}
"""How upstream's dumps spell each direction (``pl.adir.<name>``)."""


def call_directions(call: func.CallOp) -> list[ParamDirection] | None:
    """The recorded argument directions of a call (None if not derived)."""
    a = call.attributes.get(ARG_DIRECTIONS)
    if not isinstance(a, ArrayAttr):
        return None
    out: list[ParamDirection] = []
    for d in a.data:
        if isinstance(d, ParamDirectionAttr):
            out.append(d.data)
        else:  # upstream's spelling, as the front end parses a 38+ dump
            name = getattr(d, "data", "")
            out.append({v: k for k, v in UPSTREAM_ADIR.items()}.get(name, ParamDirection.In))
    return out


def _fresh_base(f: func.FuncOp, space: str, taken: set[str]) -> str:
    n = 0
    while f"mem_{space}_{n}" in taken:
        n += 1
    return f"mem_{space}_{n}"


def _same_buffer_in_caller(call: func.CallOp, callee: func.FuncOp, base: str) -> bool:
    """Whether ``base`` (a MemRef name of ``callee``) is a parameter of ``callee`` that ``call`` passes a
    buffer of that same name: then it names the same buffer in the caller."""
    entry = callee.body.blocks.first
    assert entry is not None
    for param, arg in zip(entry.args, call.arguments, strict=False):
        pm, am = memref_of(param.type), memref_of(arg.type)
        if pm is not None and pm.base.data == base:
            return am is not None and am.base.data == base
    return False


def reconcile_calls(module: ModuleOp) -> None:
    """Make call sites and callees agree on DDR MemRefs (InitMemRef's last step:
    ``func.call``'s verifier wants the callee's exact parameter types).

    A callee parameter whose call sites all pass the same MemRef is renamed to
    it (inside the callee; a callee-local buffer that already used that name
    gets a fresh one); then each call's results take the callee's result types.
    Repeats until stable (a call graph is a DAG: a few rounds).
    """
    funcs = functions_by_name(module)
    for _ in range(len(funcs) + 2):
        changed = False
        sites: dict[str, list[func.CallOp]] = {}
        for f in funcs.values():
            for op, callee in calls_in(f, funcs):
                sites.setdefault(callee.sym_name.data, []).append(op)
        for name, calls in sites.items():
            callee = funcs[name]
            entry = callee.body.blocks.first
            assert entry is not None
            mapping: dict[str, str] = {}
            kept: set[str] = set()  # parameter names the call sites already pass
            for i, param in enumerate(entry.args):
                if not isinstance(param.type, TensorType):
                    continue
                pm = memref_of(param.type)
                passed = {memref_of(c.arguments[i].type) for c in calls if i < len(c.arguments)}
                if pm is not None and len(passed) == 1:
                    (am,) = passed
                    if am is not None and am.base.data != pm.base.data:
                        mapping[pm.base.data] = am.base.data
                    elif am is not None:
                        kept.add(pm.base.data)
                    if am is not None:
                        continue
                if pm is None and passed == {None}:
                    continue
                # Call sites disagree (or the parameter lost its MemRef): no
                # single type can satisfy func.call's verifier, so the tensor
                # goes without a DDR MemRef on both sides.
                if pm is not None:
                    changed |= strip_bases(callee, {pm.base.data})
                for c in calls:
                    caller = c.parent_op()
                    while caller is not None and not isinstance(caller, func.FuncOp):
                        caller = caller.parent_op()
                    cm = memref_of(c.arguments[i].type) if i < len(c.arguments) else None
                    if caller is not None and cm is not None:
                        changed |= strip_bases(caller, {cm.base.data})
            if mapping:
                # A callee-local buffer already named like a caller buffer moves aside; a
                # parameter that already has the caller's name stays (two parameters the
                # call sites pass views of one buffer, e.g. two slices, then share it).
                taken = used_bases(callee) | set(mapping.values())
                for b in sorted(used_bases(callee)):
                    if b in mapping.values() and b not in mapping and b not in kept and b.startswith("mem_ddr_"):
                        new = _fresh_base(callee, "ddr", taken)
                        taken.add(new)
                        mapping[b] = new
                changed |= rename_bases(callee, mapping)
        for f in funcs.values():
            fmap: dict[str, str] = {}
            for op, callee in calls_in(f, funcs):
                outs = callee.function_type.outputs.data
                for r, t in zip(op.results, outs, strict=False):
                    rm, tm = memref_of(r.type), memref_of(t)
                    if r.type == t:
                        continue
                    if rm is not None and tm is not None and rm.base.data != tm.base.data:
                        if _same_buffer_in_caller(op, callee, tm.base.data) or tm.base.data not in used_bases(f):
                            fmap[rm.base.data] = tm.base.data
                        # else the callee's name is not the caller's yet (its parameters take the
                        # caller's names first): renaming now would merge two buffers of the caller
                    else:
                        set_type(r, t)
                        changed = True
            if fmap:
                changed |= rename_bases(f, fmap)
            sync_signature(f)
        if not changed:
            return
