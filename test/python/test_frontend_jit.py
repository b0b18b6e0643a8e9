"""@pl.jit: specialization on torch samples, callees, caching, compile options."""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects import func

import pypto.language as pl
from pypto.dialects.enums import FunctionType
from pypto.dialects.program import function_type
from pypto.dialects.types import TensorType


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pl.jit.incore
def scale(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [32, 128])
    y = pl.store(pl.mul(t, 2.0), [0, 0], y)
    return y


@pl.jit
def fused(x: pl.Tensor):
    y = pl.create_tensor([32, 128], dtype=pl.FP32)
    y = scale(x, y)
    return y


def test_specialize_types_from_samples() -> None:
    a = torch.zeros(128, 128)
    program = add.specialize(a, a, a)
    program.verify()
    assert program.name == "_jit_add"
    f = program.functions["add"]
    assert function_type(f) is FunctionType.Orchestration
    assert all(t == TensorType.get((128, 128), pl_type("FP32")) for t in f.function_type.inputs.data)


def pl_type(name: str):  # noqa: ANN201
    from pypto.dialects.dtypes import dtype_type

    return dtype_type(name)


def test_dtypes_and_cache() -> None:
    h = torch.zeros(64, 32, dtype=torch.float16)
    p1 = add.specialize(h, h, h)
    assert p1.functions["add"].function_type.inputs.data[0] == TensorType.get((64, 32), pl_type("FP16"))
    assert add.specialize(h, h, h) is p1
    b = torch.zeros(64, 32, dtype=torch.bfloat16)
    p2 = add.specialize(b, b, b)
    assert p2 is not p1
    assert p2.functions["add"].function_type.inputs.data[0] == TensorType.get((64, 32), pl_type("BF16"))


def test_incore_callee_found() -> None:
    program = fused.specialize(torch.zeros(32, 128))
    program.verify()
    assert sorted(program.functions) == ["fused", "scale"]
    assert function_type(program.functions["scale"]) is FunctionType.InCore
    call = next(op for op in program.module.walk() if isinstance(op, func.CallOp))
    assert call.callee.string_value() == "scale"
    muls = next(op for op in program.module.walk() if op.name == "pl.tile.muls")
    assert muls.location.filename.data == __file__


def test_compile_option_as_kernel_argument() -> None:
    a = torch.zeros(128, 128)
    with pytest.raises(TypeError, match=r"dump_passes.*\(a, b, out\)"):
        add.compile(a, a, a, dump_passes=True)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        add.compile(a, a, a, a)


def test_lower_returns_program() -> None:
    a = torch.zeros(128, 128)
    lowered = add.lower(a, a, a)
    assert isinstance(lowered, pl.Program)
    assert lowered.functions


def test_parse_not_execute() -> None:
    @pl.jit
    def never_runs(a: pl.Tensor):
        with pl.at(level=pl.Level.CORE_GROUP):
            raise_if_executed = pl.exp(a)  # noqa: F841
        return a

    program = never_runs.specialize(torch.zeros(16, 16))
    assert "never_runs" in program.functions


@pytest.mark.parametrize("kernel", ["add", "fused"])
def test_user_program_round_trip(kernel: str) -> None:
    try:
        from pypto.core.dsl_printer import print_program
    except ImportError:
        pytest.skip("pypto.core.dsl_printer is not available")
    program = (
        add.specialize(*[torch.zeros(128, 128)] * 3) if kernel == "add" else fused.specialize(torch.zeros(32, 128))
    )
    text = print_program(program.module)
    again = pl.parse(text)
    again.verify()
    assert print_program(again.module) == text


def test_unicode_names_are_spelled_in_ascii_for_the_ir(tmp_path) -> None:  # noqa: ANN001
    """Python identifiers may be any Unicode letters (``变量``); MLIR's value names are ASCII, and xDSL
    refused the name with a raw ``ValueError: Invalid OpResult name format``. The value is named
    ``u53d8u91cf`` (its code points); the kernel compiles, runs, and its dumps parse back."""
    from pypto.frontend.scopes import ascii_name
    from pypto.runtime import RunConfig

    source = tmp_path / "unicode_kernel.py"
    source.write_text(
        "import pypto.language as pl\n\n\n"
        "@pl.jit\n"
        "def k(x: pl.Tensor, 输出: pl.Out[pl.Tensor]):\n"
        "    with pl.at(level=pl.Level.CORE_GROUP):\n"
        "        变量 = pl.load(x, [0, 0], [16, 128])\n"
        "        pl.store(pl.add(变量, 变量), [0, 0], 输出)\n"
        "    return 输出\n"
    )
    namespace: dict[str, object] = {"__name__": "unicode_kernel", "__file__": str(source)}
    exec(compile(source.read_text(), str(source), "exec"), namespace)  # noqa: S102
    x, out = torch.ones(16, 128), torch.zeros(16, 128)
    namespace["k"](x, out, config=RunConfig(dump_passes=True, save_kernels_dir=str(tmp_path / "b")))  # type: ignore[operator]
    assert torch.equal(out, x + x)
    frontend = (tmp_path / "b" / "passes_dump" / "00_frontend.py").read_text()
    assert "u53d8u91cf: pl.Tile" in frontend and "变量" not in frontend
    pl.loads(tmp_path / "b" / "passes_dump" / "00_frontend.py")
    # the dumps' torch code checks by the Python names (it needed the IR's spelling, 'u53d8u91cf')
    from pypto.debug import validate_pass_ir_codegen_results

    validate_pass_ir_codegen_results(tmp_path / "b" / "passes_dump", {"x": x, "输出": torch.zeros(16, 128)}, {"输出": x + x})
    assert [ascii_name(n) for n in ("变量", "a变", "1x", "mem_vec_3")] == ["u53d8u91cf", "au53d8", "_1x", "mem_vec_3"]


