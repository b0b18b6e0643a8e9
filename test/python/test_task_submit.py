"""``result, tid = pl.submit(self.kernel, ...)``, task-id arrays carried through
``pl.range(init_values=)`` and ``pl.system.task_dummy(deps=[...])`` (upstream's
``utils/phase_fence_dep_compression``): a fan-out stored into an array is waited for as a whole
by the next phase, in ``pl.manual_scope`` where no data edge is derived."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from pypto.ir import compile
from pypto.runtime import run

ROWS, COLS, TILE = 128, 32, 32  # 2 phases x 2 branches of 32-row stripes

PROGRAM = '''
import pypto.language as pl

@pl.program
class PhaseFence:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[128, 32], pl.FP32], row: pl.Scalar[pl.INDEX], bias: pl.Scalar[pl.FP32],
               out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]) -> pl.Tensor[[128, 32], pl.FP32]:
        t: pl.Tile[[32, 32], pl.FP32] = pl.load(data, [row, 0], [32, 32])
        ret: pl.Tensor[[128, 32], pl.FP32] = pl.store(pl.add(t, bias), [row, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[128, 32], pl.FP32], out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]) -> pl.Tensor[[128, 32], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(2, pl.TASK_ID)
            for phase, (prev,) in pl.range(2, init_values=(tids,)):
                nxt = pl.array.create(2, pl.TASK_ID)
                DUMMY
                for branch in pl.parallel(2):
                    row: pl.Scalar[pl.INDEX] = (phase * 2 + branch) * 32
                    out, tid = pl.submit(self.stripe, data, row, 1.0, out, deps=[WAIT])
                    nxt[branch] = tid
                tids = pl.yield_(nxt)
        return out
'''


def _source(dummy: bool) -> str:
    if dummy:
        return PROGRAM.replace("DUMMY", "fence = pl.system.task_dummy(deps=[prev])").replace("WAIT", "fence")
    return PROGRAM.replace("                DUMMY\n", "").replace("WAIT", "prev")


@pytest.mark.parametrize("dummy", [False, True])
def test_next_phase_waits_for_every_task_of_the_previous_one(dummy: bool, tmp_path) -> None:
    prog = pl.parse(_source(dummy))
    text = prog.as_python()
    assert 'attrs={"task_handle": "tid", "user_deps": ["tid"], "manual_dep": True}' in text
    assert pl.parse(text).as_python() == text
    data, out = torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)
    result = run(compile(prog, output_dir=tmp_path / "build"), data, out)
    torch.testing.assert_close(out, data + 1.0)
    graph = result.graph
    # phase 0: tasks 0, 1 (no wait: the initial array is empty); phase 1: tasks 2, 3 wait for both
    assert sorted(graph.edges()) == [(0, 2), (0, 3), (1, 2), (1, 3)]
    assert {e.kind for t in graph.tasks for e in t.dep_edges} == {"explicit"}


def test_submit_is_a_call_with_a_handle() -> None:
    src = _source(False).replace("with pl.manual_scope():", "with pl.scope():")
    src = src.replace("@pl.function(type=pl.FunctionType.Orchestration)", "@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)")  # a hand-placed AUTO scope
    text = pl.parse(src).as_python()
    assert 'self.stripe(data, row, 1.0, out, attrs={"task_handle": "tid", "user_deps": ["tid"]})' in text


@pytest.mark.parametrize(
    ("old", "new", "error", "message", "where"),
    [
        ("out, tid = pl.submit(", "tid = pl.submit(", UnsupportedFeatureError, "unpack pl.submit into two names", ":21:"),
        ("pl.submit(self.stripe,", "pl.submit(stripe,", ParserSyntaxError, "must be a kernel written self.<kernel>", ":21:"),
        ("deps=[prev]", "deps=[row]", ParserTypeError, "'row' is not a task handle", ":21:"),
        ("tids = pl.yield_(nxt)", "tids = pl.yield_(out)", ParserTypeError, "exactly where init_values has one", ":23:"),
        ("deps=[prev])", "deps=[prev], wait=1)", Exception, "pl.submit has no argument 'wait'", ":21:"),
    ],
)
def test_submit_errors_are_located(old: str, new: str, error: type, message: str, where: str) -> None:
    src = _source(False)
    assert old in src
    with pytest.raises(error, match=message) as e:
        pl.parse(src.replace(old, new), filename="pf.py")
    assert f"pf.py{where}" in str(e.value)


def test_task_dummy_takes_deps_only() -> None:
    src = _source(True).replace("task_dummy(deps=[prev])", "task_dummy(prev)")
    with pytest.raises(Exception, match="takes one keyword argument: deps=") as e:
        pl.parse(src, filename="pf.py")
    assert "pf.py:19:" in str(e.value)
