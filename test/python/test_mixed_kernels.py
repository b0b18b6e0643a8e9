"""Mixed kernels on the simulated chip: an AIC and an AIV part joined by cube<->vector pipes.

examples/advanced/03_mixed_kernel.py has one kernel per direction. These tests
check what the example harness does not: the Group task takes one core
cluster, the pop waits for the push across cores, the producer part is
interpreted first whatever the Group's call order, the ``.pto`` and C++ carry
the pipe ops, and a pop with nothing pushed is a located error.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import torch

from pypto.device.interpreter import DeviceError, example_args, run_kernel
from pypto.ir import compile
from pypto.runtime import run

ROOT = Path(__file__).resolve().parents[2]


def _example():  # type: ignore[no-untyped-def]
    path = ROOT / "examples" / "advanced" / "03_mixed_kernel.py"
    sys.path.insert(0, str(path.parents[1]))
    spec = importlib.util.spec_from_file_location("mixed_kernel_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EX = _example()


def _records(kernel_run, prefix: str):  # type: ignore[no-untyped-def]
    return [r for r in kernel_run.records if r.instr.startswith(prefix)]


def test_cube_to_vector_epilogue(tmp_path: Path) -> None:
    torch.manual_seed(0)
    a, b, bias, y = EX.make_epilogue_inputs()
    compiled = compile(EX.matmul_bias_epilogue.specialize(a, b, bias, y), output_dir=tmp_path / "build")
    result = run(compiled, a, b, bias, y)
    torch.testing.assert_close(y, torch.relu(a @ b + bias), rtol=1e-3, atol=1e-3)
    assert result.races == [] and result.problems == []
    (task,) = result.tasks
    assert task.core_type == "mix"
    assert sorted(result.core_types[c] for c in task.core_ids) == ["aic", "aiv"]
    runs = dict(zip(task.part_names, task.kernel_runs, strict=True))
    aic = next(r for n, r in runs.items() if n.endswith("_aic"))
    aiv = next(r for n, r in runs.items() if n.endswith("_aiv"))
    (push,) = _records(aic, "TPUSH_TO_AIV")
    (pop,) = _records(aiv, "TPOP_FROM_AIC")
    assert push.pipe == "FIXPIPE" and pop.pipe == "MTE2"
    assert pop.start >= push.end  # the vector core waits for the cube's push
    # the .pto and the C++ of each part carry the pipe ops
    build = Path(compiled.output_dir)
    aic_name = next(n for n in runs if n.endswith("_aic"))
    aiv_name = next(n for n in runs if n.endswith("_aiv"))
    assert "pto.tpush_to_aiv(" in (build / "ptoas" / f"{aic_name}.pto").read_text()
    assert "pto.tpop_from_aic {split = 0" in (build / "ptoas" / f"{aiv_name}.pto").read_text()
    assert "TPUSH_TO_AIV(" in (build / "ptoas" / f"{aic_name}.cpp").read_text()
    assert "TPOP_FROM_AIC(" in (build / "ptoas" / f"{aiv_name}.cpp").read_text()


def test_vector_to_cube_runs_the_pushing_part_first(tmp_path: Path) -> None:
    """The Group calls the AIC part first; it pops what the AIV part pushes, so the AIV part is interpreted
    first and the AIC's pop starts after the AIV's push ended."""
    torch.manual_seed(1)
    a, b, c = EX.make_prescaled_inputs()
    compiled = compile(EX.prescaled_matmul.specialize(a, b, c), output_dir=tmp_path / "build")
    result = run(compiled, a, b, c)
    torch.testing.assert_close(c, (2 * a) @ b, rtol=1e-3, atol=1e-3)
    assert result.races == [] and result.problems == []
    (task,) = result.tasks
    runs = dict(zip(task.part_names, task.kernel_runs, strict=True))
    aic = next(r for n, r in runs.items() if n.endswith("_aic"))
    aiv = next(r for n, r in runs.items() if n.endswith("_aiv"))
    (push,) = _records(aiv, "TPUSH_TO_AIC")
    (pop,) = _records(aic, "TPOP_FROM_AIV")
    assert pop.start >= push.end


def test_pop_with_nothing_pushed_is_a_located_error(tmp_path: Path) -> None:
    a, b, bias, y = EX.make_epilogue_inputs()
    compiled = compile(EX.matmul_bias_epilogue.specialize(a, b, bias, y), output_dir=tmp_path / "build")
    (aiv,) = (Path(compiled.output_dir) / "ptoas").glob("*_aiv.pto")
    with pytest.raises(DeviceError, match=r"_aiv\.pto:\d+:\d+: 03_mixed_kernel\.py:\d+:\d+: pto\.tpop_from_aic: nothing to pop: the cube side"):
        run_kernel(aiv, None, example_args(aiv))
    # with the cube part's pipe, the same kernel runs
    (aic,) = (Path(compiled.output_dir) / "ptoas").glob("*_aic.pto")
    pipes: dict = {}  # type: ignore[type-arg]
    run_kernel(aic, None, example_args(aic), channels=pipes)
    assert len(pipes["c2v"]) == 1
    run_kernel(aiv, None, example_args(aiv), channels=pipes)
    assert len(pipes["c2v"]) == 0


S = 64


def _attention():  # type: ignore[no-untyped-def]
    """Attention in one scope: ``q @ k.T`` on the cube, softmax on the vector core, ``p @ v`` on the cube:
    the cube pops what the vector pushed and the other way round."""
    import pypto.language as pl

    @pl.jit
    def attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="attn"):
            tq = pl.load(q, [0, 0], [S, S], target_memory=pl.Mem.Mat)
            tk = pl.load(k, [0, 0], [S, S], target_memory=pl.Mem.Mat)
            kt = pl.move(pl.tile.transpose_view(tk), target_memory=pl.Mem.Right)
            scores = pl.mul(pl.move(pl.matmul(pl.move(tq, target_memory=pl.Mem.Left), kt), target_memory=pl.Mem.Vec), 0.125)
            tmp = pl.create_tile([S, S], dtype=pl.FP32)
            e = pl.exp(pl.row_expand_sub(scores, pl.row_max(scores, tmp)))
            p = pl.cast(pl.row_expand_div(e, pl.row_sum(e, tmp)), pl.FP16)
            tv = pl.load(v, [0, 0], [S, S], target_memory=pl.Mem.Mat)
            pv = pl.matmul(pl.move(pl.move(p, target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left),
                           pl.move(tv, target_memory=pl.Mem.Right))  # fmt: skip
            pl.store(pv, [0, 0], o)
        return o

    return attention


def test_parts_that_push_to_each_other_run_interleaved(tmp_path: Path) -> None:
    """A Group task whose parts push both ways (fused attention) stopped with "pipes both ways: the device
    model ... cannot interleave them"; the interpreter now runs the parts in turn, handing over at a pop of an
    empty pipe, and gives torch's numbers, with every DFX flag on too (the collectors watch each part)."""
    from pypto.runtime import RunConfig

    attention = _attention()
    torch.manual_seed(0)
    q, k, v = (torch.randn(S, S).half() for _ in range(3))
    ref = torch.softmax(q.float() @ k.float().T * 0.125, -1).half().float() @ v.float()
    o = torch.zeros(S, S)
    flags = {"enable_chip_swimlane": 4, "enable_dump_args": 2, "enable_pmu": 2, "enable_dep_gen": True}
    attention(q, k, v, o, config=RunConfig(save_kernels_dir=str(tmp_path / "b"), **flags))
    torch.testing.assert_close(o, ref, rtol=1e-3, atol=1e-3)
    compiled = attention.compile(q, k, v, o, config=RunConfig(save_kernels_dir=str(tmp_path / "c")))
    result = run(compiled, q, k, v, o)
    (task,) = result.tasks
    assert task.core_type == "mix" and len(task.kernel_runs) == 2
    assert result.total_cycles >= max(int(r.cycles) for r in task.kernel_runs)
    for name in ("chip_swimlane_records.json", "pmu.csv", "deps.json", "args_dump/args.bin"):
        assert (tmp_path / "b" / "dfx_outputs" / name).is_file(), name
    with pytest.raises(DeviceError, match="push to and pop from each other .*kernel_engine='interpreter'"):
        run(compiled, q, k, v, o, config=RunConfig(kernel_engine="cpp"))


