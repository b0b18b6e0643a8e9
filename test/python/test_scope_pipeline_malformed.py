"""Unusual and wrong input to the scope constructs (``pl.at``, ``pl.scope``, ``pl.manual_scope``) and to
``pl.pipeline``: each wrong one is a located front-end error (file, line, what was expected), never a Python
traceback, an internal error, a run-time failure or a silent acceptance; each legal one compiles and gives
torch's numbers."""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects import scf

import pypto.language as pl
from pypto.diagnostics import DiagnosticError
from pypto.dialects.program import FOR_STAGE
from pypto.errors import (
    InvalidOperationError,
    KernelCodegenError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedFeatureError,
)
from pypto.ir import compile
from pypto.runtime import RunConfig, run

T = "pl.Tensor[[128, 64], pl.FP32]"


def kernel(body: str, kind: str = "type=pl.FunctionType.InCore", params: str = f"a: {T}, out: pl.Out[{T}]") -> str:
    """A function ``f(params)`` with ``body`` (line 5 on) returning ``out``."""
    lines = "".join(f"    {ln}\n" for ln in body.splitlines())
    return f"import pypto.language as pl\n\n@pl.function({kind})\ndef f({params}) -> {T}:\n{lines}    return out\n"


def orchestration(body: str, kind: str = "type=pl.FunctionType.Orchestration") -> str:
    return kernel(body, kind)


def fail(text: str, cls: type[ParserError] = ParserError) -> ParserError:
    """The located error ``pl.parse`` raises for ``text`` (a ``ParserError`` of class ``cls``)."""
    with pytest.raises(cls) as info:
        pl.parse(text, filename="k.py")
    assert info.value.location is not None and info.value.location.filename == "k.py"
    return info.value


def run_orchestration(body: str, tmp_path, *args: torch.Tensor) -> torch.Tensor:
    """Compile ``orchestration(body)`` and run it on ``args`` (the last one is ``out``); returns ``out``."""
    compiled = compile(pl.parse(orchestration(body), filename="k.py"), output_dir=str(tmp_path / "build"))
    run(compiled, *args)
    return args[-1]


# ---- pl.pipeline: stage= ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["0", "-1", "2.5", "True", "'a'", "None", "[2]", "100000000000000000000000000"])
def test_pipeline_stage_that_is_not_a_positive_integer(stage: str) -> None:
    """Was silently accepted (0, -1, True, None: the loop ran unpipelined), an AttributeError ('float' object has
    no attribute 'data') or an xDSL VerifyException (a stage past 64 bits). Upstream: a positive integer."""
    err = fail(kernel(f"for i in pl.pipeline(4, stage={stage}):\n    pass"), ParserTypeError)
    assert f"pl.pipeline stage must be a positive integer, got {stage.strip(chr(39))}" in err.message.replace("'", "")
    assert err.location is not None and err.location.line == 5 and err.location.col == 35


def test_pipeline_without_stage() -> None:
    """Was silently accepted (an unpipelined loop, printed back as 'stage=0'). Upstream: stage= is required."""
    err = fail(kernel("for i in pl.pipeline(4):\n    pass"), InvalidOperationError)
    assert "pl.pipeline needs stage=" in err.message
    assert err.location is not None and err.location.line == 5


@pytest.mark.parametrize("loop", ["pl.range", "pl.parallel", "pl.unroll", "range"])
def test_stage_on_a_loop_that_is_not_a_pipeline(loop: str) -> None:
    """Was silently accepted (and dropped). Upstream: 'stage= is only supported on pl.pipeline()'."""
    err = fail(kernel(f"for i in {loop}(4, stage=2):\n    pass"), InvalidOperationError)
    assert f"{loop} has no argument 'stage'" in err.message
    assert err.hint is not None and "pl.pipeline(n, stage=F)" in err.hint


def test_loop_keywords_unpacked() -> None:
    """Was "pl.pipeline has no argument 'None'"."""
    err = fail(kernel("for i in pl.pipeline(4, **{'stage': 2}):\n    pass"), UnsupportedFeatureError)
    assert "pl.pipeline(**...) is not supported" in err.message


