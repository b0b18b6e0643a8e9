"""Functions and the translation unit: :func:`emit_cpp`.

Output shape (pto-dialect.md §8)::

    // header comment
    #include "pto_cpu.hpp"            (pto/pto-inst.hpp when PTO_NPU is defined)
    using namespace pto;
    enum class PTOAutoSyncTailMode ... ; static AICORE inline void ptoas_auto_sync_tail(...) {...}

    __global__ AICORE void NAME(__gm__ float* v1, ..., float v4) {
        using T = float;
        const int64_t v5 = 0; ...     (the leading constants)
    #if !defined(PTO_NPU)             (an entry no function calls, when fill.py follows it)
        pto::cpu::fill_before_read({{TileType::Vec, 512, 1024}});
    #endif
    #if defined(__DAV_VEC__)          (kernel_kind functions)
        set_mask_norm();
        set_vector_mask(-1, -1);
        ... body ...
    #endif // __DAV_VEC__
        ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
        return;
    }

    extern "C" int ptoas_call_NAME(const int64_t* args) { ... }   (CPU builds: runs NAME via pto::cpu::launch)

Functions come callee first, as PTOAS orders them (:func:`call_order`; no prototypes, only
body-less declarations are written as such); a recursive call is an error, as in PTOAS.
Entry functions (``pto.entry``, or every public void function when none is marked) are
``__global__ AICORE``; private functions ``static AICORE``; others ``AICORE``.
"""

from __future__ import annotations

import sys

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute

from pypto.ptoas.dialect.attrs import AddressSpace, KernelKindAttr
from pypto.ptoas.dialect.base import A2A3, target_arch
from pypto.target.model import TargetError

from . import scalar, sync, tiles, vector, views  # noqa: F401  (register the op handlers; isa, pipes, comm: on first need)
from .cfg_prologue import cfg_prologue, is_cfg_function
from .context import FuncContext
from .cxx_types import tile_type, value_ctype
from .errors import EmitError
from .fill import read_before_written

PREAMBLE = """\
#include <cstdint>
#if defined(PTO_NPU)
#include "pto/pto-inst.hpp"
#else
#include "pto_cpu.hpp"
#endif
using namespace pto;

enum class PTOAutoSyncTailMode : int {
    kBarrierAll = 0,
    kSetWaitMte3ToSEvent0 = 1,
};

static AICORE inline void ptoas_auto_sync_tail(PTOAutoSyncTailMode mode = PTOAutoSyncTailMode::kBarrierAll) {
    switch (mode) {
    case PTOAutoSyncTailMode::kSetWaitMte3ToSEvent0:
        set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
        wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
        break;
    case PTOAutoSyncTailMode::kBarrierAll:
    default:
        pipe_barrier(PIPE_ALL);
        break;
    }
}
"""

CALL_PREFIX = "ptoas_call_"


def _functions(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.body.block.ops if isinstance(op, FuncOp)]


def _entries(funcs: list[FuncOp]) -> set[str]:
    marked = {f.sym_name.data for f in funcs if isinstance(f.attributes.get("pto.entry"), UnitAttr)}
    if marked:
        return marked
    return {
        f.sym_name.data
        for f in funcs
        if not f.function_type.outputs.data and (f.sym_visibility is None or f.sym_visibility.data != "private")
    }


def call_order(funcs: list[FuncOp]) -> list[FuncOp]:
    """Definitions with every callee before its callers (PTOAS's order: no prototypes needed;
    a ready queue seeded in module order). Recursion is an EmitError, as in PTOAS."""
    defs = [f for f in funcs if f.body.blocks]
    by_name = {f.sym_name.data: f for f in defs}
    callers: dict[str, list[str]] = {name: [] for name in by_name}
    waiting: dict[str, int] = dict.fromkeys(by_name, 0)
    for f in defs:
        callees: set[str] = set()
        for op in f.walk():
            if not isinstance(op, CallOp) or op.callee.root_reference.data not in by_name:
                continue
            callee = op.callee.root_reference.data
            if callee == f.sym_name.data:
                raise EmitError("recursive function calls are not supported for EmitC C++ emission", f)
            if callee not in callees:
                callees.add(callee)
                callers[callee].append(f.sym_name.data)
                waiting[f.sym_name.data] += 1
    ready = [f.sym_name.data for f in defs if waiting[f.sym_name.data] == 0]
    order: list[FuncOp] = []
    while ready:
        name = ready.pop(0)
        order.append(by_name[name])
        for user in callers[name]:
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if len(order) != len(defs):
        raise EmitError("cyclic function call graph is not supported for EmitC C++ emission")
    return order


