"""``pypto.debug.torch_codegen`` and ``validate_pass_ir_codegen_results``:
the IR's semantics in torch at every snapshot of the pipeline, against torch
references (upstream dumps, our own compiles, every example)."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import pypto.language as pl
from pypto.core.mlir_text import parse_mlir
from pypto.core.program import Program
from pypto.debug import TorchCodegenError, torch_codegen, validate_pass_ir_codegen_results
from pypto.debug.torch_codegen import runtime_source
from pypto.debug.validate import run_program
from pypto.ir import compile as ir_compile

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT.parent / "shared" / "reference" / "upstream-builds"
EXAMPLES = ROOT / "examples"

Refs = Callable[[], tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], float]]


def _add() -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], float]:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(128, 128, generator=g), torch.randn(128, 128, generator=g)
    return {"a": a, "b": b, "out": torch.zeros(128, 128)}, {"out": a + b}, 1e-6


def _softmax_rows() -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], float]:
    x = torch.randn(64, 128, generator=torch.Generator().manual_seed(1))
    return {"x": x, "out": torch.zeros(64, 128)}, {"out": torch.softmax(x, dim=-1)}, 1e-5


def _matmul_k() -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], float]:
    g = torch.Generator().manual_seed(2)
    a = torch.randn(128, 512, generator=g).half()
    b = torch.randn(512, 128, generator=g).half()
    return {"a": a, "b": b, "c": torch.zeros(128, 128)}, {"c": a.float() @ b.float()}, 1e-3


UPSTREAM_CASES: dict[str, Refs] = {"add": _add, "softmax_rows": _softmax_rows, "matmul_k": _matmul_k}


def _upstream_dumps(name: str) -> list[Path]:
    d = UPSTREAM / name / "passes_dump"
    if not d.is_dir():
        pytest.skip(f"no upstream build {d}")
    return sorted(d.glob("*.py"))


# ---- upstream dumps, every snapshot ---------------------------------------------


@pytest.mark.parametrize("case", sorted(UPSTREAM_CASES))
def test_upstream_every_snapshot(case: str) -> None:
    tensors, expected, tol = UPSTREAM_CASES[case]()
    files = _upstream_dumps(case)
    assert len(files) == 50
    for f in files:
        run = run_program(pl.loads(f), tensors, f.name)
        for key, want in expected.items():
            assert run[key].dtype == want.dtype
            assert torch.allclose(run[key], want, rtol=tol, atol=tol), f"{f.name}: {key}"
    assert torch.count_nonzero(tensors["out" if "out" in tensors else "c"]) == 0  # inputs are cloned


def test_validate_prints_the_documented_lines(capsys: pytest.CaptureFixture[str]) -> None:
    tensors, expected, _ = _add()
    validate_pass_ir_codegen_results(UPSTREAM / "add" / "passes_dump", tensors, expected)
    lines = capsys.readouterr().out.splitlines()
    files = _upstream_dumps("add")
    assert len(lines) == 2 * len(files)
    assert lines[0] == "==================== 00_frontend ===================="
    assert lines[-2] == "==================== 49_after_MaterializeValidShapeSymbols ===================="
    line = re.compile(r"^validate tensor: 'out', max_abs_diff: \d\.\d{6}e[+-]\d\d, pass: True$")
    assert all(line.match(x) for x in lines[1::2]), lines[1]


def test_validate_one_file_and_mismatch(capsys: pytest.CaptureFixture[str]) -> None:
    tensors, expected, _ = _softmax_rows()
    dump = UPSTREAM / "softmax_rows" / "passes_dump" / "35_after_AllocateMemoryAddr.py"
    validate_pass_ir_codegen_results(dump, tensors, expected, rtol=1e-5, atol=1e-5)
    assert capsys.readouterr().out.startswith("==================== 35_after_AllocateMemoryAddr ====")
    wrong = {"out": expected["out"] + 1.0}
    with pytest.raises(AssertionError, match=r"35_after_AllocateMemoryAddr\.py: tensor 'out' mismatch, max abs diff 1\.0"):
        validate_pass_ir_codegen_results(dump, tensors, wrong)
    assert "pass: False" in capsys.readouterr().out


def test_validate_argument_errors(tmp_path: Path) -> None:
    tensors, expected, _ = _add()
    dumps = UPSTREAM / "add" / "passes_dump"
    with pytest.raises(FileNotFoundError):
        validate_pass_ir_codegen_results(tmp_path / "nope", tensors, expected)
    with pytest.raises(ValueError, match="no .py IR files"):
        validate_pass_ir_codegen_results(tmp_path, tensors, expected)
    with pytest.raises(ValueError, match="rtol"):
        validate_pass_ir_codegen_results(dumps, tensors, expected, rtol=-1.0)
    with pytest.raises(TypeError, match="expected"):
        validate_pass_ir_codegen_results(dumps, tensors, {"out": [1.0]})  # type: ignore[dict-item]
    with pytest.raises(KeyError, match="cannot resolve a tensor for parameter"):
        validate_pass_ir_codegen_results(dumps / "00_frontend.py", {"a": tensors["a"]}, expected)
    shape = tuple(expected["out"].shape)
    with pytest.raises(AssertionError, match=rf"tensor 'out' has shape \({shape[0]}, {shape[1]}\), expected\['out'\] has shape \(3,\)"):
        validate_pass_ir_codegen_results(dumps / "00_frontend.py", tensors, {"out": torch.zeros(3)})  # not "max abs diff inf"


# ---- the generated code --------------------------------------------------------


def _namespace(program: Program, check_shapes: bool = False) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    exec(compile(torch_codegen(program, check_shapes=check_shapes), "<gen>", "exec"), ns)  # noqa: S102
    return ns


def test_out_params_written_in_place() -> None:
    program = pl.loads(UPSTREAM / "add" / "passes_dump" / "35_after_AllocateMemoryAddr.py")
    ns = _namespace(program)
    assert callable(ns["add"]) and callable(ns["add_incore_0"])  # one Python function per IR function
    tensors, expected, _ = _add()
    out = tensors["out"]
    ret = ns["add"](tensors["a"], tensors["b"], out)
    assert ret is out and torch.equal(out, expected["out"])
    # the frontend form (tensor.assemble into the Out parameter) too
    out2 = torch.zeros(128, 128)
    _namespace(pl.loads(UPSTREAM / "add" / "passes_dump" / "00_frontend.py"))["add"](tensors["a"], tensors["b"], out2)
    assert torch.equal(out2, expected["out"])


def test_check_shapes() -> None:
    program = pl.loads(UPSTREAM / "matmul_k" / "passes_dump" / "22_after_ExpandMixedKernel.py")
    plain = torch_codegen(program)
    checked = torch_codegen(program, check_shapes=True)
    body = plain.split("\ndef k_blocked", 1)[1]
    assert "_check(" not in body and "_check(" in checked.split("\ndef k_blocked", 1)[1]
    ns = _namespace(program, check_shapes=True)
    tensors, expected, _ = _matmul_k()
    ns["matmul_k"](tensors["a"], tensors["b"], tensors["c"])
    assert torch.allclose(tensors["c"], expected["c"], atol=1e-3, rtol=1e-3)
    with pytest.raises(AssertionError, match=r"a.*dtype torch.float32 does not match the IR dtype torch.float16"):
        ns["matmul_k"](tensors["a"].float(), tensors["b"], tensors["c"])
    with pytest.raises(AssertionError, match=r"shape \[128, 256\] does not match the IR shape \[128, 512\]"):
        ns["matmul_k"](tensors["a"][:, :256], tensors["b"], tensors["c"])


def test_codegen_is_deterministic_and_self_contained() -> None:
    program = pl.loads(UPSTREAM / "softmax_rows" / "passes_dump" / "04_after_ConvertToSSA.py")
    src = torch_codegen(program)
    assert src == torch_codegen(program)
    assert src.startswith("# Generated by pypto.debug.torch_codegen")
    assert runtime_source().strip() in src
    assert "pypto" not in src.split(runtime_source().strip(), 1)[1]  # no imports of the compiler
    assert "for i__idx_v0 in range(0, 4, 1):" in src


def test_single_function_and_bad_node() -> None:
    program = pl.loads(UPSTREAM / "add" / "passes_dump" / "35_after_AllocateMemoryAddr.py")
    src = torch_codegen(program.functions["add_incore_0"])
    assert "def add_incore_0(" in src and "def add(" not in src
    with pytest.raises(TypeError, match="torch_codegen expects"):
        torch_codegen("not ir")  # type: ignore[arg-type]


CONTROL = """
builtin.module @ctl {
  func.func @f(%n: index, %x: f32) -> (index, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %s, %y = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0, %b = %x) -> (index, f32) {
      %a2 = arith.addi %a, %i : index
      %odd = arith.remsi %i, %c3 : index
      %isz = arith.cmpi eq, %odd, %c0 : index
      %b2 = scf.if %isz -> (f32) {
        %t = arith.mulf %b, %b : f32
        scf.yield %t : f32
      } else {
        %u = arith.negf %b : f32
        scf.yield %u : f32
      }
      scf.yield %a2, %b2 : index, f32
    }
    %w = scf.while (%k = %s) : (index) -> index {
      %c = arith.cmpi sgt, %k, %c3 : index
      scf.condition(%c) %k : index
    } do {
    ^bb0(%k2: index):
      %k3 = arith.divsi %k2, %c3 : index
      scf.yield %k3 : index
    }
    func.return %w, %y : index, f32
  }
}
"""


def _control_reference(n: int, x: float) -> tuple[int, float]:
    s, y = 0, x
    for i in range(n):
        s += i
        y = y * y if i % 3 == 0 else -y
    while s > 3:
        s = s // 3
    return s, y


def test_scalar_control_flow() -> None:
    ns = _namespace(Program(parse_mlir(CONTROL)))
    for n in (0, 1, 5, 9):
        assert ns["f"](n, 1.5) == _control_reference(n, 1.5)


def test_unknown_op_is_named() -> None:
    text = """
    builtin.module @m {
      func.func @g(%x: i32) -> f32 {
        %y = arith.bitcast %x : i32 to f32
        func.return %y : f32
      }
    }"""
    with pytest.raises(TorchCodegenError, match=r"no torch lowering for op arith.bitcast \(in g\)"):
        torch_codegen(Program(parse_mlir(text)))


def test_runtime_valid_shape_helpers() -> None:
    ns: dict[str, Any] = {}
    exec(runtime_source(), ns)  # noqa: S102
    t = torch.arange(64 * 4, dtype=torch.float32).reshape(64, 4)
    tile = ns["_tile_load"](t, [60, 0], [8, 4])  # 4 rows past the end: zero padded
    assert torch.equal(tile[:4], t[60:]) and torch.count_nonzero(tile[4:]) == 0
    assert ns["_valid_shape"](tile) == (8, 4)  # the IR's valid shape (the whole window)
    part = ns["_tile_load"](t, [0, 0], [8, 4], [2, 4])  # valid shape 2x4: only it is loaded
    assert torch.count_nonzero(part[2:]) == 0 and ns["_valid_shape"](part) == (2, 4)
    doubled = ns["_like"](part * 2, part)
    out = torch.full((64, 4), -1.0)
    ns["_tile_store"](doubled, [10, 0], out)  # only the valid region is written
    assert torch.equal(out[10:12], 2 * t[:2]) and bool((out[12:] == -1).all())
    ns["_tile_store"](doubled, [10, 0], out, True)  # atomic: +=
    assert torch.equal(out[10:12], 4 * t[:2])
    assert ns["_reduce"](tile, "max", -1)[:4, 0].tolist() == t[60:, 3].tolist()
    assert ns["_cast"](torch.tensor([1.5, -1.5, 2.5]), torch.int32, "round").tolist() == [2, -2, 3]
    assert ns["_cast"](torch.tensor([1.5, -1.5, 2.5]), torch.int32, "rint").tolist() == [2, -2, 2]


# ---- our own compiles, every dump ------------------------------------------------


@pl.program
class Kernels:
    @pl.function(type=pl.FunctionType.Orchestration)
    def kernels(
        self,
        a: pl.Tensor[[64, 128], pl.FP32],
        b: pl.Tensor[[64, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
    ) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                ta = pl.load(a, [i * 16, 0], [16, 128])
                tb = pl.load(b, [i * 16, 0], [16, 128])
                t = pl.add(pl.mul(ta, 2.0), tb)
                tmp = pl.create_tile([16, 128], dtype=pl.FP32)
                m = pl.row_max(t, tmp)
                e = pl.exp(pl.row_expand_sub(t, m))
                s = pl.row_sum(e, tmp)
                pl.store(pl.row_expand_div(e, s), [i * 16, 0], out)
        return out


@pl.program
class Mm:
    @pl.function(type=pl.FunctionType.Orchestration)
    def mm(
        self,
        a: pl.Tensor[[64, 256], pl.FP16],
        b: pl.Tensor[[256, 64], pl.FP16],
        c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
    ) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.matmul(a[0:64, 0:64], b[0:64, 0:64], out_dtype=pl.FP32)
            for k in pl.range(1, 4):
                acc = pl.matmul_acc(acc, a[0:64, k * 64 : k * 64 + 64], b[k * 64 : k * 64 + 64, 0:64])
            c[:] = acc
        return c


@pl.program
class TensorOps:
    @pl.function(type=pl.FunctionType.Orchestration)
    def tensor_ops(
        self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.relu(pl.add(x, 1.0))
            out[:] = pl.mul(y, y)
        return out


def _own_cases() -> dict[str, tuple[Program, dict[str, torch.Tensor], dict[str, torch.Tensor], float]]:
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(64, 128, generator=g), torch.randn(64, 128, generator=g)
    ma, mb = torch.randn(64, 256, generator=g).half(), torch.randn(256, 64, generator=g).half()
    x = torch.randn(32, 64, generator=g)
    return {
        "softmax_of_sum": (Kernels, {"a": a, "b": b, "out": torch.zeros(64, 128)}, {"out": torch.softmax(2 * a + b, -1)}, 1e-5),
        "matmul_acc_loop": (Mm, {"a": ma, "b": mb, "c": torch.zeros(64, 64)}, {"c": ma.float() @ mb.float()}, 1e-3),
        "tensor_ops": (TensorOps, {"x": x, "out": torch.zeros(32, 64)}, {"out": torch.relu(x + 1) ** 2}, 1e-5),
    }


@pytest.mark.parametrize("name", sorted(_own_cases()))
def test_own_compiles_every_dump(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program, tensors, expected, tol = _own_cases()[name]
    compiled = ir_compile(program, output_dir=tmp_path / name)
    dumps = sorted((tmp_path / name / "passes_dump").glob("*.py"))
    assert len(dumps) > 2
    compiled.validate_ir(tensors, expected, rtol=tol, atol=tol)
    out = capsys.readouterr().out
    assert out.count("pass: True") == len(dumps) and "pass: False" not in out


def test_validate_ir_needs_dumps(tmp_path: Path) -> None:
    compiled = ir_compile(TensorOps, output_dir=tmp_path / "nodump", dump_passes=False)
    with pytest.raises(FileNotFoundError, match="passes_dump"):
        compiled.validate_ir({}, {})


def test_validate_ir_reports_the_dump(tmp_path: Path) -> None:
    x = torch.randn(32, 64)
    compiled = ir_compile(TensorOps, output_dir=tmp_path / "t")
    with pytest.raises(AssertionError, match=r"00_frontend\.py: tensor 'out' mismatch, max abs diff"):
        compiled.validate_ir({"x": x, "out": torch.zeros(32, 64)}, {"out": torch.relu(x + 1) ** 2 + 1})


# ---- every example, every dump ------------------------------------------------------


def _example_cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []
    for path in sorted(EXAMPLES.glob("*/[0-9]*.py")):
        text = path.read_text()
        for m in re.finditer(r'Case\(\s*"([^"]+)"', text):
            cases.append((str(path.relative_to(EXAMPLES)), m.group(1)))
    return cases


def _load_example(rel: str) -> tuple[Any, Any]:
    """The example module and the ``_harness`` module it uses."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        module_name = "example_" + re.sub(r"\W", "_", rel)
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / rel)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module, importlib.import_module("_harness")
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.parametrize(("example", "case_name"), _example_cases())
def test_examples_every_dump(example: str, case_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        module, harness = _load_example(example)
    except Exception as e:  # an example being edited elsewhere: not this test's subject
        pytest.skip(f"{example} does not import: {e}")
    case = next((c for c in module.CASES if c.name == case_name), None)
    if case is None:
        pytest.skip(f"{example} has no case {case_name}")
    args = case.inputs()
    expected = case.expected(args)
    compiled = harness.compile_case(case, tmp_path / case_name, inputs=args)
    tensors = dict(zip(case.param_names, args, strict=True))
    tol = max(case.rtol, 1e-4)
    validate_pass_ir_codegen_results(compiled.passes_dump, tensors, expected, rtol=tol, atol=tol)
    assert "pass: False" not in capsys.readouterr().out
