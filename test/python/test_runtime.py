"""The simulated chip (pypto.runtime): task graphs from Orchestration functions,
scheduling onto the target's AIC/AIV cores with its dispatch latency, the
records' units, In parameters never written, ChipWorker/DeviceTensor
residency, the ``@pl.jit`` call path and numerics against torch."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr

import pypto.language as pl
from pypto.dialects.enums import ParamDirection, ParamDirectionAttr
from pypto.ir import compile as pypto_compile
from pypto.runtime import ChipWorker, InputWrittenError, RunConfig, run
from pypto.target.model import TARGETS_DIR, load_target

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _example(rel: str) -> ModuleType:
    name = "pypto_rt_example_" + rel.replace("/", "_").removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / rel)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pl.jit
def two_independent(a: pl.Tensor, b: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_x"):
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_y"):
        y[:] = pl.mul(b, b)
    return x, y


@pl.jit
def looped(a: pl.Tensor, out: pl.InOut[pl.Tensor]):
    for _ in pl.range(3):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="step"):
            out[:] = pl.add(out, a)
    return out


@pl.jit
def scale(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_k"):
        out[:] = pl.mul(a, 2.0)
    return out


@pytest.fixture
def small_target(tmp_path: Path) -> Path:
    """a2a3 with one AIC + one AIV core and a 100-cycle dispatch latency."""
    text = (TARGETS_DIR / "a2a3.mlir").read_text()
    text = text.replace("npu.cores aic = 24 aiv_per_aic = 2", "npu.cores aic = 1 aiv_per_aic = 1")
    text = text.replace("npu.dispatch_latency cycles = 740", "npu.dispatch_latency cycles = 100")
    path = tmp_path / "tiny.mlir"
    path.write_text(text)
    return path


def _inputs(*shape: int, n: int = 2) -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [torch.randn(*shape) for _ in range(n)]


# ---- task graph ---------------------------------------------------------------------


def test_dependency_from_directions() -> None:
    """stage2 reads what stage1 writes: one edge, and stage2 is dispatched after stage1 finished."""
    ex = _example("intermediate/07_task_graph.py")
    case = ex.CASES[0]
    args = case.inputs()
    result = run(case.kernel.specialize(*args), *args)
    t0, t1 = result.tasks
    assert (t0.func_name, t1.func_name) == ("stage1", "stage2")
    assert result.graph.edges() == [(0, 1)]
    assert t1.dispatch >= t0.finish
    for name, want in case.expected(args).items():
        torch.testing.assert_close(args[case.param_names.index(name)], want)


def test_independent_tasks_run_in_parallel() -> None:
    a, b = _inputs(64, 128)
    x, y = torch.zeros(64, 128), torch.zeros(64, 128)
    result = run(two_independent.specialize(a, b, x, y), a, b, x, y)
    assert result.graph.edges() == []
    t0, t1 = result.tasks
    aicpu = load_target("a2a3").aicpu
    assert t0.dispatch == aicpu.submit + aicpu.dispatch  # submitted, then popped by an idle thread
    assert t1.dispatch == t0.dispatch + aicpu.submit  # the orchestrator submits one task after the other
    assert t1.start < t0.end  # ... and they run together
    assert t0.core_ids != t1.core_ids
    assert result.total_cycles == max(t0.finish, t1.finish)
    torch.testing.assert_close(x, a + a)
    torch.testing.assert_close(y, b * b)
    assert result.outputs[0] is x and result.outputs[1] is y


def test_loop_in_orchestration_issues_one_task_per_iteration() -> None:
    (a,) = _inputs(64, 128, n=1)
    out = torch.ones(64, 128)
    result = run(looped.specialize(a, out), a, out)
    assert [t.func_name for t in result.tasks] == ["step"] * 3
    assert result.graph.edges() == [(0, 1), (1, 2)]  # InOut: each iteration waits for the last
    torch.testing.assert_close(out, 1 + 3 * a)


def test_aic_then_aiv() -> None:
    """fused linear: the matmul task on an AIC core, the bias+relu task on an AIV core after it."""
    ex = _example("intermediate/01_fused_linear.py")
    case = next(c for c in ex.CASES if c.name == "fused_linear_relu")
    args = case.inputs()
    result = run(case.kernel.specialize(*args), *args)
    mm, act = result.tasks
    assert mm.core_type == "aic" and all(result.core_types[c] == "aic" for c in mm.core_ids)
    assert act.core_type == "aiv" and all(result.core_types[c] == "aiv" for c in act.core_ids)
    assert act.deps == [mm.task_id] and act.dispatch >= mm.finish
    torch.testing.assert_close(args[case.param_names.index("y")], case.expected(args)["y"], rtol=1e-4, atol=1e-4)


# ---- scheduling and units -----------------------------------------------------------------


def test_dispatch_latency_and_cores_from_target() -> None:
    target = load_target("a2a3")
    a, b = _inputs(64, 128)
    x, y = torch.zeros(64, 128), torch.zeros(64, 128)
    result = run(two_independent.specialize(a, b, x, y), a, b, x, y)
    assert len(result.core_types) == target.aic_cores + target.aiv_cores == 72
    assert result.core_types.count("aic") == 24
    for t in result.tasks:
        assert t.start - t.dispatch == target.dispatch_latency_cycles
        assert t.end - t.start == t.kernel_runs[0].cycles
        assert t.finish >= t.end
    assert sum(result.per_core_cycles.values()) == sum(t.cycles for t in result.tasks)


def test_custom_target_serialises_on_one_core(small_target: Path) -> None:
    """With one AIV core the two independent tasks run one after the other."""
    a, b = _inputs(64, 128)
    x, y = torch.zeros(64, 128), torch.zeros(64, 128)
    result = run(two_independent.specialize(a, b, x, y), a, b, x, y, config=RunConfig(target=str(small_target)))
    assert result.core_types == ["aic", "aiv"]
    t0, t1 = result.tasks
    aicpu = load_target(str(small_target)).aicpu
    assert t0.core_ids == t1.core_ids == [1]
    assert t0.dispatch == aicpu.submit + aicpu.dispatch
    assert t0.start - t0.dispatch == 100
    assert t1.dispatch == t0.finish + aicpu.complete + aicpu.dispatch  # the thread retires t0, then pops t1
    assert result.total_cycles == t1.finish == t0.cycles + t1.cycles + 200 + aicpu.submit + 2 * aicpu.dispatch + aicpu.complete
    torch.testing.assert_close(y, b * b)


def test_records_units() -> None:
    """Times are target cycles (the swimlane records' raw unit) with the clock to convert to us."""
    target = load_target("a2a3")
    a, b = _inputs(128, 128)
    out = torch.zeros(128, 128)
    ex = _example("beginner/01_hello_world.py")
    result = run(ex.hello_world.specialize(a, b, out), a, b, out)
    (t,) = result.tasks
    assert result.clock_hz == t.clock_hz == target.clock_hz
    assert t.start_us == pytest.approx(t.start * 1e6 / target.clock_hz)
    assert t.duration_us == pytest.approx((t.end - t.start) * 1e6 / target.clock_hz)
    assert result.time_us == pytest.approx(result.total_cycles / target.clock_hz * 1e6)
    sw = result.swimlane_records()
    assert sw["metadata"]["clock_freq_hz"] == target.clock_hz
    # reg_task_id (column 2 / 1) is the core's dispatch number: the first task on the core is 1
    assert sw["aicore_tasks"] == [[t.core_ids[0], 0, 1, t.start, t.end, t.start - t.dispatch]]
    assert sw["aicpu_tasks"] == [[t.core_ids[0], 1, t.dispatch, t.finish]]
    # the kernel's instruction records carry pipe, cycles and both locations
    recs = t.kernel_runs[0].records
    tadd = next(r for r in recs if r.instr == "TADD")
    assert tadd.pipe == "VECTOR" and tadd.end > tadd.start
    assert tadd.dsl_loc is not None and tadd.pto_loc is not None
    assert result.races == []


def test_real_platform_is_refused() -> None:
    a, b = _inputs(128, 128)
    out = torch.zeros(128, 128)
    ex = _example("beginner/01_hello_world.py")
    with pytest.raises(RuntimeError, match="needs an NPU") as refused:
        run(ex.hello_world.specialize(a, b, out), a, b, out, config=RunConfig(platform="a2a3"))
    assert "PYPTO_SIMULATE_NPU=1 to run 'a2a3' on its simulated twin (a2a3sim)" in str(refused.value)


def test_a_platform_whose_twin_has_no_target_does_not_suggest_the_variable() -> None:
    """``a5``'s simulated twin has no packaged target: setting ``PYPTO_SIMULATE_NPU`` cannot help, so the
    error does not suggest it (it did)."""
    a, b = _inputs(128, 128)
    out = torch.zeros(128, 128)
    ex = _example("beginner/01_hello_world.py")
    with pytest.raises(RuntimeError, match="needs an NPU") as refused:
        run(ex.hello_world.specialize(a, b, out), a, b, out, config=RunConfig(platform="a5"))
    message = str(refused.value)
    assert "PYPTO_SIMULATE_NPU" not in message and "a5sim has no packaged target" in message, message


# ---- In parameters ------------------------------------------------------------------


def test_in_parameters_are_not_written() -> None:
    ex = _example("beginner/01_hello_world.py")
    a, b = _inputs(128, 128)
    a0, b0 = a.clone(), b.clone()
    out = torch.zeros(128, 128)
    run(ex.hello_world.specialize(a, b, out), a, b, out)
    assert torch.equal(a, a0) and torch.equal(b, b0)
    torch.testing.assert_close(out, a + b)


def test_kernel_writing_an_in_argument_is_caught(tmp_path: Path) -> None:
    """Mark the kernel call's Out argument In: the copy-compare check names the task."""
    ex = _example("beginner/01_hello_world.py")
    a, b = _inputs(128, 128)
    out = torch.zeros(128, 128)
    compiled = ex.hello_world.compile(a, b, out, config=RunConfig(save_kernels_dir=str(tmp_path / "b")))
    assert compiled.lowered is not None
    fresh = type(compiled)(compiled.output_dir, compiled.program, compiled.lowered.clone())
    orch = fresh.lowered.functions["hello_world"]
    call = next(op for op in orch.walk() if isinstance(op, func.CallOp))
    call.attributes["pl.arg_directions"] = ArrayAttr([ParamDirectionAttr(ParamDirection.In)] * 3)
    with pytest.raises(InputWrittenError, match=r"t0 \(hello_world_incore_0\) wrote its In argument #2"):
        fresh(a, b, out)


# ---- ChipWorker / DeviceTensor ------------------------------------------------------------


def test_chip_worker_tensors_stay_resident(tmp_path: Path) -> None:
    torch.manual_seed(0)
    host = torch.randn(64, 128)
    out = torch.zeros(64, 128)
    compiled = scale.compile(host, out, config=RunConfig(save_kernels_dir=str(tmp_path / "b")))
    worker = ChipWorker()
    x = worker.alloc_tensor((64, 128), torch.float32, init=host)
    y = worker.alloc_tensor((64, 128), torch.float32)
    assert worker.allocated_bytes == 2 * 64 * 128 * 4
    storage_x, storage_y = x.array, y.array
    name = worker.register(compiled, "scale")
    r1 = worker.run(name, x, y)
    r2 = worker.run(name, y, x)  # y's data from the first launch, used where it lives
    assert r1.host_copy_bytes == r2.host_copy_bytes == 0
    assert x.array is storage_x and y.array is storage_y
    torch.testing.assert_close(y.to_torch(), 2 * host)
    torch.testing.assert_close(x.to_torch(), 4 * host)
    # a torch argument is copied in per launch (In and Out: the whole tensor)
    r3 = worker.run(name, host, out)
    assert r3.host_copy_bytes == 2 * host.numel() * 4
    torch.testing.assert_close(out, 2 * host)
    assert len(worker.launches) == 3
    worker.free_tensor(x)
    assert x.freed and worker.allocated_bytes == 64 * 128 * 4
    with pytest.raises(RuntimeError, match="freed"):
        worker.run(name, x, y)


def test_alloc_tensor_init_scalar_and_bf16() -> None:
    worker = ChipWorker()
    t = worker.alloc_tensor((4, 4), torch.bfloat16, init=1.5)
    assert t.array.dtype == np.uint16
    assert torch.equal(t.to_torch(), torch.full((4, 4), 1.5, dtype=torch.bfloat16))


# ---- the @pl.jit call path -----------------------------------------------------------------


def test_jit_call_compiles_caches_dispatches(tmp_path: Path) -> None:
    torch.manual_seed(0)
    a = torch.randn(64, 128)
    out = torch.zeros(64, 128)
    cfg = RunConfig(save_kernels_dir=str(tmp_path / "jit"))
    returned = scale(a, out, config=cfg)
    assert returned is out
    torch.testing.assert_close(out, 2 * a)
    n = len(scale._compiled)
    out2 = torch.zeros(64, 128)
    scale(a, out2, config=RunConfig(save_kernels_dir=str(tmp_path / "jit"), check_races=False))
    assert len(scale._compiled) == n  # run-side options reuse the compiled program
    torch.testing.assert_close(out2, 2 * a)
    compiled = scale.compile(a, out, config=cfg)
    assert compiled.last_run is not None and compiled.last_run.total_cycles > 0
    assert compiled(a, out, config=RunConfig(codegen_only=True)) is None


# ---- numerics vs torch ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "name"),
    [
        ("beginner/01_hello_world.py", "hello_world"),
        ("intermediate/02_softmax.py", "tile_softmax"),
        ("intermediate/02_softmax.py", "softmax_rows"),
        ("beginner/05_matmul.py", "matmul_64"),
        ("intermediate/04_matmul_acc.py", "matmul_k_loop"),
    ],
)
def test_numerics_match_torch(rel: str, name: str) -> None:
    case = next(c for c in _example(rel).CASES if c.name == name)
    args = case.inputs()
    result = run(case.kernel.specialize(*args), *args)
    assert result.races == []
    for out_name, want in case.expected(args).items():
        torch.testing.assert_close(args[case.param_names.index(out_name)], want, rtol=1e-4, atol=1e-4)


@pl.jit
def _past_the_end(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="past_the_end_k"):
        for i in pl.range(3):
            t = pl.load(a, [i * 64, 0], [64, 64])
            pl.store(pl.exp(t), [i * 64, 0], out)
    return out


def test_kernel_error_names_task_kernel_pto_and_dsl_lines(tmp_path: Path) -> None:
    """A load past the end of its tensor (the third of three 64-row tiles of a 128-row tensor): the error
    names the task, the kernel, the .pto position and the DSL line of the pl.load."""
    from pypto.device.interpreter import DeviceError

    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    compiled = pypto_compile(_past_the_end.specialize(a, out), output_dir=tmp_path / "build")
    with pytest.raises(DeviceError) as info:
        run(compiled, a, out)
    message = str(info.value)
    assert message.startswith("task t0 (@past_the_end_k): ")
    assert "past_the_end_k.pto:" in message and "pto.tload: GM window offset 8192" in message
    assert f"{Path(__file__).name}:" in message  # the pl.load's own line in this file
