"""Warning checks (UnusedVariable, OutParamWriteDropped): on stderr at
PRE_PIPELINE, in each pass's ``.log`` at POST_PASS, silenced by
``disabled_diagnostics`` and muted by ``diagnostic_phase=NONE``."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.ir import compile as ir_compile
from pypto.pipeline.perf_hints import DiagnosticPhase


@pl.jit
def leaky(a: pl.Tensor, out: pl.Out[pl.Tensor], spare: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.exp(a)
        unused = pl.add(a, a)
        out[:] = t
        spare = pl.add(t, t)
    return out


def _program():
    return leaky.specialize(torch.randn(32, 128), torch.zeros(32, 128), torch.zeros(32, 128))


def test_pre_pipeline_warnings_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ir_compile(_program(), output_dir=tmp_path / "b", dump_passes=False)
    err = capsys.readouterr().err
    assert "[warning] [UnusedVariable] variable 'unused' is assigned but never used at test_warnings.py:21:9" in err
    assert "[warning] [OutParamWriteDropped] Out parameter 'spare' of 'leaky' is never written" in err
    assert "at test_warnings.py:18:49" in err


def test_post_pass_warnings_go_to_each_pass_log(tmp_path: Path) -> None:
    out = ir_compile(_program(), output_dir=tmp_path / "b", dump_passes=True, diagnostic_phase=DiagnosticPhase.POST_PASS)
    logs = sorted((Path(out.output_dir) / "passes_dump").glob("*.log"))
    assert logs and logs[0].name == "01_after_InlineFunctions.log"
    text = logs[0].read_text().splitlines()
    i = next(k for k, line in enumerate(text) if "'unused'" in line)
    assert text[i].endswith(":21:9: warning: variable 'unused' is assigned but never used [UnusedVariable]")
    assert text[i + 1] == " 21 |         unused = pl.add(a, a)"
    assert text[i + 2] == "    |         ^~~~~~"


def test_disabled_and_muted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ir_compile(_program(), output_dir=tmp_path / "a", dump_passes=False, disabled_diagnostics=["UnusedVariable"])
    err = capsys.readouterr().err
    assert "UnusedVariable" not in err and "OutParamWriteDropped" in err
    ir_compile(_program(), output_dir=tmp_path / "b", dump_passes=False, diagnostic_phase=DiagnosticPhase.NONE)
    assert "[warning]" not in capsys.readouterr().err


def _dropped(source: str) -> list[str]:
    """The Out parameters :func:`dropped_out_params` finds never written in a program's source."""
    from pypto.pipeline.checks.warnings import dropped_out_params

    return [name for _, name in dropped_out_params(pl.parse(source, filename="prog.py").module)]


COLLECTIVE = """
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.InOut[pl.Tensor[[1, 256], pl.FP32]],
             sig: pl.InOut[pl.Tensor[[2, 1], pl.INT32]]) -> pl.Tensor[[1, 256], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            data = pld.tensor.COLLECTIVE
        return data
"""


@pytest.mark.parametrize(("call", "dropped"), [
    ("allreduce(data, sig, op=pld.ReduceOp.Sum)", []),  # the collective's notifies write its signal
    ("broadcast(data, sig, root=1)", []),
    ("allreduce(data)", ["sig"]),  # no signal passed: it is really never written
])  # fmt: skip
def test_a_collective_writes_its_signal(call: str, dropped: list[str]) -> None:
    assert _dropped(COLLECTIVE.replace("COLLECTIVE", call)) == dropped


FILL = """
import pypto.language as pl

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, a: pl.Tensor[[16, 64], pl.FP32],
             dst: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        return pl.store(t, [0, 0], dst)
"""
"""The front of the programs below: a kernel that writes its Out parameter ``dst`` from ``a``."""

VIEW_WRITE = FILL + """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.range(4):
            view = pl.slice(out, [16, 64], [i * 16, 0])
            _done = self.fill(a, VIEW)
        return out
"""


@pytest.mark.parametrize(("view", "dropped"), [
    ("view", []),  # upstream's 04_paged_attention writes its out through a slice passed to a kernel
    ("pl.slice(out, [16, 64], [0, 0])", []),
    ("pl.create_tensor([16, 64], dtype=pl.FP32)", ["out"]),  # the slice is taken but nothing writes it
])  # fmt: skip
def test_a_view_of_an_out_parameter_written_by_a_call_writes_it(view: str, dropped: list[str]) -> None:
    assert _dropped(VIEW_WRITE.replace("VIEW", view)) == dropped


STATIC_DIM = FILL + """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        cols = pl.tensor.dim(a, 1)
        BODY
        return out
"""


@pytest.mark.parametrize(("body", "unused"), [
    # upstream's 06_paged_attention_dynamic: a static extent read into a shape (the front end writes in 64)
    ("buf = pl.create_tensor([16, cols], dtype=pl.FP32)\n        out = self.fill(buf, out)", []),
    ("out = self.fill(a, out)", []),  # a static extent nobody reads: a constant, not flagged either
])  # fmt: skip
def test_a_static_extent_used_in_a_shape_is_not_an_unused_variable(body: str, unused: list[str]) -> None:
    from pypto.pipeline.checks.warnings import unused_variables

    prog = pl.parse(STATIC_DIM.replace("BODY", body), filename="dims.py")
    assert [name for _, name in unused_variables(prog.module)] == unused


RETURNED = """
import pypto.language as pl

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.InCore)
    def init(self, oi: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        return oi

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        out = self.init(out)
        return out
"""


def test_an_out_parameter_returned_unwritten_is_said_so(capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream's ``kernel_init_inplace`` returns its Out parameters as they came in: the warning says that, not
    that a name was rebound (nothing was)."""
    from pypto.pipeline.checks.warnings import check_dropped_out_params

    check_dropped_out_params(pl.parse(RETURNED, filename="init.py").module)
    err = capsys.readouterr().err
    assert "Out parameter 'oi' of 'init' is never written: it is returned as it came in; write it with" in err
    assert "rebinds" not in err
