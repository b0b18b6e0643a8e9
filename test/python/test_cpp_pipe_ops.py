"""Cube <-> vector pipes in C++ (pypto.ptoas.emitc + ptoas/include/pto_cpu.hpp).

Hand-written ``.pto`` kernels, synced by insert-sync, emitted to C++, built with g++ into one
library per kernel and run on numpy arrays:

- c2v: the cube kernel computes ``a @ b`` (tload mat, tmov left/right, tmatmul) and pushes the
  acc tile with ``tpush_to_aiv``; the vector kernel pops it (``tpop_from_aic``, static or dynamic
  valid dims), adds a bias and stores ``y == a @ b + bias``;
- v2c: the vector kernel pushes ``x`` (``tpush_to_aic``), the cube kernel pops it into a mat tile
  (``tpop_from_aiv``) and stores ``x @ b``;
- the header's checks: popping an empty FIFO, a popped tile of another valid shape, a slot never
  freed, a free without a pop and ``split != 0`` fail with clear messages.

The FIFOs are process-wide (shared by the two libraries); every test empties them first with
``pto_cpu_reset_pipes()``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary, KernelRuntimeError
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto

MAT = (
    "!pto.tile_buf<loc=mat, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, "
    "slayout=row_major, fractal=512, pad=0>"
)
LEFT = (
    "!pto.tile_buf<loc=left, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, "
    "slayout=row_major, fractal=512, pad=0>"
)
RIGHT = (
    "!pto.tile_buf<loc=right, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, "
    "slayout=col_major, fractal=512, pad=0>"
)
ACC = (
    "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, "
    "slayout=row_major, fractal=1024, pad=0>"
)
VEC = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
VEC_DYN = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
TV = "!pto.tensor_view<?x?xf32>"
PV = "!pto.partition_tensor_view<16x16xf32>"


def _view(name: str, arg: str) -> str:
    """A 16x16 row-major tensor view of ``arg`` and its whole partition ``%<name>``."""
    return (
        f"    %{name}_tv = pto.make_tensor_view {arg}, shape = [%c16, %c16], strides = [%c16, %c1] : {TV}\n"
        f"    %{name} = pto.partition_view %{name}_tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : {TV} -> {PV}\n"
    )


CONSTS = (
    "    %c0 = arith.constant 0 : index\n"
    "    %c1 = arith.constant 1 : index\n"
    "    %c8 = arith.constant 8 : index\n"
    "    %c16 = arith.constant 16 : index\n"
)


def _module(name: str, kind: str, params: str, body: str) -> str:
    return (
        'module attributes {pto.target_arch = "a2a3"} {\n'
        f"  func.func @{name}({params}) attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{\n"
        f"{CONSTS}{body}"
        "    return\n"
        "  }\n"
        "}\n"
    )


# ----------------------------------------------------------------------------- c2v kernels

CUBE_MATMUL_PUSH = _module(
    "cube_matmul_push",
    "cube",
    "%a: !pto.ptr<f32>, %b: !pto.ptr<f32>",
    _view("pa", "%a")
    + _view("pb", "%b")
    + f"""\
    %aMat = pto.alloc_tile : {MAT}
    %bMat = pto.alloc_tile : {MAT}
    %aLeft = pto.alloc_tile : {LEFT}
    %bRight = pto.alloc_tile : {RIGHT}
    %cAcc = pto.alloc_tile : {ACC}
    pto.tload ins(%pa : {PV}) outs(%aMat : {MAT})
    pto.tload ins(%pb : {PV}) outs(%bMat : {MAT})
    pto.tmov ins(%aMat : {MAT}) outs(%aLeft : {LEFT})
    pto.tmov ins(%bMat : {MAT}) outs(%bRight : {RIGHT})
    pto.tmatmul ins(%aLeft, %bRight : {LEFT}, {RIGHT}) outs(%cAcc : {ACC})
    pto.tpush_to_aiv(%cAcc : {ACC}) {{split = 0}}
