"""pl -> pto codegen (pypto.ptoas.codegen) against upstream PyPTO's ``.pto`` of the reference kernels."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

import pypto.language as pl
from pypto.diagnostics import DiagnosticError
from pypto.errors import PartialCodegenError
from pypto.ir import compile
from pypto.ptoas.codegen import PtoUnit, lower_program, write_pto_units
from pypto.ptoas.codegen import tile_ops as cg_tile_ops
from pypto.ptoas.dialect.tile_ops import AllocTileOp
from pypto.ptoas.passes.access import constant_int
from pypto.ptoas.pto_text import parse_pto, print_pto, verify_pto

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream-builds"
KERNELS = {"add": "aiv/add_incore_0", "softmax_rows": "aiv/softmax_rows_incore_0", "matmul_k": "aic/k_blocked"}

pytestmark = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/reference/upstream-builds not available")


def dump49(kernel: str) -> Path:
    return UPSTREAM / kernel / "passes_dump" / "49_after_MaterializeValidShapeSymbols.py"


def lower(kernel: str, **kw: object) -> ModuleOp:
    units = lower_program(pl.loads(str(dump49(kernel))), **kw)  # type: ignore[arg-type]
    assert list(units) == [KERNELS[kernel].split("/")[1]]
    return next(iter(units.values()))


def upstream(kernel: str) -> ModuleOp:
    return parse_pto((UPSTREAM / kernel / "kernels" / f"{KERNELS[kernel]}.pto").read_text(), "upstream.pto")


def structure(m: ModuleOp) -> dict[str, object]:
    """What must match upstream: non-arith ops in order, loop nesting, tile types, addresses, signature."""
    func = next(op for op in m.walk() if isinstance(op, FuncOp))
    ops, depth = [], []
    for op in func.walk():
        if op.dialect_name() == "arith" or isinstance(op, FuncOp | scf.YieldOp):
            continue
        d, p = 0, op.parent_op()
        while p is not None and not isinstance(p, FuncOp):
            d += isinstance(p, scf.ForOp)
            p = p.parent_op()
        ops.append(op.name)
        depth.append(d)
    allocs = [op for op in func.walk() if isinstance(op, AllocTileOp)]
    return {
        "ops": ops,
        "depth": depth,
        "tiles": [str(a.result.type) for a in allocs],
        "addrs": [constant_int(a.addr) if a.addr else None for a in allocs],
        "args": [str(t) for t in func.function_type.inputs.data],
        "attrs": {k: str(v) for k, v in func.attributes.items() if k.startswith("pto.")},
        "arch": m.attributes.get("pto.target_arch"),
    }


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_codegen_matches_upstream_structure(kernel: str) -> None:
    ours, theirs = structure(lower(kernel)), structure(upstream(kernel))
    for key in ("ops", "depth", "tiles", "addrs", "args", "attrs"):
        assert ours[key] == theirs[key], key
    assert ours["arch"] == StringAttr("a2a3")


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_codegen_output_verifies_and_round_trips(kernel: str) -> None:
    m = lower(kernel)
    verify_pto(m)
    text = print_pto(m)
    again = parse_pto(text)
    verify_pto(again)
    assert print_pto(again) == text
    assert text.startswith('module attributes {pto.target_arch = "a2a3"} {')


def test_partition_offsets_follow_the_loop_index() -> None:
    text = print_pto(lower("softmax_rows"))
    assert "%0 = arith.muli %i__idx_v0, %c16_index : index" in text
    assert "offsets = [%0, %c0_index], sizes = [%c16_index, %c128_index]" in text


def test_matmul_acc_accumulates_in_place() -> None:
    text = print_pto(lower("matmul_k"))
    assert "pto.tmatmul.acc ins(%acc__tile, %t__tile_Left_1, %t__tile_Right_1 :" in text
    assert "outs(%acc__tile :" in text.split("pto.tmatmul.acc")[1]
    assert "iter_args" not in text


def _located(m: ModuleOp) -> list[bool]:
    func = next(op for op in m.walk() if isinstance(op, FuncOp))
    return [
        isinstance(op.location, FileLineColLoc)
        for op in func.walk()
        if op.name.startswith("pto.") or isinstance(op, scf.ForOp) or op.name in ("arith.muli", "arith.addi")
    ]


def test_emit_source_loc_flag() -> None:
    m = lower("softmax_rows", emit_source_loc=True)
    assert all(_located(m))
    text = print_pto(m)
    assert 'loc("49_after_MaterializeValidShapeSymbols.py":' in text
    assert not any(_located(lower("softmax_rows", emit_source_loc=False)))


def test_emit_source_loc_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_EMIT_PTO_LOC", "1")
    assert all(_located(lower("add")))
    monkeypatch.setenv("PYPTO_EMIT_PTO_LOC", "0")
    assert not any(_located(lower("add")))


def test_unsupported_op_is_a_located_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from pypto.dialects.tile_ops import TileAddOp

    monkeypatch.delitem(cg_tile_ops.HANDLERS, TileAddOp)
    import pypto.ptoas.codegen.control as control

    monkeypatch.setattr(control, "HANDLERS", cg_tile_ops.HANDLERS)
    with pytest.raises(DiagnosticError) as err:
        lower("add")
    msg = str(err.value)
    assert "'pl.tile.add' has no pto lowering" in msg
    assert "49_after_MaterializeValidShapeSymbols.py:" in msg


def test_write_pto_units(tmp_path: Path) -> None:
    units = lower_program(pl.loads(str(dump49("add"))))
    paths = write_pto_units(units, tmp_path / "ptoas")
    assert paths["add_incore_0"].read_text() == print_pto(units["add_incore_0"])


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_compile_writes_pto_and_stops_with_skip_ptoas(tmp_path: Path) -> None:
    prog = pl.loads(str(dump49("softmax_rows")))
    compile(prog, output_dir=tmp_path, passes=[], dump_passes=False, skip_ptoas=True)
    files = _files(tmp_path)
    assert "ptoas/softmax_rows_incore_0.pto" in files
    assert not any(f.endswith(".cpp") for f in files)
    assert not any(f.startswith("ptoas_passes") for f in files)


def test_compile_dumps_ptoas_passes(tmp_path: Path) -> None:
    prog = pl.loads(str(dump49("matmul_k")))
    compile(prog, output_dir=tmp_path, passes=[], dump_passes=False, dump_ptoas_passes=True)
    files = _files(tmp_path)
    assert "ptoas/k_blocked.pto" in files
    assert "ptoas_passes/k_blocked/01_after_verify.mlir" in files
    synced = (tmp_path / "ptoas_passes/k_blocked/02_after_insert-sync.mlir").read_text()
    assert "pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]" in synced


def test_compile_partial_codegen_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pypto.ptoas.codegen.build as build

    real = build.build_kernel_unit

    def flaky(f: FuncOp, arch: str, emit_source_loc: bool) -> PtoUnit:
        if f.sym_name.data == "add_incore_0":
            raise ValueError("boom")
        return real(f, arch, emit_source_loc)

    monkeypatch.setattr(build, "build_kernel_unit", flaky)
    with pytest.raises(PartialCodegenError) as err:
        build.write_codegen(pl.loads(str(dump49("add"))), tmp_path, skip_ptoas=True)
    assert err.value.failures == {"add_incore_0": "boom"}
    prog = pl.loads(str(dump49("softmax_rows")))
    assert build.write_codegen(prog, tmp_path, skip_ptoas=True)
    assert os.path.exists(tmp_path / "ptoas" / "softmax_rows_incore_0.pto")


def test_handlers_pick_the_family_issubclass_would() -> None:
    """The handler table reads each op class's MRO (cheap in a fresh process); for every pl tile op class
    it gives the handler of the first family ``issubclass`` says it derives from, and none where none does."""
    from pypto.dialects.tile_ops import TILE_OPS

    for cls in TILE_OPS:
        expected = next((h for base, h in cg_tile_ops.FAMILY_HANDLERS if issubclass(cls, base)), None)
        assert cg_tile_ops._family_handler(cls) is expected, cls.__name__
        if expected is not None and not getattr(cls, "NO_PTO", None):
            assert cg_tile_ops.HANDLERS[cls] is expected