def test_a_config_that_is_not_a_run_config_is_named() -> None:
    """``config=3`` or a dict of options failed deep in the run with "'int' object has no attribute
    'compile_profiling'"; the call, ``compile`` and ``run`` now say what config= takes."""
    from pypto.errors import ArgumentTypeError
    from pypto.runtime import run

    @pl.jit
    def twice(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, a)
        return out

    a, out = torch.ones(16, 64), torch.zeros(16, 64)
    for call in (lambda: twice(a, out, config=3), lambda: twice.compile(a, out, config="fast"),
                 lambda: run(twice, a, out, config={"dump_passes": True})):  # fmt: skip
        with pytest.raises(ArgumentTypeError, match="config= takes a pypto.runtime.RunConfig"):
            call()


def test_the_dsl_under_another_name(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """``import pypto.language as pp`` and ``from pypto.language import FunctionType, FP32`` read as ``pl``
    and ``pl.FunctionType``, ``pl.FP32`` (they were "'pp.FunctionType.InCore' is not a compile-time
    constant"); a name the body assigns is left alone there."""
    import importlib

    from pypto.runtime import run

    body = (
        "import pypto.language as pp\n"
        "from pypto.language import FP32, FunctionType\n\n\n"
        "@pp.program\n"
        "class P:\n"
        "    @pp.function(type=FunctionType.Orchestration)\n"
        "    def add(self, a: pp.Tensor[[64, 64], FP32], out: pp.Out[pp.Tensor[[64, 64], FP32]]) -> pp.Tensor[[64, 64], FP32]:\n"
        "        with pp.at(level=pp.Level.CORE_GROUP):\n"
        "            t = pp.add(a, a)\n"
        "            out[:] = pp.mul(t, a)\n"
        "        return out\n"
    )
    (tmp_path / "aliased_good.py").write_text(body)
    (tmp_path / "aliased_shadow.py").write_text(body.replace("t = pp.add", "FP32 = pp.add").replace("mul(t,", "mul(FP32,"))
    monkeypatch.syspath_prepend(str(tmp_path))
    good = importlib.import_module("aliased_good")
    a, out = torch.full((64, 64), 3.0), torch.zeros(64, 64)
    run(good.P, a, out)
    assert torch.equal(out, (a + a) * a)
    shadow = importlib.import_module("aliased_shadow")  # FP32 assigned in the body: a local there, a dtype above
    run(shadow.P, a, out)
    assert torch.equal(out, (a + a) * a)


def test_a_parameter_default_is_bound_as_python_binds_it(tmp_path) -> None:  # noqa: ANN001
    """``def k(a, out, factor: pl.Scalar[pl.FP32] = 3.0)`` called as ``k(a, out)`` failed with "missing
    'factor'" (upstream's ``@pl.jit`` binds the signature with its defaults); the default is now used, a
    passed value still wins. Inside a program a call must still pass every argument, and the error says so."""
    from pypto.errors import InvalidOperationError
    from pypto.runtime import RunConfig

    @pl.jit
    def scaled(a: pl.Tensor, out: pl.Out[pl.Tensor], factor: pl.Scalar[pl.FP32] = 3.0):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 16])
            pl.store(pl.mul(t, factor), [0, 0], out)
        return out

    a = torch.ones(16, 16)
    for args, kwargs, want in (((), {}, 3.0), ((5.0,), {}, 5.0), ((), {"factor": 7.0}, 7.0)):
        out = torch.zeros(16, 16)
        scaled(a, out, *args, **kwargs, config=RunConfig(save_kernels_dir=str(tmp_path / f"b{want}")))
        assert torch.equal(out, a * want), (args, kwargs)

    program = (
        "import pypto.language as pl\n\n\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],\n"
        "          f: pl.Scalar[pl.FP32] = 3.0) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        out = pl.store(pl.mul(pl.load(a, [0, 0], [16, 16]), f), [0, 0], out)\n"
        "        return out\n\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]])"
        " -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        out = self.k(a, out)\n"
        "        return out\n"
    )
    with pytest.raises(InvalidOperationError, match=r"in_program.py:14:15: .*'k' takes 3 arguments, got 2") as e:
        pl.parse(program, filename="in_program.py")
    assert "default ('3.0')" in str(e.value) and "pass every argument" in str(e.value)


def test_an_argument_of_the_wrong_kind_is_named_before_the_compile(tmp_path) -> None:  # noqa: ANN001
    """A number for a ``pl.Tensor`` parameter said "a bare pl.Tensor needs a shape and dtype" (pointing at
    the annotation, as if the kernel were wrong), or compiled a build and then failed in the run; a tensor
    for a ``pl.Scalar`` did the latter. The call is now refused first, naming the argument and what it takes."""
    from pypto.errors import ArgumentTypeError
    from pypto.runtime import RunConfig

    @pl.jit
    def k(a: pl.Tensor, b: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor], f: pl.Scalar[pl.FP32]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out

    a, out = torch.ones(16, 16), torch.zeros(16, 16)
    config = RunConfig(save_kernels_dir=str(tmp_path / "build"))
    for args, message in (((a, 3, out, 2.0), "argument 'b' of k() is the int 3: its parameter is a pl.Tensor"),
                          ((a, a, 4, 2.0), "argument 'out' of k() is the int 4: its parameter is a pl.Tensor"),
                          ((a, a, out, a), "argument 'f' of k() is a tensor: its parameter is a pl.Scalar")):  # fmt: skip
        with pytest.raises(ArgumentTypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
            k(*args, config=config)
    assert not (tmp_path / "build").exists()
    k(a, a, out, 2.0, config=config)
    assert torch.equal(out, a + a)