""",
)


def _vector_pop_bias(pop: str = "pto.tpop_from_aic {split = 0}", tile: str = VEC, free: bool = True) -> str:
    """Vector kernel: ``%c = <pop> -> tile``; y = c + bias; tfree (unless ``free`` is False)."""
    return _module(
        "vector_pop_bias",
        "vector",
        "%bias: !pto.ptr<f32>, %y: !pto.ptr<f32>",
        _view("pbias", "%bias")
        + _view("py", "%y")
        + f"""\
    %c = {pop} -> {tile}
    %biasT = pto.alloc_tile : {VEC}
    %out = pto.alloc_tile : {VEC}
    pto.tload ins(%pbias : {PV}) outs(%biasT : {VEC})
    pto.tadd ins(%c, %biasT : {tile}, {VEC}) outs(%out : {VEC})
"""
        + ("    pto.tfree_from_aic {split = 0}\n" if free else "")
        + f"    pto.tstore ins(%out : {VEC}) outs(%py : {PV})\n",
    )


# ----------------------------------------------------------------------------- v2c kernels

VECTOR_PUSH = _module(
    "vector_push",
    "vector",
    "%x: !pto.ptr<f32>",
    _view("px", "%x")
    + f"""\
    %xT = pto.alloc_tile : {VEC}
    pto.tload ins(%px : {PV}) outs(%xT : {VEC})
    pto.tpush_to_aic(%xT : {VEC}) {{split = 0}}
""",
)

CUBE_POP_MATMUL = _module(
    "cube_pop_matmul",
    "cube",
    "%b: !pto.ptr<f32>, %y: !pto.ptr<f32>",
    _view("pb", "%b")
    + _view("py", "%y")
    + f"""\
    %xMat = pto.tpop_from_aiv {{split = 0}} -> {MAT}
    %bMat = pto.alloc_tile : {MAT}
    %xLeft = pto.alloc_tile : {LEFT}
    %bRight = pto.alloc_tile : {RIGHT}
    %cAcc = pto.alloc_tile : {ACC}
    pto.tload ins(%pb : {PV}) outs(%bMat : {MAT})
    pto.tmov ins(%xMat : {MAT}) outs(%xLeft : {LEFT})
    pto.tfree_from_aiv {{split = 0}}
    pto.tmov ins(%bMat : {MAT}) outs(%bRight : {RIGHT})
    pto.tmatmul ins(%xLeft, %bRight : {LEFT}, {RIGHT}) outs(%cAcc : {ACC})
    pto.tstore ins(%cAcc : {ACC}) outs(%py : {PV})
