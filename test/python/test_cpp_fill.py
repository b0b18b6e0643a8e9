"""The C++ header's 0xFF fill of on-chip memory a kernel may read before writing it (``pto::cpu::fill_before_read``,
``pypto.ptoas.emitc.fill``): only those bytes are filled, and every launch still reads 0xFF there, also
after another kernel wrote them; a kernel whose tiles are all loaded or computed in full fills nothing."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.fill import missing, read_before_written, union
from pypto.ptoas.emitc.runner import KernelLibrary
from pypto.ptoas.pto_text import parse_pto, verify_pto

T16 = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
T8 = "!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
TDYN = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
PV16 = "!pto.partition_tensor_view<16x16xf32>"
PV8 = "!pto.partition_tensor_view<8x16xf32>"

HEAD = """    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a0 = arith.constant 0 : i64
    %a1k = arith.constant 1024 : i64
    %x = pto.make_tensor_view %arg0, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %y = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %xv = pto.partition_view %x, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> PV16
    %xh = pto.partition_view %x, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> PV8
    %yv = pto.partition_view %y, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> PV16
"""

KERNELS = {
    # TLOAD x into vec [0, 1024), TADD it to itself into [1024, 2048) (a valid shape given as constants), store y.
    "writes": """
    %t = pto.alloc_tile addr = %a0 : T16
    pto.tload ins(%xv : PV16) outs(%t : T16)
    %u = pto.alloc_tile addr = %a1k valid_row = %c16 valid_col = %c16 : TDYN
    pto.tadd ins(%t, %t : T16, T16) outs(%u : TDYN)
    pto.tstore ins(%u : TDYN) outs(%yv : PV16)
""",
    # store a tile nothing wrote: 0xFF bytes.
    "reads_unwritten": """
    %t = pto.alloc_tile addr = %a0 : T16
    pto.tstore ins(%t : T16) outs(%yv : PV16)
""",
    # TLOAD the first 8 rows through an 8x16 tile over the same bytes, store all 16: rows 8-15 are 0xFF.
    "reads_partly_written": """
    %t = pto.alloc_tile addr = %a0 : T16
    %h = pto.alloc_tile addr = %a0 : T8
    pto.tload ins(%xh : PV8) outs(%h : T8)
    pto.tstore ins(%t : T16) outs(%yv : PV16)
""",
    # a load in a loop that may run no iteration does not count as written after it.
    "loop_may_not_run": """
    %t = pto.alloc_tile addr = %a0 : T16
    scf.for %i = %c0 to %arg2 step %c1 {
      pto.tload ins(%xv : PV16) outs(%t : T16)
    }
    pto.tstore ins(%t : T16) outs(%yv : PV16)