def test_pipeline_loop_without_stage_prints_as_stage_one() -> None:
    """A Pipeline loop without pl.stage (IR from MLIR) was printed 'stage=0', which does not parse back."""
    program = pl.parse(kernel("for i in pl.pipeline(4, stage=2):\n    pass"))
    (loop,) = [op for op in program.module.walk() if isinstance(op, scf.ForOp)]
    del loop.attributes[FOR_STAGE]
    text = program.as_python()
    assert "pl.pipeline(4, stage=1)" in text
    pl.parse(text)


@pytest.mark.parametrize(("loop", "rows"), [("pl.pipeline(4, stage=1)", range(4)),
                                            ("pl.pipeline(1, 4, 2, stage=3)", range(1, 4, 2))])  # fmt: skip
def test_pipeline_stage_one_and_stage_past_the_trip_count_run(loop: str, rows: range, tmp_path) -> None:
    """Legal: stage=1 (nothing replicated) and a stage larger than the trip count give torch's numbers."""
    body = (f"for i in {loop}:\n"
            "    with pl.at(level=pl.Level.CORE_GROUP):\n"
            "        t = pl.load(a, [i * 32, 0], [32, 64])\n"
            "        out = pl.store(pl.exp(t), [i * 32, 0], out)")  # fmt: skip
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    want = torch.zeros(128, 64)
    for i in rows:
        want[i * 32 : (i + 1) * 32] = torch.exp(a[i * 32 : (i + 1) * 32])
    torch.testing.assert_close(run_orchestration(body, tmp_path, a, out), want, rtol=1e-5, atol=1e-5)


def test_pipeline_deeper_than_the_limit_compiles_and_runs(tmp_path) -> None:
    """A body with no tiles (the tiles' capacity does not bound the depth) and a dynamic bound: each stage was
    one more copy of the body, whatever the trip count (stage=2000 compiled in 15 s, 10**6 did not finish).
    Now at most 64 copies (perf hint PH-MR-001), and the same numbers."""
    body = ("with pl.at(level=pl.Level.CORE_GROUP):\n"
            "    j = 0\n"
            "    n = pl.tile.get_block_idx() + 3\n"
            "    for i in pl.pipeline(n, stage=1000000):\n"
            "        j = j + i\n"
            "    out = pl.store(pl.load(a, [j * 32, 0], [32, 64]), [0, 0], out)")  # fmt: skip
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    want = torch.cat([a[96:], torch.zeros(96, 64)])
    torch.testing.assert_close(run_orchestration(body, tmp_path, a, out), want)


# ---- pl.at: its level ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["CHIP", "HOST", "CHIP_DIE"])
@pytest.mark.parametrize("kind", ["Orchestration", "InCore"])
def test_hierarchy_scope_without_role_outside_a_host_orchestrator(level: str, kind: str) -> None:
    """Was accepted by the front end (only ``role=`` marked a hierarchy scope): then an IR verifier dump after
    InitMemRef, an OrchestrationError at run time (an empty scope) or 'pl.at has no pto lowering'."""
    body = f"with pl.at(level=pl.Level.{level}):\n    out[:] = pl.add(a, a)"
    err = fail(kernel(body, f"type=pl.FunctionType.{kind}"), InvalidOperationError)
    assert f"pl.at(level={level}) is a hierarchy scope: it is outlined from a HOST orchestrator" in err.message
    assert f"not from the {kind} function 'f'" in err.message
    assert err.hint == "use pl.at(level=pl.Level.CORE_GROUP) for an InCore scope"
    assert err.location is not None and err.location.line == 5


@pytest.mark.parametrize("level", ["AIV", "AIC"])
def test_scope_below_core_group(level: str) -> None:
    """Was an IR verifier dump after InitMemRef."""
    err = fail(orchestration(f"with pl.at(level=pl.Level.{level}):\n    out[:] = pl.add(a, a)"), InvalidOperationError)
    assert f"pl.at(level={level}) is not supported: a device region is pl.at(level=pl.Level.CORE_GROUP)" in err.message
    assert err.location is not None and err.location.line == 5