""",
)


# ----------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ptoas-pipes")


def _synced_cpp(text: str, name: str) -> str:
    module = parse_pto(text, name)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    return emit_cpp(module)


def _library(build_dir: Path, text: str, name: str) -> KernelLibrary:
    lib = KernelLibrary(build_shared(_synced_cpp(text, name), build_dir, name=name))
    lib.lib.pto_cpu_reset_pipes()
    return lib


def _pending(lib: KernelLibrary, direction: int) -> int:
    """Entries waiting in a FIFO (0: cube -> vector, 1: vector -> cube)."""
    return int(lib.lib.pto_cpu_pipe_size(direction))


def _rand(rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal((16, 16)).astype(np.float32)


# ----------------------------------------------------------------------------- emitted C++


def test_emitted_calls() -> None:
    """tpush/tpop/tfree become the pto-isa calls; the popped tile is declared and placed first."""
    cube = _synced_cpp(CUBE_MATMUL_PUSH, "cube")
    assert "TPUSH_TO_AIV(" in cube and ", 0);" in cube
    # insert-sync orders the push (PIPE_FIX, acc tile) after the matmul (PIPE_M).
    assert "set_flag(PIPE_M, PIPE_FIX, " in cube and "wait_flag(PIPE_M, PIPE_FIX, " in cube
    vec = _synced_cpp(_vector_pop_bias(), "vec")
    lines = [ln.strip() for ln in vec.splitlines()]
    pop = next(i for i, ln in enumerate(lines) if ln.startswith("TPOP_FROM_AIC("))
    tile = lines[pop].removeprefix("TPOP_FROM_AIC(").split(",")[0]
    assert lines[pop] == f"TPOP_FROM_AIC({tile}, 0);"
    assert lines[pop - 1] == f"TASSIGN({tile}, {lines[pop - 2].split()[1]});"
    assert any(ln.startswith("Tile<TileType::Vec, float, 16, 16,") and ln.endswith(f" {tile};") for ln in lines)
    assert "TFREE_FROM_AIC(0);" in lines
    # the tadd (PIPE_V) waits for the pop (PIPE_MTE2).
    assert any(ln.startswith("wait_flag(PIPE_MTE2, PIPE_V, ") for ln in lines[pop:])
    dyn = _synced_cpp(_vector_pop_bias("pto.tpop_from_aic(%c16, %c16) {split = 0}", VEC_DYN), "vec_dyn")
    assert "Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, -1, -1," in dyn
    v2c = _synced_cpp(CUBE_POP_MATMUL, "v2c")
    assert "TPOP_FROM_AIV(" in v2c and "TFREE_FROM_AIV(0);" in v2c
    assert "TPUSH_TO_AIC(" in _synced_cpp(VECTOR_PUSH, "push")


# ----------------------------------------------------------------------------- running


@pytest.mark.parametrize(
    ("pop", "tile"),
    [("pto.tpop_from_aic {split = 0}", VEC), ("pto.tpop_from_aic(%c16, %c16) {split = 0}", VEC_DYN)],
    ids=["static", "dynamic"],
)
def test_cube_to_vector(build_dir: Path, pop: str, tile: str) -> None:
    """y = a @ b + bias: the cube's acc tile reaches the vector kernel through the c2v FIFO."""
    cube = _library(build_dir, CUBE_MATMUL_PUSH, "cube_matmul_push")
    vec = _library(build_dir, _vector_pop_bias(pop, tile), "vector_pop_bias")
    rng = np.random.default_rng(0)
    a, b, bias = _rand(rng), _rand(rng), _rand(rng)
    y = np.full((16, 16), np.nan, dtype=np.float32)
    cube.call("cube_matmul_push", a, b)
    assert _pending(vec, 0) == 1  # the vector library sees the cube library's push
    vec.call("vector_pop_bias", bias, y)
    assert _pending(cube, 0) == 0
    np.testing.assert_allclose(y, a @ b + bias, rtol=1e-5, atol=1e-5)


def test_vector_to_cube(build_dir: Path) -> None:
    """y = x @ b: the vector's tile reaches the cube kernel's mat tile through the v2c FIFO."""
    vec = _library(build_dir, VECTOR_PUSH, "vector_push")
    cube = _library(build_dir, CUBE_POP_MATMUL, "cube_pop_matmul")
    rng = np.random.default_rng(1)
    x, b = _rand(rng), _rand(rng)
    y = np.full((16, 16), np.nan, dtype=np.float32)
    vec.call("vector_push", x)
    assert (_pending(cube, 0), _pending(cube, 1)) == (0, 1)
    cube.call("cube_pop_matmul", b, y)
    np.testing.assert_allclose(y, x @ b, rtol=1e-5, atol=1e-5)