""",
}


def _module(names: list[str]) -> str:
    funcs = []
    for name in names:
        body = KERNELS[name]
        for key, text in (("PV16", PV16), ("PV8", PV8), ("TDYN", TDYN), ("T16", T16), ("T8", T8)):
            body = body.replace(key, text)
        head = HEAD.replace("PV16", PV16).replace("PV8", PV8)
        funcs.append(
            f"  func.func @{name}(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: index) {{\n{head}{body}    return\n  }}"
        )
    return 'module attributes {pto.target_arch = "a2a3"} {\n' + "\n".join(funcs) + "\n}\n"


def _parsed(names: list[str]):  # noqa: ANN202  (an xDSL ModuleOp)
    module = parse_pto(_module(names), "fill.pto")
    verify_pto(module)
    return module


def test_ranges_union_and_missing() -> None:
    assert union([(0, 4), (10, 12)], 4, 10) == [(0, 12)]
    assert union([(0, 4)], 6, 8) == [(0, 4), (6, 8)]
    assert missing([(2, 4), (6, 8)], 0, 10) == [(0, 2), (4, 6), (8, 10)]
    assert missing([(0, 10)], 2, 5) == []


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("writes", {}),
        ("reads_unwritten", {"vec": [(0, 1024)]}),
        ("reads_partly_written", {"vec": [(512, 1024)]}),
        ("loop_may_not_run", {"vec": [(0, 1024)]}),
    ],
)
def test_the_bytes_read_before_written(name: str, want: dict[str, list[tuple[int, int]]]) -> None:
    (func,) = [op for op in _parsed([name]).body.block.ops if op.sym_name.data == name]  # type: ignore[attr-defined]
    assert read_before_written(func) == want


def test_the_emitted_call_names_them() -> None:
    cpp = emit_cpp(_parsed(["writes", "reads_partly_written"]))
    assert "pto::cpu::fill_before_read({});  // no on-chip byte is read before written: no fill" in cpp
    assert "pto::cpu::fill_before_read({{TileType::Vec, 512, 1024}});" in cpp
    assert cpp.count("#if !defined(PTO_NPU)\n    pto::cpu::fill_before_read(") == 2


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> KernelLibrary:
    cpp = emit_cpp(_parsed(list(KERNELS)))
    return KernelLibrary(build_shared(cpp, tmp_path_factory.mktemp("fill"), name="fill"))


def test_reads_see_0xff_launch_after_launch(library: KernelLibrary) -> None:
    """Between launches that write every byte of vec [0, 2048) (and fill none), the reading kernels still see
    0xFF where they read before writing, and their own data elsewhere."""
    x = np.arange(256, dtype=np.float32).reshape(16, 16) + 1
    ones = np.full((16, 16), 0xFFFFFFFF, np.uint32)
    for _ in range(3):
        y = np.zeros((16, 16), np.float32)
        library.call("writes", x, y, 0)
        assert np.array_equal(y, x + x)
        library.call("reads_unwritten", x, y, 0)
        assert np.array_equal(y.view(np.uint32), ones)
        library.call("writes", x, y, 0)
        library.call("reads_partly_written", x, y, 0)
        assert np.array_equal(y[:8], x[:8]) and np.array_equal(y[8:].view(np.uint32), ones[8:])
        library.call("loop_may_not_run", x, y, 0)
        assert np.array_equal(y.view(np.uint32), ones)
        library.call("loop_may_not_run", x, y, 2)
        assert np.array_equal(y, x)


def test_without_the_call_each_range_is_filled_at_its_first_tassign(tmp_path: Path) -> None:
    """Hand-written C++ (no fill_before_read): a range reads 0xFF after its first TASSIGN of the launch,
    whatever an earlier launch left there, and a second TASSIGN of it keeps what the launch wrote."""
    src = """#include "pto_cpu.hpp"
using namespace pto;
using T = Tile<TileType::Vec, float, 4, 8, BLayout::RowMajor, 4, 8>;
extern "C" int run(float *out, int write_first) {
    return pto::cpu::launch("run", [&]() {
        T a, b, c;
        TASSIGN(a, 0);
        if (write_first) TEXPANDS(a, 2.0f);
        TASSIGN(b, 0);    // a again: keeps the 2.0s (or the 0xFF)
        TASSIGN(c, 128);  // after a: 0xFF however the last launch left it
        for (int i = 0; i < 32; ++i) out[i] = b.data()[i], out[32 + i] = c.data()[i];
        TEXPANDS(c, 5.0f);
    });
}
"""
    lib = ctypes.CDLL(str(build_shared(src, tmp_path, "fill_on_assign", ("-O2",))))
    out = np.zeros(64, np.float32)
    ptr = ctypes.c_void_p(out.ctypes.data)
    for write_first in (1, 0, 1, 0):
        assert lib.run(ptr, write_first) == 0
        want = np.float32(2.0) if write_first else np.uint32(0xFFFFFFFF).view(np.float32)
        assert np.array_equal(out[:32].view(np.uint32), np.full(32, want, np.float32).view(np.uint32))
        assert np.array_equal(out[32:].view(np.uint32), np.full(32, 0xFFFFFFFF, np.uint32))


def test_the_llama_blocks_kernels_fill_nothing(tmp_path: Path) -> None:
    """Every tile of the six kernels of examples/models/08_llama_block.py is TLOADed or computed in full
    before it is read (the row sums through a reshape of their column), so no launch fills a byte."""
    import importlib.util
    import re
    import sys

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "examples"))
    path = root / "examples" / "models" / "08_llama_block.py"
    spec = importlib.util.spec_from_file_location("fill_llama_block", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from _harness import compile_case

    (case,) = module.CASES
    compiled = compile_case(case, tmp_path / "build", dump_passes=False)
    calls = {
        p.stem: re.findall(r"fill_before_read\((.*)\);", p.read_text())
        for p in Path(compiled.output_dir).glob("kernels/*/*.cpp")
    }
    assert calls == dict.fromkeys(["rms_norm", "gate_proj", "up_proj", "swiglu", "down_proj", "residual"], ["{}"])
