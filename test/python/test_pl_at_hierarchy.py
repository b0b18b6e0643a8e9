"""``with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):`` in a HOST orchestrator (issue 19): each scope
outlined into a chip orchestration function (upstream's OutlineHierarchyScopes), dispatched round-robin over
the chips; and ``pl.at``'s misuse errors, located."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.dialects.enums import ParamDirection
from pypto.dialects.program import param_directions
from pypto.errors import InvalidOperationError, ParserError, ParserSyntaxError, UnsupportedFeatureError
from pypto.ir.distributed_compiled_program import DistributedConfig

M = 64
T = f"pl.Tensor[[{M}, {M}], pl.FP32]"


@pl.program
class TwoChips:
    """Upstream's test_l3_distributed inline program, smaller: chip scope 0 adds, chip scope 1 subtracts."""

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        a: pl.Tensor[[M, M], pl.FP32],
        b: pl.Tensor[[M, M], pl.FP32],
        sum_buf: pl.Out[pl.Tensor[[M, M], pl.FP32]],
        sub_buf: pl.Out[pl.Tensor[[M, M], pl.FP32]],
    ) -> pl.Tensor[[M, M], pl.FP32]:
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.add(a, b)
                out_sum = pl.assemble(sum_buf, out, [0, 0])
        with pl.at(pl.Level.CHIP, pl.Role.Orchestrator, name_hint="chip_sub"):
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.sub(a, b)
                pl.assemble(sub_buf, out, [0, 0])
        return out_sum


def test_each_chip_scope_is_an_orchestration_function_with_upstreams_name() -> None:
    funcs = TwoChips.func_ops
    assert {"host_orch_chip_orch_0", "chip_sub"} <= set(funcs)
    first = funcs["host_orch_chip_orch_0"]
    names = [a.name_hint for a in first.body.block.args]
    assert names == ["a", "b", "sum_buf"]  # what the scope reads, then what it writes
    assert param_directions(first) == [ParamDirection.In, ParamDirection.In, ParamDirection.Out]
    assert [a.name_hint for a in funcs["chip_sub"].body.block.args] == ["a", "b", "sub_buf"]
    text = TwoChips.as_python()
    assert "self.host_orch_chip_orch_0(a, b, sum_buf)" in text and "self.chip_sub(a, b, sub_buf)" in text


def test_two_chip_scopes_run_on_two_chips(tmp_path) -> None:
    compiled = ir.compile(TwoChips, distributed_config=DistributedConfig(device_ids=[0, 1]),
                          output_dir=str(tmp_path / "build"))  # fmt: skip
    assert [(d.rank, d.program) for d in compiled.plan.dispatches] == [(0, "host_orch_chip_orch_0"), (1, "chip_sub")]
    a, b = torch.randn(M, M), torch.randn(M, M)
    s, d = torch.zeros(M, M), torch.zeros(M, M)
    compiled(a, b, s, d)
    torch.testing.assert_close(s, a + b)
    torch.testing.assert_close(d, a - b)


def program(body: str, *, kind: str = "level=pl.Level.HOST, role=pl.Role.Orchestrator") -> str:
    lines = "".join(f"        {ln}\n" for ln in body.splitlines())
    return (f"import pypto.language as pl\n\n@pl.program\nclass P:\n    @pl.function({kind})\n"
            f"    def host_orch(self, a: {T}, o: pl.Out[{T}]):\n{lines}        return o\n")  # fmt: skip


def fail(text: str, cls: type[ParserError]) -> ParserError:
    with pytest.raises(cls) as info:
        pl.parse(text, filename="k.py")
    return info.value


CHIP = "with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):\n"
ADD = "    with pl.at(level=pl.Level.CORE_GROUP):\n        pl.assemble(o, pl.add(a, a), [0, 0])\n"


def test_a_text_program_outlines_too() -> None:
    prog = pl.parse(program(CHIP + ADD), filename="k.py")
    assert param_directions(prog.func_ops["host_orch_chip_orch_0"]) == [ParamDirection.In, ParamDirection.Out]


def test_the_outlined_parameters_keep_the_orchestrators_order() -> None:
    text = (f"import pypto.language as pl\n\n@pl.program\nclass P:\n"
            f"    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
            f"    def host_orch(self, z: {T}, o: pl.Out[{T}], a: {T}):\n"
            "        with pl.at(level=pl.Level.CHIP):\n"
            "            with pl.at(level=pl.Level.CORE_GROUP):\n"
            "                pl.assemble(o, pl.add(a, z), [0, 0])\n"
            "        return o\n")  # fmt: skip
    chip = pl.parse(text, filename="k.py").func_ops["host_orch_chip_orch_0"]
    assert [a.name_hint for a in chip.body.block.args] == ["z", "o", "a"]
    assert param_directions(chip) == [ParamDirection.In, ParamDirection.Out, ParamDirection.In]


@pytest.mark.parametrize(("body", "cls", "message", "line"), [
    ("with pl.at(level=pl.Level.CORE_GROUP, role=pl.Role.Orchestrator):\n    pass\n", ParserSyntaxError,
     "role= is not supported with level=pl.Level.CORE_GROUP", 7),
    ("with pl.at(level=pl.Level.CHIP, role=pl.Role.SubWorker):\n    pass\n", ParserSyntaxError,
     "inline 'with pl.at(..., role=pl.Role.SubWorker)' is not supported", 7),
    ("with pl.at(pl.Level.CHIP, pl.Role.Orchestrator, 3):\n    pass\n", ParserSyntaxError,
     "pl.at() takes at most 2 positional arguments, got 3", 7),
    ("with pl.at(pl.Level.CHIP, level=pl.Level.CHIP):\n    pass\n", ParserSyntaxError,
     "pl.at() got multiple values for argument 'level'", 7),
    ("with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):\n    pass\n", UnsupportedFeatureError,
     "expected level=pl.Level.CHIP, role=pl.Role.Orchestrator, got level=HOST", 7),
    ("t = a\n" + CHIP + "    with pl.at(level=pl.Level.CORE_GROUP):\n        pl.assemble(o, pl.add(t, t), [0, 0])\n",
     UnsupportedFeatureError, "uses 't', which is neither a parameter of the HOST orchestrator", 8),
    (CHIP + "    with pl.at(level=pl.Level.CORE_GROUP):\n        y = pl.add(a, a)\n        pl.assemble(o, y, [0, 0])\n"
     "t = y\n", UnsupportedFeatureError, "'y' is computed inside the pl.at(level=pl.Level.CHIP) scope and used", 7),
], ids=["role-at-core-group", "inline-subworker", "three-positional", "level-twice", "host-level", "host-local",
        "computed-result"])  # fmt: skip
def test_misuse_is_a_located_error(body: str, cls: type[ParserError], message: str, line: int) -> None:
    err = fail(program(body), cls)
    assert message in err.message
    assert err.span["filename"] == "k.py" and err.span["begin_line"] == line


def test_a_chip_scope_outside_a_host_orchestrator_is_rejected() -> None:
    err = fail(program(CHIP + ADD, kind="type=pl.FunctionType.Orchestration"), InvalidOperationError)
    assert "is outlined from a HOST orchestrator" in err.message and err.span["begin_line"] == 7
    assert err.hint == "use pl.at(level=pl.Level.CORE_GROUP) for an InCore scope"
