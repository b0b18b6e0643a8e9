"""``pypto.debug.torch_codegen`` and its command line (``python -m pypto.debug.bisect``) on unusual
and bad input: the torch form gives the simulated chip's numbers at the edges (casts that round
ties or leave the integer range), and a user's mistake is a located error, never a traceback or
a lost file."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from test_torch_codegen import TensorOps

import pypto.language as pl
from pypto.debug.bisect import main as bisect_main
from pypto.debug.validate import run_program
from pypto.ir import compile as ir_compile


@pl.jit
def _cast_modes(
    a: pl.Tensor,
    c_round: pl.Out[pl.Tensor],
    c_rint: pl.Out[pl.Tensor],
    c_floor: pl.Out[pl.Tensor],
    c_ceil: pl.Out[pl.Tensor],
    c_trunc: pl.Out[pl.Tensor],
):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 16])
        pl.store(pl.cast(t, c_round.dtype, mode="round"), [0, 0], c_round)
        pl.store(pl.cast(t, c_rint.dtype, mode="rint"), [0, 0], c_rint)
        pl.store(pl.cast(t, c_floor.dtype, mode="floor"), [0, 0], c_floor)
        pl.store(pl.cast(t, c_ceil.dtype, mode="ceil"), [0, 0], c_ceil)
        pl.store(pl.cast(t, c_trunc.dtype, mode="trunc"), [0, 0], c_trunc)
    return c_round, c_rint, c_floor, c_ceil, c_trunc


_EDGES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 1e10, -1e10, float("nan"), float("inf"), -float("inf"), 127.5, -128.5]
_MODES = ("round", "rint", "floor", "ceil", "trunc")


def _expected(x: float, mode: str, dtype: torch.dtype) -> int:
    """The chip's float -> int conversion of one value: rounded by ``mode``, saturated, NaN 0."""
    info = torch.iinfo(dtype)
    if x != x:
        return 0
    if x in (float("inf"), -float("inf")):
        return info.max if x > 0 else info.min
    r = {
        "round": math.copysign(math.floor(abs(x) + 0.5), x),
        "rint": float(round(x)),
        "floor": float(math.floor(x)),
        "ceil": float(math.ceil(x)),
        "trunc": float(math.trunc(x)),
    }[mode]
    return int(min(max(r, info.min), info.max))


def test_cast_modes_and_saturation_match_the_chip() -> None:
    """Every cast mode reaches the chip (the codegen dropped it: every mode rounded half away from zero),
    and out-of-range values saturate in the torch form (it wrapped: 1e10 -> 0 in int8) and on the
    interpreter (it clipped in float32: 1e10 -> INT32_MIN)."""
    a = torch.zeros(8, 16)
    a[0, : len(_EDGES)] = torch.tensor(_EDGES)
    a[1:] = torch.randn(7, 16, generator=torch.Generator().manual_seed(0)) * 300
    for dtype in (torch.int32, torch.int8):
        outs = [torch.zeros(8, 16, dtype=dtype) for _ in _MODES]
        _cast_modes(a, *outs)  # the simulated chip
        names = ["a", *(f"c_{m}" for m in _MODES)]
        program = _cast_modes.specialize(a, *outs)
        ref = run_program(program, dict(zip(names, [a, *(torch.zeros_like(o) for o in outs)], strict=True)))
        for mode, chip in zip(_MODES, outs, strict=True):
            want = [_expected(x, mode, dtype) for x in _EDGES]
            assert chip[0, : len(_EDGES)].tolist() == want, f"chip, {mode}, {dtype}"
            assert torch.equal(ref[f"c_{mode}"], chip), f"torch form vs chip, {mode}, {dtype}"


# ---- python -m pypto.debug.bisect: bad input ------------------------------------------




@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tc_bad") / "relu"
    ir_compile(TensorOps, output_dir=out)  # relu(x + 1) ** 2, test_torch_codegen's
    return out


def test_bisect_output_path_that_is_an_input_is_refused(
    build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` naming a snapshot (by any name) or the ``--inputs`` file was overwritten with the verdicts."""
    dump = build / "passes_dump" / "00_frontend.py"
    before = dump.read_bytes()
    link = tmp_path / "link.py"
    link.symlink_to(dump)
    inputs = tmp_path / "in.pt"
    torch.save({"x": torch.randn(32, 64)}, inputs)
    saved = inputs.read_bytes()
    for output, extra in ((dump, []), (link, []), (inputs, ["--inputs", str(inputs)])):
        assert bisect_main([str(build), "-o", str(output), *extra]) == 1
        err = capsys.readouterr().err
        assert "the output path (-o) is the input file" in err and "internal error" not in err, err
    assert dump.read_bytes() == before and inputs.read_bytes() == saved


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"tensors": [1]}, r"'tensors' expected a dict of tensors by name, got list"),
        ({"tensors": {"x": torch.zeros(32, 64)}, "expected": {"out": 3}}, r"'expected' 'out' must be a tensor, got int"),
        ({"tensors": {}, "expected": [torch.zeros(1)]}, r"'expected' expected a dict of tensors by name, got list"),
        ({"tensors": {}, "expeted": {}}, r"unknown key\(s\) 'expeted'"),
        ({1: torch.zeros(32, 64)}, r"the key 1 is not a parameter name"),
        ({"tensors": {}, "expected": {"nope": torch.zeros(32, 64)}}, r"name 'nope', which is not an output of the entry; its outputs are: out"),
        ({"tensors": {}, "expected": {"x": torch.zeros(32, 64)}}, r"name 'x', which is not an output"),
    ],
)
def test_bisect_bad_inputs_file(
    build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any, message: str
) -> None:
    """A malformed ``--inputs`` was an internal error (TypeError, AttributeError) or, with an expected tensor
    naming no output, a "divergence" of the frontend snapshot (exit 3)."""
    inputs = tmp_path / "in.pt"
    torch.save(data, inputs)
    assert bisect_main([str(build), "--inputs", str(inputs), "--no-write"]) == 1
    err = capsys.readouterr().err
    assert re.search(message, err) and "internal error" not in err, err


def test_bisect_inputs_not_a_torch_file(build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is not ``torch.save``'s: one line naming it (torch's page on ``weights_only`` before)."""
    bad = tmp_path / "in.pt"
    bad.write_text("hello")
    assert bisect_main([str(build), "--inputs", str(bad), "--no-write"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}: cannot read the inputs: not a torch.save file" in err, err