def _qualifier(f: FuncOp, entries: set[str]) -> str:
    if f.sym_name.data in entries:
        return "__global__ AICORE"
    if f.sym_visibility is not None and f.sym_visibility.data == "private":
        return "static AICORE"
    return "AICORE"


def _signature(f: FuncOp, entries: set[str], arg_names: list[str]) -> str:
    outputs = f.function_type.outputs.data
    if len(outputs) > 1:
        raise EmitError("functions with more than one result are not supported", f)
    ret = _signature_ctype(f, outputs[0], "result") if outputs else "void"
    params = ", ".join(
        f"{_signature_ctype(f, t, f'argument {i}')} {n}"
        for i, (t, n) in enumerate(zip(f.function_type.inputs.data, arg_names, strict=True))
    )
    return f"{_qualifier(f, entries)} {ret} {f.sym_name.data}({params})"


def _signature_ctype(f: FuncOp, t: Attribute, what: str) -> str:
    """``value_ctype(t)`` of a type in ``f``'s signature; a type without a C++ spelling is an EmitError at
    ``f`` naming ``what`` (it named no line: ``k.pto: error: type ... has no C++ spelling``)."""
    try:
        return value_ctype(t)
    except EmitError as e:
        if e.op is not None:
            raise
        raise EmitError(f"{what}: {e.message}", f) from None


def _kernel_macro(f: FuncOp) -> str | None:
    kind = f.attributes.get("pto.kernel_kind")
    if isinstance(kind, KernelKindAttr) and not f.function_type.outputs.data:
        return "__DAV_CUBE__" if kind.data.value == "cube" else "__DAV_VEC__"
    return None


def _tail_mode(f: FuncOp) -> str:
    hint = f.attributes.get("pto.auto_sync_tail_hint")
    if isinstance(hint, StringAttr) and hint.data == "mte3-to-s-event0":
        return "PTOAutoSyncTailMode::kSetWaitMte3ToSEvent0"
    return "PTOAutoSyncTailMode::kBarrierAll"


def fill_lines(f: FuncOp) -> list[str]:
    """``pto::cpu::fill_before_read({...})`` for the CPU build: the on-chip bytes the kernel may read before
    writing them (:mod:`.fill`), the only ones a launch fills with 0xFF; none when the analysis gives up."""
    ranges = read_before_written(f)
    if ranges is None:
        return []
    try:
        types = {space: tile_type(AddressSpace(space)) for space in ranges}
    except TargetError:  # a space without a C++ TileType: leave the fill to the TASSIGNs
        return []
    items = ", ".join(f"{{TileType::{types[space]}, {lo}, {hi}}}" for space, rs in ranges.items() for lo, hi in rs)
    what = "the on-chip bytes read before written: 0xFF" if items else "no on-chip byte is read before written: no fill"
    return ["#if !defined(PTO_NPU)", f"pto::cpu::fill_before_read({{{items}}});  // {what}", "#endif"]


def _called(funcs: list[FuncOp]) -> set[str]:
    """The names of the functions some function of the module calls."""
    return {op.callee.root_reference.data for f in funcs for op in f.walk() if isinstance(op, CallOp)}