def test_hierarchy_scope_inside_a_core_group_scope() -> None:
    """Was an IR verifier dump after InitMemRef."""
    body = "with pl.at(level=pl.Level.CORE_GROUP):\n    with pl.at(level=pl.Level.CHIP):\n        out[:] = pl.add(a, a)"
    err = fail(orchestration(body), InvalidOperationError)
    assert "pl.at(level=CHIP) is a hierarchy scope" in err.message
    assert err.location is not None and err.location.line == 6


def test_chip_scope_inside_a_chip_scope() -> None:
    """The inner scope lands in the outlined chip orchestration function: was accepted (a pl.at nothing lowers)."""
    text = (f"import pypto.language as pl\n\n@pl.program\nclass P:\n"
            f"    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
            f"    def host(self, a: {T}, out: pl.Out[{T}]):\n"
            "        with pl.at(level=pl.Level.CHIP):\n"
            "            with pl.at(level=pl.Level.CHIP):\n"
            "                with pl.at(level=pl.Level.CORE_GROUP):\n"
            "                    pl.assemble(out, pl.add(a, a), [0, 0])\n"
            "        return out\n")  # fmt: skip
    err = fail(text, InvalidOperationError)
    assert "not from the Orchestration function 'host_chip_orch_0'" in err.message
    assert err.location is not None and err.location.line == 8


def test_scope_keywords_unpacked() -> None:
    """Was "pl.at has no argument 'None'"."""
    err = fail(orchestration("with pl.at(**{'level': pl.Level.CORE_GROUP}):\n    out[:] = pl.add(a, a)"),
               UnsupportedFeatureError)  # fmt: skip
    assert "pl.at(**...) is not supported" in err.message


# ---- pl.at: what leaves the scope -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "name", "dtype", "line"),
    [
        ("with pl.at(level=pl.Level.CORE_GROUP):\n    k = 2\n    out = pl.store(pl.load(a, [k * 32, 0], [32, 64]), [0, 0], out)\n"
         "with pl.at(level=pl.Level.CORE_GROUP):\n    out = pl.store(pl.load(a, [k * 32 + 32, 0], [32, 64]), [32, 0], out)",
         "k", "pl.INDEX", 6),
        ("with pl.at(level=pl.Level.CORE_GROUP):\n    v = pl.tensor.read(a, [0, 0])\n"
         "with pl.at(level=pl.Level.CORE_GROUP):\n    out[:] = pl.add(a, v)", "v", "pl.FP32", 6),
        ("k = 0\nfor i in pl.range(2):\n    with pl.at(level=pl.Level.CORE_GROUP):\n        k = k + 1\n"
         "        out = pl.store(pl.load(a, [k * 32, 0], [32, 64]), [k * 32, 0], out)", "k", "pl.INDEX", 8),
        ("with pl.at(level=pl.Level.CORE_GROUP):\n    k = 2\n    out = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], out)\n"
         "for i in pl.range(k):\n    with pl.at(level=pl.Level.CORE_GROUP):\n"
         "        out = pl.store(pl.load(a, [i * 32, 0], [32, 64]), [i * 32, 0], out)", "k", "pl.INDEX", 6),
    ],
    ids=["next-scope", "tensor-read", "loop-carried", "loop-bound"],
)  # fmt: skip
def test_scalar_computed_in_a_scope_and_used_after_it(body: str, name: str, dtype: str, line: int, tmp_path) -> None:
    """Was compiled, then the run failed: 'argument 0 is a scalar (index), got an array' (the next task read
    the kernel's result buffer as the scalar), 'cannot tell which tensor result 0 of @f_incore_0 is', or a
    TypeError comparing a DeviceBuffer with an int (the scalar as a loop bound)."""
    with pytest.raises(DiagnosticError) as info:
        compile(pl.parse(orchestration(body), filename="k.py"), output_dir=str(tmp_path / "build"))
    err = info.value
    assert f"'{name}' is a pl.Scalar[{dtype}] computed inside the pl.at(level=pl.Level.CORE_GROUP) scope" in str(err)
    assert "a kernel gives back only the tensors it writes" in str(err)
    assert f"k.py:{line}:" in str(err)
    assert f"compute '{name}' before the scope" in str(err)



