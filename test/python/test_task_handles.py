"""``with pl.at(...) as t:`` task handles and ``pl.at(..., deps=[t])`` explicit dependencies (issue 15):
the edge reaches AutoDeriveTaskDependencies' ``pl.task_deps`` and the runtime's task graph."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError, UnsupportedFeatureError
from pypto.runtime import RunConfig


@pl.jit
def independent(a: pl.Tensor, b: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_x") as first:
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_y", deps=[first]):  # no data edge: only the declared one
        y[:] = pl.mul(b, b)
    return x, y


@pl.jit
def no_deps(a: pl.Tensor, b: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_x"):
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_y"):
        y[:] = pl.mul(b, b)
    return x, y


def _args() -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)]


def test_frontend_prints_and_parses_handles() -> None:
    text = independent.specialize(*_args()).as_python()
    assert 'with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_x") as first:' in text
    assert 'with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_y", deps=[first]):' in text
    assert pl.parse(text).as_python() == text


def test_declared_edge_reaches_the_task_graph(tmp_path) -> None:
    args = _args()
    compiled = independent.compile(*args, config=RunConfig(save_kernels_dir=str(tmp_path / "dep")))
    compiled(*args)
    graph = compiled.last_run.graph
    assert graph.edges() == [(0, 1)]
    assert [e.kind for e in graph.tasks[1].dep_edges] == ["explicit"]
    torch.testing.assert_close(args[2], 2 * args[0])
    torch.testing.assert_close(args[3], args[1] * args[1])
    plain = _args()
    other = no_deps.compile(*plain, config=RunConfig(save_kernels_dir=str(tmp_path / "plain")))
    other(*plain)
    assert other.last_run.graph.edges() == []  # without deps= the two tasks are independent


def test_bad_deps_are_located() -> None:
    src = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, a: pl.Tensor[[16, 16], pl.FP32], x: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, deps=[nothing]):
            x[:] = pl.add(a, a)
        return x
"""
    with pytest.raises(ParserTypeError, match="'nothing' is not a task handle") as e:
        pl.parse(src, filename="deps.py")
    assert "deps.py:8:53" in str(e.value)
    with pytest.raises(UnsupportedFeatureError, match="only as 'with pl.at"):
        pl.parse(src.replace("with pl.at(level=pl.Level.CORE_GROUP, deps=[nothing])", "with pl.scope() as s"))


@pl.jit
def array_of_handles(a: pl.Tensor, b: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    """upstream's performance/03-dependencies: handles stored into pl.array.create(n, pl.TASK_ID)."""
    writers = pl.array.create(2, pl.TASK_ID)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_x") as first:
        x[:] = pl.add(a, a)
    writers[0] = first
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_x2") as second:
        x[:] = pl.add(x, a)
    writers[1] = second
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_y", deps=[writers]):  # no data edge: the array's
        y[:] = pl.mul(b, b)
    return x, y


def test_array_of_task_handles_waits_for_each(tmp_path) -> None:
    args = _args()
    compiled = array_of_handles.compile(*args, config=RunConfig(save_kernels_dir=str(tmp_path / "arr")))
    compiled(*args)
    graph = compiled.last_run.graph
    assert sorted(graph.edges()) == [(0, 1), (0, 2), (1, 2)]  # (0, 1): the data edge on x
    assert [e.kind for e in graph.tasks[2].dep_edges] == ["explicit", "explicit"]
    torch.testing.assert_close(args[2], 3 * args[0])
    torch.testing.assert_close(args[3], args[1] * args[1])


def test_array_of_handles_errors_are_located() -> None:
    src = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, a: pl.Tensor[[16, 16], pl.FP32], x: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        arr = pl.array.create(2, pl.INT32)
        return x
"""
    with pytest.raises(UnsupportedFeatureError, match="scalars belongs in InCore code") as e:
        pl.parse(src, filename="arr.py")
    assert "arr.py:8:15" in str(e.value)
    bad_store = src.replace("pl.INT32)", "pl.TASK_ID)\n        arr[0] = a")
    with pytest.raises(ParserTypeError, match="'arr' holds task handles") as e:
        pl.parse(bad_store, filename="arr.py")
    assert "arr.py:9:18" in str(e.value)
