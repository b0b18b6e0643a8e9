"""Loops with carried values, pl.at results, if/else, @pl.program classes."""

from __future__ import annotations

from xdsl.dialects import func, scf

import pypto.language as pl
from pypto.dialects.enums import ForKind, FunctionType, Level, ParamDirection, Role
from pypto.dialects.program import (
    AtOp,
    for_kind,
    for_stage,
    function_level,
    function_role,
    function_type,
    param_directions,
)

T = "pl.Tensor[[128, 128], pl.FP32]"


def ops_of(program: pl.Program, cls: type) -> list:
    return [op for op in program.module.walk() if isinstance(op, cls)]


def test_program_class_and_calls() -> None:
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]
        ) -> pl.Tensor[[128, 128], pl.FP32]:
            t = pl.load(x, [0, 0], [128, 128])
            out = pl.store(pl.exp(t), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[128, 128], pl.FP32]) -> pl.Tensor[[128, 128], pl.FP32]:
            buf = pl.create_tensor([128, 128], dtype=pl.FP32)
            buf = self.kernel(x, buf)
            return buf

        @pl.function
        def helper(self, x: pl.Tensor[[128, 128], pl.FP32]):
            return

    assert Prog.name == "Prog"
    Prog.verify()
    k, m, h = Prog.functions["kernel"], Prog.functions["main"], Prog.functions["helper"]
    assert (function_type(k), function_level(k), function_role(k)) == (
        FunctionType.InCore,
        Level.CHIP_DIE,
        Role.SubWorker,
    )
    assert (function_type(m), function_level(m), function_role(m)) == (
        FunctionType.Orchestration,
        Level.CHIP,
        Role.Orchestrator,
    )
    assert function_type(h) is FunctionType.Opaque and "pl.func_type" not in h.attributes
    assert param_directions(k) == [ParamDirection.In, ParamDirection.Out]
    assert [a.name_hint for a in k.args] == ["x", "out"]
    call = ops_of(Prog, func.CallOp)[0]
    assert call.callee.string_value() == "kernel" and call.res[0].name_hint == "buf"


def test_implicit_loop_carry_and_at_results() -> None:
    program = pl.parse(
        f"""import pypto.language as pl

@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, a: pl.Tensor[[128, 512], pl.FP16], b: pl.Tensor[[512, 128], pl.FP16], c: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_blocked"):
            acc = pl.matmul(a[:, 0:128], b[0:128, :], out_dtype=pl.FP32)
            unused = pl.exp(acc)
            for k in pl.range(1, 4):
                k0 = k * 128
                acc = pl.matmul_acc(acc, a[:, k0 : k0 + 128], b[k0 : k0 + 128, :])
            c[:] = acc
        return c
"""
    )
    program.verify()
    loop = ops_of(program, scf.ForOp)[0]
    assert len(loop.iter_args) == 1 and loop.iter_args[0].name_hint == "acc"
    assert loop.results[0].name_hint == "acc"
    at = ops_of(program, AtOp)[0]
    assert at.name_hint is not None and at.name_hint.data == "k_blocked"
    assert [r.name_hint for r in at.res] == ["c"]  # 'acc' and 'unused' are not read after the scope
    ret = program.functions["f"].body.block.last_op
    assert ret is not None and ret.operands[0] is at.res[0]


def test_scope_in_a_loop_yields_only_what_the_next_iteration_or_later_code_reads() -> None:
    """Names a loop body assigns before reading (k0, a_k, partial) are not live
    at the back edge, so a pl.at in the loop does not yield them."""
    program = pl.parse(
        f"""import pypto.language as pl

@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, a: pl.Tensor[[128, 512], pl.FP32], b: pl.Tensor[[512, 128], pl.FP32], c: pl.Out[{T}]) -> {T}:
        for ks in pl.parallel(0, 4):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="split_k"):
                k0 = ks * 128
                a_k = a[:, k0 : k0 + 128]
                partial = pl.matmul(a_k, b[k0 : k0 + 128, :], out_dtype=pl.FP32)
                c = pl.assemble(c, partial, [0, 0], atomic=pl.AtomicType.Add)
        return c
"""
    )
    program.verify()
    at = ops_of(program, AtOp)[0]
    assert [r.name_hint for r in at.res] == ["c"]
    loop = ops_of(program, scf.ForOp)[0]
    assert [v.name_hint for v in loop.iter_args] == ["c"]


def test_explicit_init_values_and_loop_kinds() -> None:
    program = pl.parse(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}, o: pl.Out[{T}]) -> {T}:
    t = pl.load(x, [0, 0], [16, 128])
    for i, (acc,) in pl.range(0, 8, 2, init_values=(t,)):
        nxt = pl.add(acc, t)
        acc_out = pl.yield_(nxt)
    for j in pl.parallel(4):
        o = pl.store(acc_out, [j * 16, 0], o)
    for j in pl.pipeline(4, stage=2):
        pass
    for j in pl.unroll(2):
        pass
    return o
"""
    )
    program.verify()
    loops = ops_of(program, scf.ForOp)
    assert loops[0].results[0].name_hint == "acc_out"
    assert loops[0].body.block.args[1].name_hint == "acc"
    assert [for_kind(lp) for lp in loops] == [ForKind.Sequential, ForKind.Parallel, ForKind.Pipeline, ForKind.Unroll]
    assert for_stage(loops[2]) == 2
    assert len(loops[1].iter_args) == 1 and loops[1].results[0].name_hint == "o"


def test_if_with_yield_and_rebinding() -> None:
    program = pl.parse(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}, n: pl.Scalar[pl.INDEX]) -> {T}:
    y = x
    if n < 4:
        r = pl.yield_(pl.exp(x))
    else:
        r = pl.yield_(pl.neg(x))
    if n == 0:
        y = pl.add(r, x)
    return y
"""
    )
    program.verify()
    ifs = ops_of(program, scf.IfOp)
    assert [r.name_hint for r in ifs[0].results] == ["r"]
    assert [r.name_hint for r in ifs[1].results] == ["y"]
    assert len(ifs[1].false_region.blocks) == 1


def test_locations_are_file_lines() -> None:
    @pl.function(type=pl.FunctionType.InCore)
    def f(x: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        y = pl.exp(x)
        return y

    import inspect

    lines, start = inspect.getsourcelines(test_locations_are_file_lines)
    op = next(op for op in f.module.walk() if op.name == "pl.tensor.exp")
    assert op.location.filename.data == __file__
    text = open(__file__).read().splitlines()[op.location.line.data - 1]
    assert text[op.location.column.data - 1 :].startswith("pl.exp(x)")


def test_liveness_is_linear_in_body_length(monkeypatch) -> None:  # noqa: ANN001
    """Each statement of a body is walked once for the names read after it
    (re-walking every suffix made 50-dump re-parses of long kernels slow)."""
    from pypto.frontend import statements

    walked: list[int] = []
    real = statements.loaded_names

    def counting(nodes):  # noqa: ANN001, ANN202
        nodes = list(nodes)
        walked.append(len(nodes))
        return real(nodes)

    monkeypatch.setattr(statements, "loaded_names", counting)
    n = 200
    body = "".join(f"    t{i} = pl.tile.adds(t{i - 1 if i else 'x'}, 1.0)\n" for i in range(n))
    program = pl.parse(
        "import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\n"
        "def f(a: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):\n"
        "    tx = pl.load(a, [0, 0], [16, 128])\n" + body + f"    pl.store(t{n - 1}, [0, 0], o)\n    return o\n"
    )
    program.verify()
    assert sum(walked) <= 2 * (n + 3), sum(walked)
