"""PTOAS's rules on FIFO pipe inits over reserved buffers (``pypto.ptoas.passes.fifo_rules``)."""

from __future__ import annotations

import re

import pytest

from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import PTOVerifyError, parse_pto

RESERVE = '%r = pto.reserve_buffer {name = "c2v", size = 4096, location = #pto.address_space<mat>, auto = true} -> i32'
IMPORT = '%r = pto.import_reserved_buffer {name = "c2v", peer_func = @cube} -> i32'
INIT = "%p = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8{extra}}}(%r : i32) -> !pto.pipe"


def _module(cube: list[str], vector: list[str]) -> str:
    def func(name: str, kind: str, lines: list[str]) -> str:
        body = "".join(f"    {ln}\n" for ln in lines)
        return f"  func.func @{name}() attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{\n{body}    return\n  }}\n"

    return (
        'module attributes {pto.target_arch = "a5"} {\n'
        + func("cube", "cube", cube)
        + func("vector", "vector", vector)
        + "}\n"
    )


@pytest.mark.parametrize(
    ("cube", "vector", "error"),
    [
        ([RESERVE, INIT.format(extra="")], [IMPORT, INIT.format(extra="")], None),
        ([RESERVE, INIT.format(extra="")], [IMPORT], "requires a complete peer init pair"),
        (
            ["%r = arith.constant 0 : i32", INIT.format(extra="")],
            [],
            "requires local_addr to come from pto.reserve_buffer",
        ),
        (["%r = arith.constant 0 : i32", INIT.format(extra=", flag_base = 0")], [], None),
    ],
)
def test_peer_init_rules(cube: list[str], vector: list[str], error: str | None) -> None:
    module = parse_pto(_module(cube, vector), "k.pto")
    if error is None:
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=False))
        return
    with pytest.raises(PTOVerifyError, match=f"'pto.initialize_l2l_pipe' op {error}"):
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=False))


ACC = "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"
VEC = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"


def _frontend(cube_split: int, vec_split: int, cube_nosplit: str = "") -> str:
    extra = f", nosplit = {cube_nosplit}" if cube_nosplit else ""
    cube = [
        '%r = pto.import_reserved_buffer {name = "c2v", peer_func = @vector} -> i32',
        f"pto.aic_initialize_pipe {{dir_mask = 1, slot_size = 1024{extra}}}(c2v_consumer_buf = %r : i32, v2c_consumer_buf = %r : i32)",
        f"%a = pto.alloc_tile : {ACC}",
        f"pto.tpush_to_aiv(%a : {ACC}) {{split = {cube_split}}}",
    ]
    vector = [
        '%r = pto.reserve_buffer {name = "c2v", size = 4096, location = #pto.address_space<vec>, auto = true} -> i32',
        "pto.aiv_initialize_pipe {dir_mask = 1, slot_size = 1024}(c2v_consumer_buf = %r : i32, v2c_consumer_buf = %r : i32)",
        f"%t = pto.tpop_from_aic {{split = {vec_split}}} -> {VEC}",
        f"pto.tfree_from_aic {{split = {vec_split}}}",
    ]
    return _module(cube, vector)


@pytest.mark.parametrize(
    ("cube_split", "vec_split", "nosplit", "error"),
    [
        (0, 0, "", None),
        (1, 1, "false", None),
        (1, 0, "", "conflicting pipe split usage across peer pipe init ops"),
        (0, 0, "false", "explicit 'nosplit = false' conflicts with downstream users that require split = 0"),
        (1, 1, "true", "explicit 'nosplit = true' conflicts with downstream users that require split = 1 or split = 2"),
    ],
)
def test_nosplit_rules(cube_split: int, vec_split: int, nosplit: str, error: str | None) -> None:
    module = parse_pto(_frontend(cube_split, vec_split, nosplit), "k.pto")
    if error is None:
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=False))
        return
    with pytest.raises(PTOVerifyError, match=f"^'pto.initialize_l2l_pipe' op {re.escape(error)}$"):
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=False))
