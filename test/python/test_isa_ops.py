"""The whole PTO ISA (issue 18 items 1, 2, 6): the op list, PTOAS's syntax, verifiers, pipes, sync insertion.

- ``ptoas/dialect/isa_ops.txt`` names every op of PTOAS's dialect and its status; the ``pto``
  dialect registers exactly those ops, each status agrees with the op class's facts (interpreter
  handler, C++ emitter, NO_INTERPRETER / NO_CPP), and with ``PTOAS_DIR`` pointing at a PTOAS
  checkout the list equals the ops of ``include/PTO/IR/PTOOps.td`` (skipped without one);
- every form PTOAS's tests write parses, verifies and prints back to text that parses again;
- PTOAS's verifier messages for the cases its tests check;
- pipes are class facts; the new data ops take part in insert-sync.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import pypto.ptoas.emitc  # noqa: F401  (registers the C++ emitters)
from pypto.device.interpreter.pto_impls import PTO_HANDLERS
from pypto.ptoas.dialect import PTO, PTO_OPS
from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.dialect.comm_ops import COMM_OPS
from pypto.ptoas.emitc.context import load_all_handlers
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import PTOVerifyError, parse_pto, print_pto, verify_pto


def _load(text: str, name: str = "x.pto") -> object:
    """Parse and verify (as ptoas does)."""
    module = parse_pto(text, name)
    verify_pto(module)
    return module


LIST = Path(__file__).resolve().parents[2] / "ptoas" / "dialect" / "isa_ops.txt"
STATUSES = {"implemented", "interpreter-only", "no-op-on-simulator", "trap", "verify-only"}


def _entries() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in LIST.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, status = line.split()[:2]
            assert f"pto.{name}" not in out, f"{name} is listed twice"
            out[f"pto.{name}"] = status
    return out


def test_the_list_names_186_ops_with_known_statuses() -> None:
    entries = _entries()
    assert len(entries) == 186
    assert set(entries.values()) <= STATUSES, set(entries.values()) - STATUSES


COMM = {op.name for op in COMM_OPS}
"""The cross-rank ``pto.comm.*`` ops: newer than the 186-op PTOOps.td snapshot (upstream PyPTO emits them)."""


def test_the_dialect_registers_exactly_the_listed_ops() -> None:
    registered = {op.name for op in PTO.operations} - COMM
    assert registered == set(_entries()), (sorted(set(_entries()) - registered), sorted(registered - set(_entries())))


@pytest.mark.parametrize("op", COMM_OPS, ids=[o.name for o in COMM_OPS])
def test_comm_ops_run_on_the_interpreter_and_trap_in_cpp(op: type) -> None:
    assert op in PTO_HANDLERS and op in load_all_handlers(), op.name


@pytest.mark.parametrize("op", [o for o in PTO_OPS if o.name not in COMM], ids=[o.name for o in PTO_OPS if o.name not in COMM])
def test_status_agrees_with_the_op_facts(op: type) -> None:
    status = _entries()[op.name]
    interp, cpp = op in PTO_HANDLERS, op in load_all_handlers()
    if status == "implemented":
        assert interp and cpp, f"{op.name}: listed implemented but interpreter={interp} C++={cpp}"
    elif status == "interpreter-only":
        assert interp and not cpp and op.NO_CPP, op.name
    elif status in ("no-op-on-simulator", "trap"):
        assert interp, f"{op.name}: listed {status} but the interpreter does not accept it"
    else:
        assert not interp and op.NO_INTERPRETER, f"{op.name}: listed verify-only but has a handler or no reason"


def test_the_list_matches_ptoas_ops_td() -> None:
    root = os.environ.get("PTOAS_DIR")
    td = Path(root, "include", "PTO", "IR", "PTOOps.td") if root else None
    if td is None or not td.is_file():
        pytest.skip("set PTOAS_DIR to a PTOAS checkout to compare with its PTOOps.td")
    names = set(re.findall(r'^def \w+\s*:\s*\w+<"([^"]+)"', td.read_text(), re.M))
    assert {f"pto.{n}" for n in names} == set(_entries())


# ----------------------------------------------------------------------------- syntax

VEC = "!pto.tile_buf<loc=vec, dtype={dt}, rows={r}, cols={c}, v_row={r}, v_col={c}, blayout=row_major, slayout=none_box, fractal=512, pad=0>"


def vec(dt: str = "f32", r: int = 16, c: int = 16) -> str:
    return VEC.format(dt=dt, r=r, c=c)


def _module(body: str, args: str = "", arch: str = "a2a3") -> str:
    return (
        f'module attributes {{pto.target_arch = "{arch}"}} {{\n  func.func @k({args}) {{\n'
        "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
        "    %i0 = arith.constant 0 : i32\n    %f0 = arith.constant 0.5 : f32\n"
        f"{body}    return\n  }}\n}}\n"
    )


def _tiles(**kinds: str) -> str:
    return "".join(f"    %{n} = pto.alloc_tile : {t}\n" for n, t in kinds.items())


F, I32, U32 = vec(), vec("i32"), vec("ui32")
ROW = vec(r=1, c=16)
FORMS = {
    "tfmod": _tiles(a=F, b=F, d=F) + f"    pto.tfmod ins(%a, %b : {F}, {F}) outs(%d : {F})\n",
    "tfmods": _tiles(a=F, d=F) + f"    pto.tfmods ins(%a, %f0 : {F}, f32) outs(%d : {F})\n",
    "trem_tmp": _tiles(a=F, b=F, t=F, d=F) + f"    pto.trem ins(%a, %b, %t : {F}, {F}, {F}) outs(%d : {F})\n",
    "trems_tmp": _tiles(a=F, t=F, d=F) + f"    pto.trems ins(%a, %f0, %t : {F}, f32, {F}) outs(%d : {F})\n",
    "trowmax_1in": _tiles(a=F, d=vec(c=1)) + f"    pto.trowmax ins(%a : {F}) outs(%d : {vec(c=1)})\n",
    "tcolprod": _tiles(a=F, d=ROW) + f"    pto.tcolprod ins(%a : {F}) outs(%d : {ROW})\n",
    "tcolargmax": _tiles(a=F, t=F, d=vec("i32", 1, 16))
    + f"    pto.tcolargmax ins(%a, %t : {F}, {F}) outs(%d : {vec('i32', 1, 16)})\n",
    "tconcat": _tiles(a=vec(c=8), b=vec(c=8), d=F)
    + f"    pto.tconcat ins(%a, %b : {vec(c=8)}, {vec(c=8)}) outs(%d : {F})\n",
    "tci": _tiles(d=I32) + f"    pto.tci ins(%i0 {{descending = true}} : i32) outs(%d : {I32})\n",
    "ttri": _tiles(d=I32) + f"    pto.ttri ins(%i0 {{upperOrLower = 1 : i32}} : i32) outs(%d : {I32})\n",
    "tsels": _tiles(m=vec("i8"), a=F, t=F, d=F)
    + f"    pto.tsels ins(%m, %a, %t, %f0 : {vec('i8')}, {F}, {F}, f32) outs(%d : {F})\n",
    "tgather_index": _tiles(a=F, ix=I32, d=F) + f"    pto.tgather ins(%a, %ix : {F}, {I32}) outs(%d : {F})\n",
    "tgather_mask": _tiles(a=F, d=F)
    + f"    pto.tgather ins(%a, {{maskPattern = #pto.mask_pattern<P0101>}} : {F}) outs(%d : {F})\n",
    "tgather_compare": _tiles(a=F, t=F, d=I32, cd=I32)
    + f"    pto.tgather ins(%a, %f0, %t : {F}, f32, {F}) outs(%d, %cd : {I32}, {I32})\n",
    "tmrgsort_format1": _tiles(a=vec(r=1, c=128), d=vec(r=1, c=128))
    + f"    %bl = arith.constant 64 : i32\n    pto.tmrgsort ins(%a, %bl : {vec(r=1, c=128)}, i32) outs(%d : {vec(r=1, c=128)})\n",
    "tmrgsort_format2": _tiles(a=vec(r=1, c=128), b=vec(r=1, c=128), t=vec(r=1, c=256), d=vec(r=1, c=256))
    + "    %ex = arith.constant dense<0> : vector<4xi16>\n"
    + f"    pto.tmrgsort ins(%a, %b, %t {{exhausted = true}} : {vec(r=1, c=128)}, {vec(r=1, c=128)}, {vec(r=1, c=256)}) "
    f"outs(%d, %ex : {vec(r=1, c=256)}, vector<4xi16>)\n",
    "tsort32": _tiles(a=vec(r=1, c=32), ix=vec("ui32", 1, 32), d=vec(r=1, c=64))
    + f"    pto.tsort32 ins(%a, %ix : {vec(r=1, c=32)}, {vec('ui32', 1, 32)}) outs(%d : {vec(r=1, c=64)})\n",
    "tquant_sym": _tiles(a=F, fp=F, d=vec("i8"))
    + f"    pto.tquant ins(%a, %fp : {F}, {F}) outs(%d : {vec('i8')}) {{quant_type = #pto<quant_type INT8_SYM>}}\n",
    "tgetval_tsetval": _tiles(a=F)
    + f"    %v = pto.tgetval ins(%a, %c1 : {F}, index) outs : f32\n"
    + f"    pto.tsetval ins(%c0, %v : index, f32) outs(%a : {F})\n",
    "tscatter": _tiles(a=F, ix=I32, d=F) + f"    pto.tscatter ins(%a, %ix : {F}, {I32}) outs(%d : {F})\n",
    "tfillpad": _tiles(a=F, d=F)
    + f"    pto.tfillpad_expand ins(%a : {F}) outs(%d : {F})\n    pto.tfillpad_inplace ins(%d : {F}) outs(%d : {F})\n",
    "tsync_trap_print": _tiles(a=F)
    + f'    pto.tsync ins(%a : {F})\n    pto.print ins("x=%d", %i0 : i32)\n    pto.trap\n',
    "eventid_array": "    %arr = pto.declare_eventid_array -> !pto.eventid_array<4>\n"
    "    %e = pto.eventid_array_get %arr[%c0] : !pto.eventid_array<4>\n"
    "    pto.eventid_array_set %arr[%c1], %e : !pto.eventid_array<4>\n"
    "    pto.get_buf [#pto.pipe_event_type<TLOAD>, 0]\n    pto.rls_buf [#pto.pipe_event_type<TLOAD>, 0] {mode = 1 : i32}\n",
    "reserve_import_pipe": '    %r = pto.reserve_buffer {name = "f", size = 8192, location = <vec>, auto = true} -> i32\n'
    '    %m = pto.import_reserved_buffer {name = "g", peer_func = @k} -> i32\n'
    "    %p = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8}(%r : i32) -> !pto.pipe\n"
    "    pto.aiv_initialize_pipe {dir_mask = 1, slot_size = 1024, nosplit = true} (c2v_consumer_buf = %r : i32, v2c_consumer_buf = %m : i32)\n"
    f"    %t = pto.declare_tile -> {F}\n    pto.tpop(%t, %p : {F}, !pto.pipe) {{split = 1}}\n"
    "    pto.tfree(%p : !pto.pipe) {split = 1}\n"
    f"    pto.tpush(%t, %p : {F}, !pto.pipe) {{split = 0}}\n",
    "async": _tiles(s=vec("i8", 1, 256))
    + f"    %ses = pto.build_async_session(%s, %ws : {vec('i8', 1, 256)}, memref<1024xi8, #pto.address_space<gm>>) "
    "{sync_id = 1 : i32} -> !pto.async_session\n"
    "    %ev = pto.tput_async(%dst, %src, %ses : memref<128xf32, #pto.address_space<gm>>, memref<128xf32, "
    "#pto.address_space<gm>>, !pto.async_session) -> !pto.async_event\n"
    "    %ok = pto.wait_async_event(%ev, %ses : !pto.async_event, !pto.async_session) -> i1\n"
    "    %ok2 = pto.test_async_event(%ev, %ses : !pto.async_event, !pto.async_session) -> i1\n",
    "scalars_views": "    %x = pto.load_scalar %p[%c0] : !pto.ptr<f32> -> f32\n    pto.store_scalar %x, %p[%c1] : !pto.ptr<f32>, f32\n"
    + _tiles(a=F)
    + f"    %s = pto.subset %a[%c0, %c0] sizes [8, 16] : {F}\n    %b = pto.bitcast %a : {F} -> {I32}\n",
}
ARGS = {
    "async": "%ws: memref<1024xi8, #pto.address_space<gm>>, %dst: memref<128xf32, #pto.address_space<gm>>, "
    "%src: memref<128xf32, #pto.address_space<gm>>",
    "scalars_views": "%p: !pto.ptr<f32>",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_ptoas_forms_parse_verify_and_round_trip(form: str) -> None:
    text = _module(FORMS[form], ARGS.get(form, ""))
    module = _load(text, f"{form}.pto")
    printed = print_pto(module)
    again = print_pto(_load(printed, f"{form}-2.pto"))
    assert printed == again
    op_name = FORMS[form].split("pto.")[-1].split()[0].split("(")[0]
    assert f"pto.{op_name}" in printed


def test_tmrgsort_format2_prints_exhausted_and_tgather_mask_form() -> None:
    printed = print_pto(
        _load(
            _module(FORMS["tmrgsort_format2"] + FORMS["tgather_mask"].replace("%a", "%g").replace("%d", "%gd")), "x.pto"
        )
    )
    assert "{exhausted = true}" in printed
    assert "{maskPattern = #pto.mask_pattern<P0101>}" in printed


# ----------------------------------------------------------------------------- verifiers

INVALID = {
    "thistogram is only supported on A5": _tiles(s=vec("ui16", 8, 32), ix=vec("ui8", 8, 1), d=vec("ui32", 8, 256))
    + f"    pto.thistogram ins(%s, %ix : {vec('ui16', 8, 32)}, {vec('ui8', 8, 1)}) outs(%d : {vec('ui32', 8, 256)})\n",
    "INT8_ASYM quantization requires an offset operand": _tiles(a=F, fp=F, d=vec("ui8"))
    + f"    pto.tquant ins(%a, %fp : {F}, {F}) outs(%d : {vec('ui8')}) {{quant_type = #pto<quant_type INT8_ASYM>}}\n",
    "expects dst element type i8 for INT8_SYM quantization": _tiles(a=F, fp=F, d=vec("ui8"))
    + f"    pto.tquant ins(%a, %fp : {F}, {F}) outs(%d : {vec('ui8')}) {{quant_type = #pto<quant_type INT8_SYM>}}\n",
    "expects A2/A3 compare-form tgather src element type to be f16/f32, or i32 when cmpMode=eq": _tiles(
        a=vec("i16"), t=vec("i8"), d=I32, cd=I32
    )
    + "    %k = arith.constant 0 : i16\n"
    + f"    pto.tgather ins(%a, %k, %t : {vec('i16')}, i16, {vec('i8')}) outs(%d, %cd : {I32}, {I32})\n",
    "expects src0, src1, and dst to have the same element type": _tiles(a=F, b=I32, d=F)
    + f"    pto.tconcat ins(%a, %b : {F}, {I32}) outs(%d : {F})\n",
    "expects A2/A3 tfmod element type to be i32/i16/f16/f32": _tiles(a=vec("i8"), b=vec("i8"), d=vec("i8"))
    + f"    pto.tfmod ins(%a, %b : {vec('i8')}, {vec('i8')}) outs(%d : {vec('i8')})\n",
    "expects 'location' to be #pto.address_space<vec> or #pto.address_space<mat>": "    %r = pto.reserve_buffer "
    '{name = "f", size = 8192, location = #pto.address_space<acc>, auto = true} -> i32\n',
    "expects dst to be a static flat contiguous logical 1D GM memref": _tiles(s=vec("i8", 1, 256))
    + f"    %ses = pto.build_async_session(%s, %ws : {vec('i8', 1, 256)}, memref<1024xi8, #pto.address_space<gm>>) -> !pto.async_session\n"
    "    %ev = pto.tput_async(%d2, %src, %ses : memref<4x32xf32, #pto.address_space<gm>>, memref<128xf32, "
    "#pto.address_space<gm>>, !pto.async_session) -> !pto.async_event\n",
}
INVALID_ARGS = {
    "expects dst to be a static flat contiguous logical 1D GM memref": "%ws: memref<1024xi8, #pto.address_space<gm>>, "
    "%d2: memref<4x32xf32, #pto.address_space<gm>>, %src: memref<128xf32, #pto.address_space<gm>>",
}


@pytest.mark.parametrize("message", sorted(INVALID))
def test_ptoas_verifier_messages(message: str) -> None:
    text = _module(INVALID[message], INVALID_ARGS.get(message, ""))
    with pytest.raises(PTOVerifyError, match=re.escape(message)):
        _load(text, "bad.pto")


def test_a5_only_ops_verify_on_a5() -> None:
    text = _module(INVALID["thistogram is only supported on A5"], arch="a5")
    assert "pto.thistogram" in print_pto(_load(text, "ok.pto"))


# ----------------------------------------------------------------------------- pipes and sync


def _op(module: object, name: str) -> object:
    return next(o for o in module.walk() if o.name == name)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("form", "op", "pipe"),
    [
        ("tfmod", "pto.tfmod", Pipe.PIPE_V),
        ("tgetval_tsetval", "pto.tsetval", Pipe.PIPE_S),
        ("tscatter", "pto.tscatter", Pipe.PIPE_S),
        ("async", "pto.tput_async", Pipe.PIPE_MTE3),
        ("reserve_import_pipe", "pto.tpop", Pipe.PIPE_MTE2),
        ("reserve_import_pipe", "pto.tpush", Pipe.PIPE_MTE3),
        ("reserve_import_pipe", "pto.tfree", Pipe.PIPE_S),
    ],
)
def test_pipes_are_op_facts(form: str, op: str, pipe: Pipe) -> None:
    module = _load(_module(FORMS[form], ARGS.get(form, "")), "p.pto")
    assert _op(module, op).pipe() == pipe  # type: ignore[attr-defined]


def test_insert_sync_orders_new_ops_on_different_pipes() -> None:
    """tsetval (PIPE_S) writes a tile tfmod (PIPE_V) then reads: insert-sync puts a flag pair between them."""
    body = (
        _tiles(a=F, b=F, d=F)
        + f"    pto.tsetval ins(%c0, %f0 : index, f32) outs(%a : {F})\n"
        + f"    pto.tfmod ins(%a, %b : {F}, {F}) outs(%d : {F})\n"
        + f"    %v = pto.tgetval ins(%d, %c1 : {F}, index) outs : f32\n"
    )
    module = _load(_module(body), "s.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    text = print_pto(module)
    lines = [ln.strip() for ln in text.splitlines()]
    i_set = next(i for i, ln in enumerate(lines) if ln.startswith("pto.tsetval"))
    i_mod = next(i for i, ln in enumerate(lines) if ln.startswith("pto.tfmod"))
    i_get = next(i for i, ln in enumerate(lines) if "pto.tgetval" in ln)
    between = lines[i_set:i_mod]
    assert any("set_flag[<PIPE_S>, <PIPE_V>" in ln for ln in between), "\n".join(lines)
    assert any("wait_flag[<PIPE_S>, <PIPE_V>" in ln for ln in between), "\n".join(lines)
    after = lines[i_mod:i_get]
    assert any("wait_flag[<PIPE_V>, <PIPE_S>" in ln for ln in after), "\n".join(lines)


def test_target_costs_the_new_ops() -> None:
    """No formula row exists for the new ops: documented fallback rows in a2a3.mlir (scalar scatter, gather)
    or the pipe's row; pipes agree with the dialect's."""
    from pypto.target.model import load_target

    t = load_target("a2a3")
    assert t.pipe_of("TSCATTER") == "SCALAR" and t.compute_cycles("TSCATTER", "fp32", 16, 16) == 2 + 256
    assert t.compute_cycles("TGATHER", "fp32", 16, 16) == 2 + 256 // 16
    assert t.compute_cycles("TGETVAL", "fp32", 1, 1) == 1
    assert t.compute_cycles("TFMOD", "fp32", 16, 16) == t.fallback_cycles("TADD_UNLISTED", "fp32", 16, 16)
    for name, pipe in (
        ("TPUT_ASYNC", "MTE3"),
        ("TGET_ASYNC", "MTE2"),
        ("TMATMUL_MX_ACC", "CUBE"),
        ("TSTORE_FP", "FIXPIPE"),
    ):
        assert t.pipe_of(name) == pipe, name


def _lines(module: object) -> list[str]:
    return [ln.strip() for ln in print_pto(module).splitlines()]  # type: ignore[arg-type]


def test_plan_memory_keeps_a_tile_live_through_its_bitcast_view() -> None:
    """%a's last use is through %v = bitcast %a: %c, allocated before that use, must not share %a's bytes."""
    body = (
        _tiles(a=F, b=F)
        + f"    pto.texpands ins(%f0 : f32) outs(%a : {F})\n"
        + f"    %v = pto.bitcast %a : {F} -> {I32}\n"
        + _tiles(c=F)
        + f"    pto.texpands ins(%f0 : f32) outs(%c : {F})\n"
        + f"    pto.tadd ins(%c, %c : {F}, {F}) outs(%b : {F})\n"
        + f"    pto.tci ins(%i0 : i32) outs(%v : {I32})\n"
    )
    module = _load(_module(body), "pm.pto")
    run_ptoas_pipeline(module, PtoasOptions(memory_planner=True, insert_sync=False))
    addrs = {}
    for op in module.walk():  # type: ignore[attr-defined]
        if op.name == "pto.alloc_tile" and op.addr is not None:
            addrs[op.result.name_hint] = op.addr.owner.value.value.data
    assert set(addrs) == {"a", "b", "c"}, addrs
    size = 16 * 16 * 4
    assert abs(addrs["a"] - addrs["c"]) >= size, addrs


def test_insert_sync_covers_fifo_and_async_ops() -> None:
    """tpop (MTE2) -> tadd (V) and tput_async (MTE3) -> tget_async (MTE2) on the same GM get flag pairs."""
    fifo = (
        "    %r = arith.constant 0 : i32\n"  # one function: a fixed local address and flag_base (no peer pair)
        "    %p = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0}(%r : i32) -> !pto.pipe\n"
        + f"    %t = pto.declare_tile -> {F}\n"
        + _tiles(o=F)
        + f"    pto.tpop(%t, %p : {F}, !pto.pipe) {{split = 0}}\n"
        + f"    pto.tadd ins(%t, %t : {F}, {F}) outs(%o : {F})\n"
        + "    pto.tfree(%p : !pto.pipe) {split = 0}\n"
    )
    asyncs = FORMS["async"].split("    %ok =")[0] + (
        "    %ev2 = pto.tget_async(%src, %dst, %ses : memref<128xf32, #pto.address_space<gm>>, memref<128xf32, "
        "#pto.address_space<gm>>, !pto.async_session) -> !pto.async_event\n"
    )
    module = _load(_module(fifo + asyncs, ARGS["async"]), "sync.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    lines = _lines(module)
    i_pop = next(i for i, ln in enumerate(lines) if ln.startswith("pto.tpop("))
    i_add = next(i for i, ln in enumerate(lines) if ln.startswith("pto.tadd"))
    assert any(ln.startswith("pto.wait_flag[<PIPE_MTE2>, <PIPE_V>") for ln in lines[i_pop:i_add]), "\n".join(lines)
    i_put = next(i for i, ln in enumerate(lines) if "pto.tput_async" in ln)
    i_get = next(i for i, ln in enumerate(lines) if "pto.tget_async" in ln)
    assert any(ln.startswith("pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>") for ln in lines[i_put:i_get]), "\n".join(lines)


ACC = (
    "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, "
    "slayout=row_major, fractal=1024, pad=0>"
)
MAT8 = (
    "!pto.tile_buf<loc=mat, dtype=i8, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
SCALE = (
    "!pto.tile_buf<loc=scaling, dtype=f16, rows=1, cols=16, v_row=1, v_col=16, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)


def test_tmov_quant_forms_and_ptoas_generic_operand_order() -> None:
    """tmov with an fp tile or a pre-quant scalar (custom form) and PTOAS's generic form (src, dst, fp, preQuant)."""
    body = (
        _tiles(s=ACC, d=MAT8, fp=SCALE)
        + "    %q = arith.constant 7 : i64\n"
        + f"    pto.tmov ins(%s : {ACC}, %fp : {SCALE}) outs(%d : {MAT8})\n"
        + f"    pto.tmov ins(%s : {ACC}, %q : i64) outs(%d : {MAT8})\n"
        + f'    "pto.tmov"(%s, %d, %q) <{{operandSegmentSizes = array<i32: 1, 1, 0, 1>, '
        f"reluPreMode = #pto<relu_pre_mode normal_relu>}}> : ({ACC}, {MAT8}, i64) -> ()\n"
    )
    module = _load(_module(body), "tmov.pto")
    movs = [op for op in module.walk() if op.name == "pto.tmov"]  # type: ignore[attr-defined]
    assert [m.fp is not None for m in movs] == [True, False, False]
    assert [m.pre_quant is not None for m in movs] == [False, True, True]
    assert all(m.outs()[0].name_hint == "d" for m in movs)
    printed = print_pto(module)
    assert printed.count(f"pto.tmov ins(%s : {ACC}, %q : i64) outs(%d : {MAT8})") == 2
    assert movs[2].reluPreMode is not None  # PTOAS's generic form keeps it in <{...}>
    assert print_pto(_load(printed)) == printed