@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("with pl.at(level=pl.Level.CORE_GROUP):\n    t = pl.load(a, [0, 0], [32, 64])\n    out = pl.store(t, [0, 0], out)\n"
         "with pl.at(level=pl.Level.CORE_GROUP):\n    out = pl.store(t, [32, 0], out)", 6),
        ("with pl.at(level=pl.Level.CORE_GROUP):\n    t = pl.exp(pl.load(a, [0, 0], [32, 64]))\n"
         "with pl.at(level=pl.Level.CORE_GROUP):\n    out = pl.store(t, [32, 0], out)", 6),
        ("for i in pl.range(2):\n    with pl.at(level=pl.Level.CORE_GROUP):\n        t = pl.load(a, [i * 32, 0], [32, 64])\n"
         "        out = pl.store(t, [i * 32, 0], out)\n"
         "    with pl.at(level=pl.Level.CORE_GROUP):\n        out = pl.store(t, [i * 32 + 64, 0], out)", 7),
    ],
    ids=["next-scope", "computed", "in-a-loop"],
)  # fmt: skip
def test_tile_computed_in_a_scope_and_used_after_it(body: str, line: int, tmp_path) -> None:
    """Was caught only by ConvertTensorToTileOps (KernelCodegenError 'the tile 't' is returned from the InCore
    function', at the scope), after the passes before it ran. Now OutlineIncoreScopes says it as for a scalar,
    at the tile's definition."""
    with pytest.raises(DiagnosticError) as info:
        compile(pl.parse(orchestration(body), filename="k.py"), output_dir=str(tmp_path / "build"))
    err = str(info.value)
    assert "'t' is a pl.Tile[[32, 64], pl.FP32" in err and "computed inside the pl.at(level=pl.Level.CORE_GROUP) scope" in err
    assert "a kernel gives back only the tensors it writes" in err and f"k.py:{line}:" in err
    assert "store 't' into a tensor inside the scope" in err and not isinstance(info.value, KernelCodegenError)

def test_scalar_computed_before_a_scope_is_passed_in(tmp_path) -> None:
    """Legal: the same kernel with the scalar computed in the orchestration gives torch's numbers."""
    body = ("k = 2\nwith pl.at(level=pl.Level.CORE_GROUP):\n    out = pl.store(pl.load(a, [k * 32, 0], [32, 64]), [0, 0], out)\n"
            "with pl.at(level=pl.Level.CORE_GROUP):\n    out = pl.store(pl.load(a, [k * 32 + 32, 0], [32, 64]), [32, 0], out)")  # fmt: skip
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    want = torch.cat([a[64:], torch.zeros(64, 64)])
    torch.testing.assert_close(run_orchestration(body, tmp_path, a, out), want)


# ---- pl.scope / pl.manual_scope ---------------------------------------------------------------------------

ORCH_NO_AUTO = "type=pl.FunctionType.Orchestration, auto_scope=False"
ADD = "with pl.at(level=pl.Level.CORE_GROUP):\n    out[:] = pl.add(a, a)"


def indented(body: str) -> str:
    return "".join(f"    {ln}\n" for ln in body.splitlines())


@pytest.mark.parametrize(
    ("scope", "cls", "message"),
    [
        ("pl.scope(1)", ParserError, "pl.scope() takes only a 'mode=' keyword, not positional arguments"),
        ("pl.scope(foo=2)", InvalidOperationError, "pl.scope has no argument 'foo'"),
        ("pl.scope(mode=3)", ParserTypeError, "pl.scope mode= takes pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL"),
        ("pl.scope(mode=pl.Level.HOST)", ParserTypeError, "pl.scope mode= takes pl.ScopeMode.AUTO"),
    ],
)
def test_scope_with_wrong_arguments(scope: str, cls: type[ParserError], message: str) -> None:
    """Were silently accepted: pl.scope read none of its arguments."""
    err = fail(kernel(f"with {scope}:\n{indented(ADD)}", ORCH_NO_AUTO), cls)
    assert message in err.message
    assert err.location is not None and err.location.line == 5