def test_interleaved_parts_hand_over_at_an_empty_pipe_and_report_a_deadlock() -> None:
    """:class:`Interleaved` runs one part at a time, in turn from the first, handing over at a pop of an
    empty pipe; parts that all wait on empty pipes are a DeviceError naming them."""
    from collections import deque

    from pypto.utils.interleave import Interleaved

    c2v: deque[int] = deque()
    v2c: deque[int] = deque()
    log: list[str] = []
    parts = Interleaved(["cube", "vec"], DeviceError)

    def pop(q: deque[int], who: str) -> int:
        if not q:
            log.append(f"{who} waits")
            parts.wait(q)
        return q.popleft()

    def cube() -> int:
        c2v.append(1)
        log.append("cube pushed 1")
        got = pop(v2c, "cube")
        log.append(f"cube got {got}")
        return got

    def vec() -> int:
        got = pop(c2v, "vec")
        v2c.append(got + 1)
        log.append("vec pushed 2")
        return got

    assert parts.run([cube, vec]) == [2, 1]
    assert log == ["cube pushed 1", "cube waits", "vec pushed 2", "cube got 2"]

    stuck = Interleaved(["a", "b"], DeviceError)
    qa: deque[int] = deque()
    qb: deque[int] = deque()
    with pytest.raises(DeviceError, match="@a, @b each pop a pipe the other parts pushed nothing"):
        stuck.run([lambda: stuck.wait(qa), lambda: stuck.wait(qb)])


def test_attention_written_on_tensors_runs_in_one_kernel(tmp_path: Path) -> None:
    """The same attention on tensors: ``pl.matmul(q, k, b_trans=True)``, softmax, ``pl.matmul(p, v)``.
    ConvertTensorToTileOps moves the vector result ``p`` to Mat for the second matmul (Vec -> Mat, as upstream;
    it was "is a tile in pl.Mem.Vec, expected pl.Mem.Mat"), and the task's parts run interleaved."""
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            scores = pl.mul(pl.matmul(q, k, b_trans=True, out_dtype=pl.FP32), 0.125)
            e = pl.exp(pl.row_expand_sub(scores, pl.row_max(scores)))
            p = pl.cast(pl.row_expand_div(e, pl.row_sum(e)), pl.FP16)
            o[:] = pl.matmul(p, v, out_dtype=pl.FP32)
        return o

    torch.manual_seed(1)
    q, k, v = torch.randn(32, 64).half(), torch.randn(48, 64).half(), torch.randn(48, 64).half()
    o = torch.zeros(32, 64)
    attention(q, k, v, o, config=RunConfig(save_kernels_dir=str(tmp_path / "b"), dump_passes=True))
    ref = torch.softmax(q.float() @ k.float().T * 0.125, -1).half().float() @ v.float()
    torch.testing.assert_close(o, ref, rtol=1e-3, atol=1e-3)
    dump = (tmp_path / "b" / "passes_dump" / "11_after_ConvertTensorToTileOps.py").read_text()
    assert re.search(r"pl\.tile\.move\(p\w*, target_memory=pl\.Mem\.Mat\)", dump), dump
    assert "pl.tile.transpose_view(" in dump
