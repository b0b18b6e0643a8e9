"""Small pieces of upstream PyPTO's Python API that upstream's examples and manual use (issue 15)."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl


@pl.jit
def scale(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(a, 2.0)
    return out


def test_as_python_concise_drops_assignment_types() -> None:
    prog = scale.lower(torch.zeros(64, 128), torch.zeros(64, 128))
    full = prog.as_python()
    short = prog.as_python(concise=True)
    assert "def scale_incore_0(" in short
    assert ": pl.Tile[" in full and ": pl.Tile[" not in short  # intermediate tiles lose their annotation
    assert "a__ssa_v0: pl.Tensor[[64, 128], pl.FP32" in short  # parameters keep theirs
    assert "t__tile = pl.tile.muls(a__tile, 2.0)" in short
    assert len(short) < len(full)
    with pytest.raises(ValueError, match="only the prefix 'pl'"):
        prog.as_python(prefix="ir")


N, TR, TC = 4, 64, 128


@pl.jit
def two_phases(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(N):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [i * TR, 0], [TR, TC])
            pl.store(pl.mul(t, 2.0), [i * TR, 0], out)
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(N):
            t = pl.load(out, [i * TR, 0], [TR, TC])  # ``t`` and ``i`` reused: the first scope's stay dead
            pl.store(pl.add(t, 1.0), [i * TR, 0], out)
    return out


def test_names_reused_in_a_later_scope_are_not_kept_alive() -> None:
    torch.manual_seed(0)
    a = torch.randn(N * TR, TC)
    out = torch.zeros(N * TR, TC)
    text = two_phases.lower(a, out).as_python()
    first = text[text.index("def two_phases_incore_0(") :].split("\n")[0]
    assert "pl.Tile" not in first.split("->")[1]  # the first kernel returns no tile
    two_phases(a, out)
    torch.testing.assert_close(out, a * 2.0 + 1.0)


def test_upstream_module_paths() -> None:
    import pypto
    from pypto import backend
    from pypto.backend.pto_backend import PartialCodegenError
    from pypto.ir.pass_manager import OptimizationStrategy, PassManager

    assert pypto.ir.compile is not None and pypto.language.jit is pl.jit  # lazily loaded facades
    assert PartialCodegenError is pypto.PartialCodegenError
    assert OptimizationStrategy is pypto.ir.OptimizationStrategy and PassManager is pypto.ir.PassManager
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        _ = pypto.nonexistent
    backend.reset_for_testing()
    assert not backend.is_backend_configured()
    with pytest.raises(RuntimeError, match="no backend configured"):
        backend.get_backend_type()
    backend.set_backend_type(backend.BackendType.Ascend910B)
    backend.set_backend_type("Ascend910B")  # the same again is fine
    assert backend.get_backend_type() is backend.BackendType.Ascend910B
    with pytest.raises(ValueError, match="already configured as Ascend910B"):
        backend.set_backend_type(backend.BackendType.Ascend950)
    backend.reset_for_testing()


def _build_program(rows: int):
    big_m = rows  # a local of the enclosing function, read by the class body's annotations

    @pl.program
    class Local:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[big_m, 64], pl.FP32], out: pl.Out[pl.Tensor[[big_m, 64], pl.FP32]]):
            t: pl.Tile[[big_m, 64], pl.FP32] = pl.load(x, [0, 0], [big_m, 64])
            ret: pl.Tensor[[big_m, 64], pl.FP32] = pl.store(t, [0, 0], out)
            return ret

    return Local


def test_program_in_a_function_sees_its_locals() -> None:
    assert "pl.Tensor[[16, 64], pl.FP32]" in _build_program(16).as_python()
    assert "pl.Tensor[[32, 64], pl.FP32]" in _build_program(32).as_python()


@pl.jit
def rebinds_out(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.mul(x, 2.0)
        result = pl.add(x, 1.0)  # rebinding: the value never reaches the Out parameter
    return result


def test_kernel_returning_a_tile_is_a_located_partial_codegen_error() -> None:
    import pypto
    from pypto.diagnostics import DiagnosticError

    with pytest.raises(pypto.PartialCodegenError) as e:
        rebinds_out(torch.zeros(64), torch.zeros(64))
    assert isinstance(e.value, DiagnosticError)  # upstream's class, our located message
    assert "test_upstream_api.py" in str(e.value) and "InCore functions exchange tensors" in str(e.value)


def test_slotted_memref_runs_with_a_located_warning(capsys: pytest.CaptureFixture[str]) -> None:
    """upstream's explicit slots (performance/04-incore): accepted; the planner places the tile (a located
    warning says the rotation is not modelled); the numbers match torch."""
    from pypto.errors import ParserTypeError

    src = """
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for i in pl.range(4):
        t: pl.Tile[[16, 64], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = pl.load(a, [i * 16, 0], [16, 64])
        out = pl.store(pl.exp(t), [i * 16, 0], out)
    return out
"""
    prog = pl.parse(src, filename="slots.py")
    err = capsys.readouterr().err
    assert "slots.py:7:" in err and "warning: slotted buffer pl.MemRef(..., slots=2)" in err and "pl.pipeline" in err
    assert "MemRef" not in prog.as_python()  # the planner's own buffer
    with pytest.raises(ParserTypeError, match="slots= must be a positive integer") as e:
        pl.parse(src.replace("slots=2", "slots=0"), filename="slots.py")
    assert "slots.py:7:" in str(e.value)


@pl.jit
def explicit_slots(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            tile: pl.Tile[[16, 64], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = pl.load(
                a, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec
            )
            pl.store(pl.exp(tile), [i * 16, 0], out)
    return out


def test_slotted_memref_kernel_matches_torch() -> None:
    a, out = torch.randn(64, 64), torch.zeros(64, 64)
    explicit_slots(a, out)
    torch.testing.assert_close(out, torch.exp(a))


def _make_kernel(rows: int):
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[rows, 64], pl.FP32], out: pl.Out[pl.Tensor[[rows, 64], pl.FP32]]):
        t: pl.Tile[[rows, 64], pl.FP32] = pl.load(x, [0, 0], [rows, 64])
        ret: pl.Tensor[[rows, 64], pl.FP32] = pl.store(t, [0, 0], out)
        return ret

    return k


def test_function_factory_sees_its_parameters() -> None:
    assert "pl.Tensor[[8, 64], pl.FP32]" in _make_kernel(8).as_python()
    assert "pl.Tensor[[24, 64], pl.FP32]" in _make_kernel(24).as_python()
