"""Tile views on both engines (issue 18 item 2): ``subset``, ``bitcast``, ``bind_tile`` and
``declare_tile_memref`` move no data; the interpreter aliases the source's bytes and the C++ assigns
a tile at the source's ``data()``. A write through a view must show in its source and the reverse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_isa_numerics import A, B, Case, check_both_engines, tile

from pypto.device.interpreter.isa_impls import subset_valid

F16 = tile("f32", 16, 16)
H8 = tile("f32", 8, 16)
I16 = tile("i32", 16, 16)
MV = "memref<16x16xf32, #pto.address_space<vec>>"
CFG = "#pto.tile_buf_config<blayout=0 : i32, slayout=0 : i32, s_fractal_size=512, pad=0 : i32>"

VIEWS: dict[str, Case] = {
    # the bottom and top halves of d written through two subsets; the sources read through a subset
    "subset_rows": Case(
        [("a", "f32", 16, 16, False), ("b", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        "%c8 = arith.constant 8 : index\n"
        f"%a_lo = pto.subset %a_t[%c8, %c0] sizes [8, 16] : {F16}\n"
        f"%b_hi = pto.subset %b_t[%c0, %c0] sizes [8, 16] : {F16}\n"
        f"%d_hi = pto.subset %d_t[%c0, %c0] sizes [8, 16] : {F16}\n"
        f"%d_lo = pto.subset %d_t[%c8, %c0] sizes [8, 16] : {F16}\n"
        f"pto.tadd ins(%a_lo, %b_hi : {H8}, {H8}) outs(%d_hi : {H8})\n"
        f"pto.tmul ins(%a_lo, %a_lo : {H8}, {H8}) outs(%d_lo : {H8})",
        {"a": A, "b": B},
        {"d": np.concatenate([A[8:] + B[:8], A[8:] * A[8:]])},
    ),
    # f32 bits read as i32 (e), and i32 output tile written as f32 through a bitcast (d)
    "bitcast": Case(
        [("a", "f32", 16, 16, False), ("e", "i32", 16, 16, True), ("d", "i32", 16, 16, True)],
        f"%z = arith.constant 0 : i32\n"
        f"%ai = pto.bitcast %a_t : {F16} -> {I16}\n"
        f"pto.tadds ins(%ai, %z : {I16}, i32) outs(%e_t : {I16})\n"
        f"%df = pto.bitcast %d_t : {I16} -> {F16}\n"
        f"pto.tadd ins(%a_t, %a_t : {F16}, {F16}) outs(%df : {F16})",
        {"a": A},
        {"e": A.view(np.int32), "d": (A + A).view(np.int32)},
    ),
    # a vec memref bound to a tile config: written by tadd, read by tmul (same bytes)
    "bind_tile": Case(
        [("a", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        f"%m = memref.alloc() : {MV}\n"
        f"%bt = pto.bind_tile %m, %c16, %c16 {{config = {CFG}}} : {MV} -> {MV}\n"
        f"pto.tadd ins(%a_t, %a_t : {F16}, {F16}) outs(%bt : {MV})\n"
        f"pto.tmul ins(%m, %a_t : {MV}, {F16}) outs(%d_t : {F16})",
        {"a": A},
        {"d": (A + A) * A},
    ),
    # the memref form of declare_tile: storage for a FIFO pop (one function pushes and pops, as
    # test_isa_numerics.FIFO)
    "declare_tile_memref": Case(
        [("x", "f32", 16, 16, False), ("y", "f32", 16, 16, True)],
        "%r = arith.constant 0 : i32\n"
        "%p = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0}(%r : i32) -> !pto.pipe\n"
        f"pto.tpush(%x_t, %p : {F16}, !pto.pipe) {{split = 0}}\n"
        f"%t = pto.declare_tile_memref -> {MV}\n"
        f"pto.tpop(%t, %p : {MV}, !pto.pipe) {{split = 0}}\n"
        "%one = arith.constant 1.0 : f32\n"
        f"pto.tadds ins(%t, %one : {MV}, f32) outs(%y_t : {F16})\n"
        "pto.tfree(%p : !pto.pipe) {split = 0}",
        {"x": A},
        {"y": A + np.float32(1)},
    ),
}


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isa-views")


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_agree_on_both_engines(name: str, build_dir: Path) -> None:
    check_both_engines(VIEWS[name], name, build_dir, "view")


def test_subset_valid_dims_follow_ptoas() -> None:
    """``min(size, pv - off % pv)``: clipped at the parent's valid edge, periodic past it."""
    assert subset_valid(16, 12, 8) == 4
    assert subset_valid(16, 16, 8) == 8
    assert subset_valid(16, 0, 8) == 8
    assert subset_valid(0, 0, 8) == 0


def test_a_clipped_subset_reads_only_its_valid_rows(build_dir: Path) -> None:
    """A subset at row 12 of a 16-row tile has 4 valid rows (``min(8, 16 - 12)``): only those are
    written, on both engines (a full 8-row write would run past the tile)."""
    body = (
        "%zf = arith.constant 0.0 : f32\n%c12 = arith.constant 12 : index\n"
        f"pto.tadd ins(%a_t, %a_t : {F16}, {F16}) outs(%d_t : {F16})\n"
        f"%s = pto.subset %a_t[%c12, %c0] sizes [8, 16] : {F16}\n"
        f"%w = pto.subset %d_t[%c12, %c0] sizes [8, 16] : {F16}\n"
        f"pto.tadds ins(%s, %zf : {H8}, f32) outs(%w : {H8})"
    )
    args = [("a", "f32", 16, 16, False), ("d", "f32", 16, 16, True)]
    expect = np.concatenate([A[:12] * 2, A[12:]])
    check_both_engines(Case(args, body, {"a": A}, {"d": expect}), "subset_clip", build_dir, "view")