def test_scope_mode_manual_is_a_manual_scope() -> None:
    """pl.scope(mode=pl.ScopeMode.MANUAL), upstream's spelling of pl.manual_scope(), was read as an AUTO scope
    (the runtime kept inferring the dependencies the author had switched off)."""
    from pypto.dialects.program import MANUAL_DEP, AtOp

    def manual(text: str) -> list[bool]:
        return [MANUAL_DEP in op.attributes for op in pl.parse(text).module.walk() if isinstance(op, AtOp)]

    assert manual(orchestration(f"with pl.scope(mode=pl.ScopeMode.MANUAL):\n{indented(ADD)}")) == [True]
    assert manual(kernel(f"with pl.scope(mode=pl.ScopeMode.AUTO):\n{indented(ADD)}", ORCH_NO_AUTO)) == [False]
    assert manual(kernel(f"with pl.scope():\n{indented(ADD)}", ORCH_NO_AUTO)) == [False]


@pytest.mark.parametrize(
    ("outer", "inner", "message"),
    [
        ("pl.manual_scope()", "pl.manual_scope()", "a manual scope may not be nested inside a manual scope"),
        ("pl.manual_scope()", "pl.scope(mode=pl.ScopeMode.MANUAL)", "a manual scope may not be nested inside"),
        ("pl.scope(mode=pl.ScopeMode.MANUAL)", "pl.manual_scope()", "a manual scope may not be nested inside"),
        ("pl.manual_scope()", "pl.scope()", "an AUTO scope may not be nested inside a manual scope"),
    ],
)
def test_scope_nesting_the_runtime_forbids(outer: str, inner: str, message: str) -> None:
    """Were silently accepted. Upstream: MANUAL in MANUAL and AUTO in MANUAL are rejected (the runtime forbids)."""
    err = fail(kernel(f"with {outer}:\n    with {inner}:\n{indented(indented(ADD))}", ORCH_NO_AUTO),
               UnsupportedFeatureError)  # fmt: skip
    assert message in err.message
    assert err.location is not None and err.location.line == 6


def test_auto_scope_under_the_default_auto_scope() -> None:
    """Was silently accepted (a no-op). Upstream: a hand-placed AUTO scope needs auto_scope=False."""
    err = fail(orchestration(f"with pl.scope():\n{indented(ADD)}"), UnsupportedFeatureError)
    assert "a hand-placed AUTO 'with pl.scope():' needs auto_scope=False" in err.message
    assert err.hint is not None and "pl.scope(mode=pl.ScopeMode.MANUAL)" in err.hint


@pytest.mark.parametrize("scope", ["pl.scope()", "pl.manual_scope()", "pl.scope(mode=pl.ScopeMode.MANUAL)"])
def test_runtime_scope_in_a_kernel(scope: str) -> None:
    """Were silently accepted (and dropped). Upstream: a runtime scope is Orchestration-only."""
    body = f"with {scope}:\n    out = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], out)"
    err = fail(kernel(body, "type=pl.FunctionType.InCore, auto_scope=False"), UnsupportedFeatureError)
    assert f"'with {scope}' is a runtime scope of the orchestration, not valid inside the InCore function 'f'" in err.message
    err = fail(kernel(f"with pl.at(level=pl.Level.CORE_GROUP):\n{indented(body)}", ORCH_NO_AUTO), UnsupportedFeatureError)
    assert "not valid inside a pl.at scope" in err.message and err.location is not None and err.location.line == 6


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ("with pl.scope():\n"
         "    with pl.manual_scope():\n"
         "        with pl.at(level=pl.Level.CORE_GROUP) as first:\n"
         "            out[:] = pl.add(a, a)\n"
         "        with pl.at(level=pl.Level.CORE_GROUP, deps=[first]):\n"
         "            out[:] = pl.mul(out, 3.0)", lambda a: a * 6),
        ("for i in pl.range(4):\n"
         "    with pl.scope(mode=pl.ScopeMode.MANUAL):\n"
         "        with pl.at(level=pl.Level.CORE_GROUP):\n"
         "            out = pl.store(pl.add(pl.load(a, [i * 32, 0], [32, 64]), 1.0), [i * 32, 0], out)", lambda a: a + 1),
    ],
    ids=["manual-in-auto", "manual-in-a-loop"],
)  # fmt: skip
def test_legal_runtime_scopes_run(body: str, want, tmp_path) -> None:
    """Legal: a manual scope inside an AUTO one (deps= orders its two tasks) and a MANUAL scope in a loop body
    (tasks on disjoint rows) give torch's numbers."""
    compiled = compile(pl.parse(kernel(body, ORCH_NO_AUTO), filename="k.py"), output_dir=str(tmp_path / "build"))
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    run(compiled, a, out)
    torch.testing.assert_close(out, want(a))