def emit_function(f: FuncOp, entries: set[str], launched: bool = False) -> list[str]:
    """The C++ definition of one function (a prototype for a body-less declaration). ``launched``: an entry
    no function calls, so it starts each launch (and names the bytes it reads before writing them)."""
    arg_names = [f"v{i + 1}" for i in range(len(f.function_type.inputs.data))]
    signature = _signature(f, entries, arg_names)
    if not f.body.blocks:
        return [f"{signature};"]
    ctx = FuncContext(first_id=len(arg_names) + 1)
    block = f.body.block
    for arg, name in zip(block.args, arg_names, strict=True):
        ctx.define(arg, name)
    tiles.reserve_constant_addresses(ctx, f)
    ops = list(block.ops)
    ret = ops[-1] if ops and isinstance(ops[-1], ReturnOp) else None
    macro = _kernel_macro(f)
    prologue = cfg_prologue(ctx, f) if is_cfg_function(f) else []  # before `using T`: cfg_prologue.py
    ctx.line("using T = float;")
    leading = 0
    while leading < len(ops) and isinstance(ops[leading], ConstantOp):
        ctx.emit_op(ops[leading])  # PTOAS's constants come before the kernel macro
        leading += 1
    if launched:
        for line in fill_lines(f):
            ctx.line(line)
    if macro is not None:
        ctx.line(f"#if defined({macro})")
        if macro == "__DAV_VEC__":
            ctx.line("set_mask_norm();")
            ctx.line("set_vector_mask(-1, -1);")
    guard = macro == "__DAV_VEC__" and _needs_nosplit_guard(f)
    if guard:
        ctx.line("if (get_subblockid() == 0) {")
    for op in ops[leading : -1 if ret is not None else None]:
        ctx.emit_op(op)
    if guard:
        ctx.line("}")
    if macro is not None:
        ctx.line(f"#endif // {macro}")  # PTOAS's spelling
    if f.sym_name.data in entries:
        ctx.line(f"ptoas_auto_sync_tail({_tail_mode(f)});")
    if ret is not None and ret.arguments:
        ctx.line(f"return {ctx.name(ret.arguments[0], ret)};")
    else:
        ctx.line("return;")
    return [f"{signature} {{", *prologue, *ctx.lines[:1], *ctx.hoisted, *ctx.lines[1:], "}"]


def emit_wrapper(f: FuncOp) -> list[str]:
    """``extern "C" int ptoas_call_NAME(const int64_t* args)``: unpack and run NAME on this thread's core."""
    name = f.sym_name.data
    unpacked = ", ".join(
        f"pto::cpu::arg<{value_ctype(t)}>(args[{i}])" for i, t in enumerate(f.function_type.inputs.data)
    )
    return [
        "#if !defined(PTO_NPU)",
        "// C ABI for the CPU build: pointers, integers and float bit patterns in int64 slots; 0 on success,",
        "// else 1 with the message in pto_cpu_last_error().",
        f'extern "C" int {CALL_PREFIX}{name}(const int64_t* args) {{',
        f'    return pto::cpu::launch("{name}", [&]() {{ {name}({unpacked}); }});',
        "}",
        "#endif",
    ]


def _needs_nosplit_guard(func: FuncOp) -> bool:
    """PTOAS's a5 sub-block guard (``pipes.needs_nosplit_guard``); an a2a3 function never has one,
    so the FIFO handlers (and the ISA op classes they import) load only for a5 vector functions."""
    if target_arch(func) == A2A3:
        return False
    from . import pipes

    return pipes.needs_nosplit_guard(func)


def _isa_helpers(used: set[type]) -> list[str]:
    """The C++ helpers the ISA ops in ``used`` need (none, and nothing imported, when no ISA tile
    op class was ever built: then no op of the module is one)."""
    if "pypto.ptoas.dialect.isa_tile_ops" not in sys.modules:
        return []
    from . import isa

    return [text for cls, text in isa.HELPERS.items() if cls in used]


def emit_cpp(module: ModuleOp) -> str:
    """The C++ translation unit of a (verified, synced) ``.pto`` module."""
    funcs = _functions(module)
    if not funcs:
        raise EmitError("the module has no func.func to emit")
    entries = _entries(funcs)
    arch = module.attributes.get("pto.target_arch")
    arch_text = arch.data if isinstance(arch, StringAttr) else "a2a3"
    names = ", ".join(f"@{f.sym_name.data}" for f in funcs)
    out = [f"// ptoas (pypto.ptoas.emitc) C++ for {names}; target {arch_text}.", PREAMBLE]
    used = {type(op) for op in module.walk()}
    out.extend(_isa_helpers(used))
    declarations = [f for f in funcs if not f.body.blocks]
    for f in declarations:
        out.extend(emit_function(f, entries))
    if declarations:
        out.append("")
    called = _called(funcs)
    for f in call_order(funcs):
        name = f.sym_name.data
        out.extend(emit_function(f, entries, launched=name in entries and name not in called))
        out.append("")
    for f in funcs:
        if f.sym_name.data in entries and f.body.blocks:
            out.extend(emit_wrapper(f))
            out.append("")
    return "\n".join(out)