def test_pipes_are_fifo(build_dir: Path) -> None:
    """Two pushes are popped oldest first."""
    cube = _library(build_dir, CUBE_MATMUL_PUSH, "cube_matmul_push")
    vec = _library(build_dir, _vector_pop_bias(), "vector_pop_bias")
    rng = np.random.default_rng(2)
    a1, a2, b, bias = _rand(rng), _rand(rng), _rand(rng), np.zeros((16, 16), np.float32)
    cube.call("cube_matmul_push", a1, b)
    cube.call("cube_matmul_push", a2, b)
    y1, y2 = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    vec.call("vector_pop_bias", bias, y1)
    vec.call("vector_pop_bias", bias, y2)
    np.testing.assert_allclose(y1, a1 @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y2, a2 @ b, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- checks


def test_pop_with_nothing_pushed_fails(build_dir: Path) -> None:
    vec = _library(build_dir, _vector_pop_bias(), "vector_pop_bias")
    y = np.zeros((16, 16), np.float32)
    with pytest.raises(KernelRuntimeError, match=r"vector_pop_bias: TPOP_FROM_AIC: nothing was pushed"):
        vec.call("vector_pop_bias", y, y)


def test_pop_of_another_shape_fails(build_dir: Path) -> None:
    cube = _library(build_dir, CUBE_MATMUL_PUSH, "cube_matmul_push")
    vec = _library(build_dir, _vector_pop_bias("pto.tpop_from_aic(%c8, %c16) {split = 0}", VEC_DYN), "pop_8x16")
    a = np.zeros((16, 16), np.float32)
    cube.call("cube_matmul_push", a, a)
    with pytest.raises(
        KernelRuntimeError, match=r"TPOP_FROM_AIC: the pushed tile \(valid 16x16, .*popping tile \(valid 8x16"
    ):
        vec.call("vector_pop_bias", a, a)


def test_unfreed_pop_is_released_with_the_kernel(build_dir: Path) -> None:
    """PyPTO's pipeline emits no TFREE: a slot left popped at the end of the kernel is not an error."""
    cube = _library(build_dir, CUBE_MATMUL_PUSH, "cube_matmul_push")
    vec = _library(build_dir, _vector_pop_bias(free=False), "pop_no_free")
    a = np.ones((16, 16), np.float32)
    cube.call("cube_matmul_push", a, a)
    vec.call("vector_pop_bias", a, a)  # raises KernelRuntimeError on any check the header makes
    assert vec.lib.pto_cpu_pipe_size(0) == 0  # it consumed the pushed tile


def test_free_without_pop_fails(build_dir: Path) -> None:
    text = VECTOR_PUSH.replace("{split = 0}\n", "{split = 0}\n    pto.tfree_from_aic {split = 0}\n")
    vec = _library(build_dir, text, "free_without_pop")
    with pytest.raises(KernelRuntimeError, match=r"TFREE_FROM_AIC: no popped slot to free"):
        vec.call("vector_push", np.zeros((16, 16), np.float32))


def test_split_is_not_modelled(build_dir: Path) -> None:
    vec = _library(build_dir, VECTOR_PUSH.replace("{split = 0}", "{split = 1}"), "push_split1")
    with pytest.raises(KernelRuntimeError, match=r"TPUSH_TO_AIC: split = 1 is not modelled \(only split = 0\)"):
        vec.call("vector_push", np.zeros((16, 16), np.float32))


# ----------------------------------------------------------------------------- PTOAS's FIFO (TPipe)

GM = "!pto.ptr<f32>"


def _body(text: str) -> str:
    """A module's function, without the module around it."""
    lines = text.splitlines()
    return "\n".join(lines[1:-1]) + "\n"


def _ptoas_fifo(form: str) -> str:
    """``cube_matmul_push`` then ``vector_pop_bias`` in one module, their pipe in PTOAS's ``form``:
    ``frontend`` (reserve/import + ``aic/aiv_initialize_pipe``, the ``tpush_to_aiv``... ops) or
    ``fifo`` (``initialize_l2g2l_pipe`` + ``tpush``/``declare_tile``/``tpop``/``tfree``)."""
    cube, vec = _body(CUBE_MATMUL_PUSH), _body(_vector_pop_bias())
    cube = cube.replace("%b: !pto.ptr<f32>)", f"%b: !pto.ptr<f32>, %gm: {GM})")
    vec = vec.replace("%y: !pto.ptr<f32>)", f"%y: !pto.ptr<f32>, %gm: {GM})")
    zero = "    %c0_i32 = arith.constant 0 : i32\n"
    imp = '    %buf = pto.import_reserved_buffer {name = "c2v_fifo", peer_func = @vector_pop_bias} -> i32\n'
    res = (
        '    %buf = pto.reserve_buffer {name = "c2v_fifo", size = 8192, location = #pto.address_space<vec>, '
        "auto = true} -> i32\n"
    )
    if form == "frontend":
        init = "pto.{side}_initialize_pipe {{dir_mask = 1, slot_size = 1024}} (gm_slot_buffer = %gm : {gm}, c2v_consumer_buf = %buf : i32, v2c_consumer_buf = %c0_i32 : i32)\n"
        cube = cube.replace("    %c0 =", zero + imp + "    " + init.format(side="aic", gm=GM) + "    %c0 =", 1)
        vec = vec.replace("    %c0 =", zero + res + "    " + init.format(side="aiv", gm=GM) + "    %c0 =", 1)
    else:
        init = f"    %pipe = pto.initialize_l2g2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8}}(%gm : {GM}, %buf : i32) -> !pto.pipe\n"
        cube = cube.replace("    %c0 =", imp + init + "    %c0 =", 1)
        vec = vec.replace("    %c0 =", res + init + "    %c0 =", 1)
        cube = cube.replace(
            f"pto.tpush_to_aiv(%cAcc : {ACC}) {{split = 0}}",
            f"pto.tpush(%cAcc, %pipe : {ACC}, !pto.pipe) {{split = 0}}",
        )
        vec = vec.replace(
            f"%c = pto.tpop_from_aic {{split = 0}} -> {VEC}",
            f"%c = pto.declare_tile -> {VEC}\n    pto.tpop(%c, %pipe : {VEC}, !pto.pipe) {{split = 0}}",
        )
        vec = vec.replace("pto.tfree_from_aic {split = 0}", "pto.tfree(%pipe : !pto.pipe) {split = 0}")
    return 'module attributes {pto.target_arch = "a2a3"} {\n' + cube + vec + "}\n"


@pytest.mark.parametrize("form", ["frontend", "fifo"])
def test_ptoas_fifo_shape(form: str) -> None:
    """PTOAS's C++ for its FIFO: one TPipe per init, TPUSH/TPOP/TFREE templated on it."""
    cpp = _synced_cpp(_ptoas_fifo(form), f"fifo_{form}")
    tok = "TPipe<0, Direction::DIR_C2V, 1024, 8, 8, true>"
    assert cpp.count(f"= {tok}(") == 2
    tile = "Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>"
    assert f"TPOP<{tok}, {tile}, TileSplitAxis::TILE_NO_SPLIT>(" in cpp
    assert f"TFREE<{tok}, TileSplitAxis::TILE_NO_SPLIT>(" in cpp
    assert f"TPUSH<{tok}, Tile<TileType::Acc, float, 16, 16," in cpp
    assert "TPUSH_TO_AIV" not in cpp and "TPOP_FROM_AIC" not in cpp


@pytest.mark.parametrize("form", ["frontend", "fifo"])
def test_ptoas_fifo_runs(build_dir: Path, form: str) -> None:
    """y = a @ b + bias through PTOAS's FIFO: the popped tile lands in the reserved buffer's slot."""
    lib = _library(build_dir, _ptoas_fifo(form), f"ptoas_fifo_{form}")
    rng = np.random.default_rng(5)
    a, b, bias = _rand(rng), _rand(rng), _rand(rng)
    gm = np.zeros(2048, np.float32)
    y = np.full((16, 16), np.nan, dtype=np.float32)
    lib.call("cube_matmul_push", a, b, gm)
    assert _pending(lib, 0) == 1
    lib.call("vector_pop_bias", bias, y, gm)
    assert _pending(lib, 0) == 0
    np.testing.assert_allclose(y, a @ b + bias, rtol=1e-5, atol=1e-5)


def test_a5_nosplit_vector_guard() -> None:
    """PTOAS's a5 guard: a vector function with a split = 0 FIFO op runs on sub-block 0 only."""
    text = _ptoas_fifo("frontend").replace('"a2a3"', '"a5"').replace("gm_slot_buffer = %gm : !pto.ptr<f32>, ", "")
    cpp = _synced_cpp(text, "fifo_a5")
    vec = cpp[cpp.index("void vector_pop_bias(") :]
    assert "set_vector_mask(-1, -1);\n    if (get_subblockid() == 0) {" in vec
    assert "TPipe<0, Direction::DIR_C2V, 1024, 8, 2, true>(nullptr, " in vec
    assert "get_subblockid" not in cpp[: cpp.index("void vector_pop_bias(")]