# ---- pl.at: level= and optimizations= ---------------------------------------------------------------------


@pytest.mark.parametrize("at", ["pl.at()", "pl.at(name_hint='k')"])
def test_scope_without_a_level(at: str) -> None:
    """Was read as level=CORE_GROUP. Upstream: 'pl.at() requires a level argument' (level is not optional)."""
    err = fail(orchestration(f"with {at}:\n    out[:] = pl.add(a, a)"), ParserError)
    assert "pl.at() requires a level argument" in err.message
    assert err.location is not None and err.location.line == 5


@pytest.mark.parametrize(
    ("optimizations", "message"),
    [
        ("opts", "pl.at(optimizations=...) must be a list literal"),
        ("(pl.split(pl.SplitMode.NONE),)", "pl.at(optimizations=...) must be a list literal"),
        ("[1]", "pl.at optimizations= entries are pl.split(mode) or pl.cross_core_slot(slot_num=N), got 1"),
        ("[pl.split(pl.SplitMode.NONE), pl.split(pl.SplitMode.UP_DOWN)]", "pl.split(...) is given twice"),
        ("[pl.split('UP_DOWN')]", "pl.split takes one pl.SplitMode member: NONE, UP_DOWN or LEFT_RIGHT"),
        ("[pl.split()]", "pl.split takes one pl.SplitMode member"),
        ("[pl.cross_core_slot(4)]", "pl.cross_core_slot takes slot_num=N only"),
        ("[pl.cross_core_slot(slot_num=0)]", "slot_num must be a positive integer literal, got 0"),
        ("[pl.cross_core_slot(slot_num=2, depth=3)]", "pl.cross_core_slot has no argument 'depth'"),
    ],
)
def test_scope_optimizations_that_upstream_rejects(optimizations: str, message: str) -> None:
    """Were silently accepted: optimizations= was not read at all. Upstream's manual: 'Entries in optimizations=
    must be written inline at the call site - a list built up in a variable is not accepted'."""
    body = f"opts = 1\nwith pl.at(level=pl.Level.CORE_GROUP, optimizations={optimizations}):\n    out[:] = pl.add(a, a)"
    err = fail(orchestration(body), ParserError)
    assert message in err.message
    assert err.location is not None and err.location.line == 6


def test_scope_optimizations_upstream_accepts(tmp_path) -> None:
    """Legal: both entries (and the pl.optimizations.* spelling) compile and give torch's numbers."""
    for opts in ("[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]",
                 "[pl.optimizations.split(pl.SplitMode.NONE)]", "[]"):  # fmt: skip
        pl.parse(orchestration(f"with pl.at(level=pl.Level.CORE_GROUP, optimizations={opts}):\n    out[:] = pl.add(a, a)"))
    body = "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):\n    out[:] = pl.add(a, a)"
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    torch.testing.assert_close(run_orchestration(body, tmp_path, a, out), a + a)


# ---- name_hint= of pl.at and pl.spmd ----------------------------------------------------------------------


