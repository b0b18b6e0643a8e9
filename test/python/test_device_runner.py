"""``pypto.runtime.device_runner`` (upstream's L2 device pipeline, on the simulated chip) and the Simpler
runtime's level-3 API of ``pypto.runtime.simpler_compat`` driving it by hand, as upstream's ``test_l3_manual``."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.runtime import simpler_compat as S
from pypto.runtime.device_runner import ChipCallable, compile_and_assemble, execute_on_device, validate_golden
from pypto.runtime.distributed_runner import _tensor_from_continuous

N = 64


@pl.program
class AddProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out_f = self.tile_add(a, b, f)
        return out_f


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("l2") / "build"
    ir.compile(AddProgram, output_dir=str(out), platform="a2a3sim")
    return out


def test_compile_and_assemble_gives_upstreams_triple(build: Path) -> None:
    chip, runtime, config = compile_and_assemble(build, platform="a2a3sim")
    assert isinstance(chip, ChipCallable) and chip.name == "chip_orch"
    assert chip.signature == ["In", "In", "Out"]
    assert runtime == "tensormap_and_ringbuffer" and config["runtime"] == runtime


def test_execute_on_device_writes_the_outputs_in_place(build: Path) -> None:
    chip, runtime, _ = compile_and_assemble(build, platform="a2a3sim")
    a, b, f = torch.randn(N, N), torch.randn(N, N), torch.zeros(N, N)
    result = execute_on_device(chip, [a, b, f], "a2a3sim", runtime, 1, aicpu_thread_num=4, enable_pmu=0)
    torch.testing.assert_close(f, a + b)
    assert result.total_cycles > 0
    validate_golden({"f": f}, {"f": a + b})


def test_misuse_is_a_clear_error(build: Path, tmp_path: Path) -> None:
    chip, runtime, _ = compile_and_assemble(build, platform="a2a3sim")
    with pytest.raises(ValueError, match="only level=2"):
        execute_on_device(chip, [], "a2a3sim", runtime, 0, level=3)
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['enable_magic'\]"):
        execute_on_device(chip, [], "a2a3sim", runtime, 0, enable_magic=1)
    with pytest.raises(TypeError, match=r"expected 3 arguments \(In, In, Out\), got 1"):
        chip(torch.zeros(N, N))
    with pytest.raises(FileNotFoundError, match="no kernel_config.py"):
        compile_and_assemble(tmp_path, platform="a2a3sim")


def test_validate_golden_ignores_nan_and_names_the_output() -> None:
    golden = torch.tensor([1.0, math.nan, 3.0])
    validate_golden({"y": torch.tensor([1.0, 42.0, 3.0])}, {"y": golden})  # NaN: don't care
    with pytest.raises(AssertionError, match=r"output 'y': 1 of 3 elements differ .*max abs diff 1"):
        validate_golden({"y": torch.tensor([1.0, 0.0, 4.0])}, {"y": golden})


def test_a_hand_written_l3_on_simplers_api(build: Path) -> None:
    chip, runtime, _ = compile_and_assemble(build, platform="a2a3sim")
    a, b, f = torch.full((N, N), 2.0), torch.full((N, N), 3.0), torch.zeros(N, N)
    done = torch.zeros(1, dtype=torch.int32)

    def verify(args: list) -> None:
        torch.testing.assert_close(_tensor_from_continuous(args[0]), torch.full((N, N), 5.0))
        done.fill_(1)

    w = S.Worker(level=3, device_ids=[0, 1], num_sub_workers=1, platform="a2a3sim", runtime=runtime)
    chip_cid, verify_cid = w.register(chip), w.register(verify)
    w.init()
    with pytest.raises(RuntimeError, match="before init"):
        w.register(verify)

    def orch_fn(orch: S.Orchestrator, _args: object, _cfg: object) -> None:
        ta = S.TaskArgs()
        ta.add_tensor(S.make_tensor_arg(w, a), S.TensorArgType.INPUT)
        ta.add_tensor(S.make_tensor_arg(w, b), S.TensorArgType.INPUT)
        ta.add_tensor(S.make_tensor_arg(w, f), S.TensorArgType.OUTPUT_EXISTING)
        with pytest.raises(ValueError, match=r"worker= must name a chip 0..1, got None"):
            orch.submit_next_level(chip_cid, ta, S.CallConfig())
        cfg = S.CallConfig()
        cfg.aicpu_thread_num = 4
        orch.submit_next_level(chip_cid, ta, cfg, worker=1)
        vt = S.TaskArgs()
        vt.add_tensor(S.make_tensor_arg(w, f), S.TensorArgType.INPUT)
        orch.submit_sub(verify_cid, vt)

    w.run(orch_fn)
    w.close()
    torch.testing.assert_close(f, torch.full((N, N), 5.0))
    assert done.item() == 1
    with pytest.raises(ValueError, match="contiguous CPU tensor"):
        S.make_tensor_arg(w, torch.zeros(4, 4).t())


def test_there_is_no_simpler_package_in_our_install() -> None:
    assert importlib.util.find_spec("simpler") is None and importlib.util.find_spec("simpler_setup") is None
