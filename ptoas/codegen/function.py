"""One pl AIC/AIV/InCore function -> one pto ``func.func`` in its own module.

Shape (as upstream PyPTO's ``.pto``)::

    module attributes {pto.target_arch = "a2a3"} {
      func.func @k(%arg0: !pto.ptr<f32>, ..., %argN: f32) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
        <pooled constants: addresses (i64), then index constants>
        <one pto.make_tensor_view per tensor parameter: shape and row-major strides>
        <the body: alloc_tile / partition_view / pto ops, scf.for / scf.if, arith>
        return
      }
    }

Tensor parameters become ``!pto.ptr<T>``, scalar parameters stay; results are
dropped (kernels write their Out tensors). ``pto.kernel_kind``: ``cube`` for
AIC, ``vector`` for AIV, and for InCore functions the kind their tiles imply
(none when they mix both).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, StringAttr, UnknownLoc
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from pypto.diagnostics import error_at
from pypto.dialects.enums import FunctionType, MemorySpace
from pypto.dialects.program import function_type
from pypto.dialects.types import TensorType, TileType
from pypto.ptoas.dialect.attrs import KernelKind, KernelKindAttr, Layout, LayoutAttr
from pypto.ptoas.dialect.view_ops import MakeTensorViewOp

from .control import lower_block
from .state import LoweringState
from .types import is_scalar, ptr_type, tensor_view_type

KERNEL_TYPES = (FunctionType.AIC, FunctionType.AIV, FunctionType.InCore)
"""The pl function types that become ``.pto`` units."""

CUBE_SPACES = {MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias}


def kernel_kind(f: FuncOp) -> KernelKind | None:
    """cube (AIC), vector (AIV); for InCore the one its tiles imply, None when mixed."""
    kind = function_type(f)
    if kind is FunctionType.AIC:
        return KernelKind.cube
    if kind is FunctionType.AIV:
        return KernelKind.vector
    spaces = {
        r.type.memory_space for op in f.walk() for r in op.results if isinstance(r.type, TileType)
    }
    cube, vec = bool(spaces & CUBE_SPACES), MemorySpace.Vec in spaces
    if cube and not vec:
        return KernelKind.cube
    if vec and not cube:
        return KernelKind.vector
    return None


def _make_views(st: LoweringState, f: FuncOp, entry: Block) -> None:
    """``pto.make_tensor_view`` of every tensor parameter (row-major strides)."""
    for old, new in zip(f.body.block.args, entry.args, strict=True):
        t = old.type
        if not isinstance(t, TensorType):
            continue
        shape = t.get_shape()
        if any(d < 0 for d in shape):
            raise error_at(f, f"ptoas codegen: parameter %{old.name_hint} has a dynamic shape {list(shape)}")
        strides = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * shape[i + 1]
        op = MakeTensorViewOp.build(
            operands=[new, [st.const(d) for d in shape], [st.const(s) for s in strides]],
            result_types=[tensor_view_type(t)],
            attributes={"layout": LayoutAttr(Layout.nd)},
        )
        op.result.name_hint = f"{old.name_hint}_view" if old.name_hint else None
        st.emit(op, f)
        st.views[old] = op.result


def lower_function(f: FuncOp, *, emit_source_loc: bool = False, arch: str = "a2a3") -> ModuleOp:
    """The ``.pto`` module of one on-chip pl function (raises DiagnosticError on what it cannot lower)."""
    arg_types = []
    for a in f.body.block.args:
        if isinstance(a.type, TensorType):
            arg_types.append(ptr_type(a.type))
        elif is_scalar(a.type):
            arg_types.append(a.type)
        else:
            raise error_at(f, f"ptoas codegen: parameter %{a.name_hint} of type {a.type} cannot be a kernel argument")
    entry = Block(arg_types=arg_types)
    for i, a in enumerate(entry.args):
        a.name_hint = f"arg{i}"
    st = LoweringState(emit_loc=emit_source_loc, entry=entry, block=entry)
    for old, new in zip(f.body.block.args, entry.args, strict=True):
        if is_scalar(old.type):
            st.scalars[old] = new
    _make_views(st, f, entry)
    lower_block(st, f.body.block, entry)
    entry.add_op(ReturnOp())
    st.finish_constants()
    new = FuncOp(f.sym_name.data, (arg_types, []), Region(entry))
    kind = kernel_kind(f)
    if kind is not None:
        new.attributes["pto.kernel_kind"] = KernelKindAttr(kind)
    new.location = UnknownLoc()
    module = ModuleOp([new])
    module.attributes["pto.target_arch"] = StringAttr(arch)
    return module