@pytest.mark.parametrize("hint", ["'for'", "'class'", "'a b'", "'1x'", "3"])
@pytest.mark.parametrize("scope", ["with pl.at(level=pl.Level.CORE_GROUP, name_hint={})", "for i in pl.spmd(2, name_hint={})"])
def test_scope_name_hint_that_is_not_an_identifier(scope: str, hint: str) -> None:
    """A keyword was accepted by pl.at (the outlined function 'for': pass dumps that do not parse back, a
    kernel 'void for(...)' g++ rejects); pl.spmd took any string ('a b', '': 'no __global__ AICORE function
    'a b' in the ptoas C++'; '1x', 'for'). Upstream: a valid non-keyword identifier."""
    err = fail(orchestration(scope.format(hint) + ":\n    out[:] = pl.add(a, a)"), ParserTypeError)
    assert "name_hint must be a valid non-keyword identifier, got" in err.message
    assert err.location is not None and err.location.line == 5


def test_empty_spmd_name_hint_is_no_hint(tmp_path) -> None:
    """name_hint='' is no hint (upstream's default), for pl.spmd as for pl.at (was the kernel '')."""
    body = ("for i in pl.spmd(2, name_hint=''):\n"
            "    out = pl.store(pl.load(a, [i * 64, 0], [64, 64]), [i * 64, 0], out)")  # fmt: skip
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    torch.testing.assert_close(run_orchestration(body, tmp_path, a, out), a)


@pytest.mark.parametrize("hint", ["void", "int", "new", "template", "main", "int64_t", "pto"])
@pytest.mark.parametrize("scope", ["with pl.at(level=pl.Level.CORE_GROUP, name_hint={!r})", "for i in pl.spmd(2, name_hint={!r})"])
def test_scope_name_hint_that_cpp_cannot_spell(scope: str, hint: str) -> None:
    """Was accepted, and the kernel's C++ failed to build in g++, at no source location: 'void void(...)'
    ("expected unqualified-id"), "'::main' must return 'int'", "'void int64_t(...)' redeclared as different
    kind of entity". The name is the kernel's in the .pto and in its C++: refused, as a Python keyword is."""
    err = fail(orchestration(scope.format(hint) + ":\n    out[:] = pl.add(a, a)"), ParserTypeError)
    assert "name_hint is the kernel's name in its C++, and" in err.message and f"'{hint}'" in err.message
    assert err.location is not None and err.location.line == 5
    assert err.hint == f'e.g. name_hint="{hint}_kernel"'


@pytest.mark.parametrize("name", ["void", "delete", "main", "half"])
@pytest.mark.parametrize("kind", ["InCore", "AIV"])
def test_kernel_function_name_that_cpp_cannot_spell(name: str, kind: str) -> None:
    """A kernel function's name is its kernel's (the same g++ failures as a scope's name_hint)."""
    body = "out = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], out)"
    err = fail(kernel(body, f"type=pl.FunctionType.{kind}").replace("def f(", f"def {name}("), ParserSyntaxError)
    assert f"the name of an {kind} function is its kernel's name in the C++, and '{name}'" in err.message
    assert err.location is not None and err.location.line == 4


def test_orchestration_named_like_a_cpp_keyword(tmp_path) -> None:
    """An Orchestration function's name is no kernel's: 'new' stays legal (its pl.at is 'new_incore_0')."""
    text = orchestration("with pl.at(level=pl.Level.CORE_GROUP):\n    out[:] = pl.add(a, a)").replace("def f(", "def new(")
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    run(compile(pl.parse(text, filename="k.py"), output_dir=str(tmp_path / "build")), a, out)
    torch.testing.assert_close(out, a + a)


def test_kernel_named_like_an_entry_local_builds(tmp_path) -> None:
    """A kernel named 'v1' (a legal name) failed in g++ ("expression cannot be used as a function"): the
    kernel entry's first argument, a local 'v1', hid it. The entry now calls '::v1'."""
    body = "with pl.at(level=pl.Level.CORE_GROUP, name_hint='v1'):\n    out[:] = pl.add(a, a)"
    compiled = compile(pl.parse(orchestration(body), filename="k.py"), output_dir=str(tmp_path / "build"))
    a, out = torch.randn(128, 64), torch.zeros(128, 64)
    run(compiled, a, out, config=RunConfig(kernel_engine="cpp"))
    torch.testing.assert_close(out, a + a)
