"""The fast engine: a kernel function compiled once into Python steps over slot-indexed values.

xDSL's :class:`~xdsl.interpreter.Interpreter` walks the IR op by op: scoped
value lookups, implementation dispatch and result checks cost more per op than
a 64x128 tile's math. This engine resolves, once per function, every SSA
value's slot in a flat list and every op's implementation:

- pto ops run the same prepared handlers that :mod:`.pto_impls` registers with
  the xDSL interpreter (:data:`~.pto_impls.PTO_HANDLERS`), so numerics, timing
  records and race checks are one code path;
- ``arith.constant`` values are computed at compile time, and the arith ops of
  :data:`~.arith_impls.ARITH_IMPLS` are called directly;
- ``scf.for`` / ``scf.if`` / ``scf.while``, ``func.call`` / ``func.return`` and
  ``pto.section.*`` become Python control flow over the compiled blocks;
- every other op runs through the xDSL interpreter's registered implementation
  (:meth:`Interpreter.run_op`), so anything the xDSL engine runs, this one runs;
- a block, and a loop without carried values, once run twice, runs as one generated function with its
  steps written out (:mod:`.fused`).

A region with more than one block, or an unknown op with regions, raises
:class:`Unsupported` at compile time (before anything executes) and
:func:`~.run.run_kernel` falls back to the xDSL engine. An error while a step
runs is re-raised as a :class:`KernelError` naming the op and its ``.pto`` and
DSL locations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from pypto.ptoas.dialect.misc_ops import SectionCubeOp, SectionVectorOp
from pypto.utils.ir_fingerprint import fingerprint, is_sealed

from . import fused, loop_replay
from .arith_impls import ARITH_IMPLS, INDEX_BINARY
from .core import CoreState
from .loop_replay import DATA, PURE, LoopReplay, Role
from .memory import DeviceError
from .pto_impls import PTO_HANDLERS

Env = list[Any]
Step = Callable[[Env, CoreState], None]
"""One op: reads its operands from the slots, runs on the core (``core.interp`` runs generic ops)."""


class Unsupported(Exception):
    """The function uses IR this engine does not compile (the xDSL engine runs it)."""


class KernelError(DeviceError):
    """An error raised while a kernel op ran, located at that op."""


@dataclass
class CompiledBlock:
    """A block's non-terminator ops as steps, its argument slots and its terminator's operand slots.

    ``run(env, core)`` runs the steps: the block's :func:`fused.block_function <.fused.block_function>` (the
    steps written out as one generated function) when it has one, else :meth:`run_steps`."""

    ops: tuple[Operation, ...]
    steps: tuple[Step, ...]
    arg_slots: tuple[int, ...]
    yield_slots: tuple[int, ...]
    numerics: bool = False
    """The steps do the numerics only (:attr:`_Compiler.numerics`)."""
    run: Step = field(init=False, repr=False)

    def __post_init__(self) -> None:
        steps, ops, numerics = self.steps, self.ops, self.numerics
        self.run = fused.lazy(
            lambda: fused.block_function(steps, ops, _kernel_error, KernelError, numerics), self.run_steps
        )

    def run_steps(self, env: Env, core: CoreState) -> None:
        """Execute the steps in order, one call each; an exception is located at the op that raised it."""
        step = None
        try:
            for step in self.steps:
                step(env, core)
        except KernelError:
            raise
        except Exception as e:
            raise KernelError(_located(core, self.ops[self.steps.index(step)], e)) from e  # type: ignore[arg-type]


def _kernel_error(core: CoreState, op: Operation, error: Exception) -> Exception:
    """``error`` raised by ``op``'s step, located (a :class:`KernelError` as it is)."""
    return error if isinstance(error, KernelError) else KernelError(_located(core, op, error))


def _located(core: CoreState, op: Operation, error: Exception) -> str:
    pto, dsl = core.locs(op)
    where = " ".join(f"{w}:" for w in (pto, dsl) if w)
    return f"{where} {op.name}: {_in_tile_terms(error)}".strip()


_BROADCAST = re.compile(r"operands could not be broadcast together with shapes \((\d+),(\d+)\) \((\d+),(\d+)\)")
_INTO = re.compile(r"could not broadcast input array from shape \((\d+),(\d+)\) into shape \((\d+),(\d+)\)")


def _in_tile_terms(error: Exception) -> str:
    """``error``'s text; numpy's shape errors of an op's tiles said in tile terms (a run-time valid shape that
    does not fit: the operands' valid shapes differ, or a valid shape larger than its tile)."""
    text = str(error)
    if not isinstance(error, ValueError):
        return text
    if found := _BROADCAST.search(text):
        r0, c0, r1, c1 = found.groups()
        return (f"its operands' valid shapes differ ({r0}x{c0} and {r1}x{c1}); an element-wise op reads each "
                "operand over the result's valid shape: give them the same valid shape (pl.tile.fillpad makes a "
                "tile valid everywhere)")  # fmt: skip
    if found := _INTO.search(text):
        r0, c0, r1, c1 = found.groups()
        return f"a valid shape of {r0}x{c0} does not fit its {r1}x{c1} tile (a run-time valid_shape larger than the tile)"
    return text


@dataclass
class CompiledFunction:
    """A function body compiled against one slot layout; :meth:`call` runs it."""

    n_slots: int
    template: tuple[Any, ...]
    body: CompiledBlock

    def call(self, core: CoreState, args: Sequence[Any]) -> tuple[Any, ...]:
        """Run on ``core`` with ``args`` bound to the entry block's arguments; the returned values."""
        env = list(self.template)
        for s, v in zip(self.body.arg_slots, args, strict=True):
            env[s] = v
        self.body.run(env, core)
        return tuple(env[s] for s in self.body.yield_slots)


class _Compiler:
    """Slot assignment and step construction for one function (callees compile through the cache).

    ``numerics``: the numerics-only form (a run whose accounting is remembered, :mod:`.race_memo`): a data
    op's step computes its values and neither prices, records nor race-checks it; sync ops (accounting only)
    have no step; loops are not replayed. Any other op's step is as usual (its accounting, if any, goes to
    the core's timeline, which such a run throws away)."""

    def __init__(self, cache: KernelCache, plan: ModulePlan, numerics: bool = False) -> None:
        self.cache = cache
        self.plan = plan
        self.numerics = numerics
        self.slots: dict[SSAValue, int] = {}
        self.constants: dict[int, Any] = {}
        self.current: func.FuncOp | None = None

    def slot(self, value: SSAValue) -> int:
        got = self.slots.get(value)
        if got is None:
            got = self.slots[value] = len(self.slots)
        return got

    def function(self, fn: func.FuncOp) -> CompiledFunction:
        self.current = fn
        body = self.region(fn.body, fn.sym_name.data)
        template = [None] * len(self.slots)
        for s, v in self.constants.items():
            template[s] = v
        return CompiledFunction(len(self.slots), tuple(template), body)

    def region(self, region: Region, owner: str) -> CompiledBlock:
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise Unsupported(f"{owner}: a region with {len(blocks)} blocks")
        return self.block(blocks[0])

    def block(self, block: Block) -> CompiledBlock:
        arg_slots = tuple(self.slot(a) for a in block.args)
        ops: list[Operation] = []
        steps: list[Step] = []
        yields: tuple[int, ...] = ()
        for op in block.ops:
            if isinstance(op, scf.YieldOp | scf.ConditionOp | func.ReturnOp):
                yields = tuple(self.slot(v) for v in op.operands)
                continue
            step = self.op(op)
            if step is None:
                continue
            pair = CoreState.flag_pair_step(ops[-1], steps[-1], op, step) if steps and not self.numerics else None
            if pair is not None:  # set_flag + wait_flag of one flag: one step (located at the set_flag)
                steps[-1] = pair
                continue
            ops.append(op)
            steps.append(step)
        return CompiledBlock(tuple(ops), tuple(steps), arg_slots, yields, self.numerics)

    def op(self, op: Operation) -> Step | None:
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if not isinstance(value, IntegerAttr | FloatAttr):
                raise Unsupported(f"arith.constant of {type(value).__name__}")
            self.constants[self.slot(op.result)] = value.value.data
            return None
        if isinstance(op, scf.ForOp):
            return self.for_op(op)
        if isinstance(op, scf.IfOp):
            return self.if_op(op)
        if isinstance(op, scf.WhileOp):
            return self.while_op(op)
        if isinstance(op, func.CallOp):
            return self.call_op(op)
        if isinstance(op, SectionCubeOp | SectionVectorOp):
            inner = self.region(op.body, op.name)
            return inner.run
        if op.regions:
            raise Unsupported(f"{op.name} has regions")
        ins = tuple(self.slot(v) for v in op.operands)
        outs = tuple(self.slot(v) for v in op.results)
        prepare = PTO_HANDLERS.get(type(op))
        if prepare is not None:
            run = prepare(op)
            if self.numerics:
                if getattr(run, "accounting_only", False):
                    return None
                numerics_step_of = getattr(run, "numerics_step_of", None)
                if numerics_step_of is not None and not outs:
                    return numerics_step_of(_gather(ins))
            return _handler_step(run, ins, outs)
        arith_impl = ARITH_IMPLS.get(type(op))
        if arith_impl is not None:
            return _arith_step(arith_impl, op, ins, outs)
        return _generic_step(op, ins, outs)

    def for_op(self, op: scf.ForOp) -> Step:
        lb, ub, st = self.slot(op.lb), self.slot(op.ub), self.slot(op.step)
        inits = tuple(self.slot(v) for v in op.iter_args)
        body = self.block(op.body.block)
        iv, carried = body.arg_slots[0], body.arg_slots[1:]
        results = tuple(self.slot(r) for r in op.results)
        run, yields = body.run, body.yield_slots

        if not inits:  # no loop-carried values: only the induction variable changes
            replay = None if self.numerics else LoopReplay.of(run, body.steps, body.ops, _kernel_error)
            numerics = self.numerics

            steps_only = body.run_steps  # not body.run: its generated form is only wanted by the replay

            def iterate(env: Env, core: CoreState, values: range) -> None:
                for i in values:
                    env[iv] = i
                    steps_only(env, core)

            # the whole loop as one generated function, once it is hot
            loop = fused.lazy(
                lambda: fused.loop_function(body.steps, body.ops, iv, _kernel_error, KernelError, numerics), iterate
            )

            def plain(env: Env, core: CoreState) -> None:
                values = range(env[lb], env[ub], env[st])
                if replay is not None and len(values) >= loop_replay.MIN_TRIPS and loop_replay.ENABLED:
                    replay.run(env, core, iv, values)
                    return
                loop(env, core, values)

            return plain

        def step(env: Env, core: CoreState) -> None:
            values = [env[s] for s in inits]
            for i in range(env[lb], env[ub], env[st]):
                env[iv] = i
                for s, v in zip(carried, values, strict=True):
                    env[s] = v
                run(env, core)
                values = [env[s] for s in yields]
            for s, v in zip(results, values, strict=True):
                env[s] = v

        return step

    def if_op(self, op: scf.IfOp) -> Step:
        cond = self.slot(op.cond)
        then = self.region(op.true_region, op.name)
        other = self.region(op.false_region, op.name) if op.false_region.blocks else None
        results = tuple(self.slot(r) for r in op.results)

        def step(env: Env, core: CoreState) -> None:
            branch = then if env[cond] else other
            if branch is None:
                return
            branch.run(env, core)
            for s, y in zip(results, branch.yield_slots, strict=True):
                env[s] = env[y]

        return step

    def while_op(self, op: scf.WhileOp) -> Step:
        inits = tuple(self.slot(v) for v in op.arguments)
        before = self.region(op.before_region, op.name)
        after = self.region(op.after_region, op.name)
        results = tuple(self.slot(r) for r in op.results)

        def step(env: Env, core: CoreState) -> None:
            values = [env[s] for s in inits]
            while True:
                for s, v in zip(before.arg_slots, values, strict=True):
                    env[s] = v
                before.run(env, core)
                cond, *forwarded = [env[s] for s in before.yield_slots]
                if not cond:
                    break
                for s, v in zip(after.arg_slots, forwarded, strict=True):
                    env[s] = v
                after.run(env, core)
                values = [env[s] for s in after.yield_slots]
            for s, v in zip(results, forwarded, strict=True):
                env[s] = v

        return step

    def call_op(self, op: func.CallOp) -> Step:
        callee = op.callee.root_reference.data
        module = op.get_toplevel_object()
        target = next(
            (f for f in module.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == callee and f.body.blocks),
            None,
        )
        if target is None:
            raise Unsupported(f"call to @{callee}, which has no body here")
        ins = tuple(self.slot(v) for v in op.operands)
        outs = tuple(self.slot(v) for v in op.results)
        numerics = self.numerics
        if target is not self.current:
            self.cache.get(target, self.plan, numerics)  # compile now: an unsupported callee is found before running
        cache, plan = self.cache, self.plan

        def step(env: Env, core: CoreState) -> None:
            got = cache.get(target, plan, numerics).call(core, [env[s] for s in ins])
            for s, v in zip(outs, got, strict=True):
                env[s] = v

        return step


# -- steps of single ops --------------------------------------------------------------------------


def _gather(ins: tuple[int, ...]) -> Callable[[Env], tuple[Any, ...]]:
    """The operand tuple of a step from the slots (``itemgetter`` for two or more)."""
    if not ins:
        return lambda env: ()
    if len(ins) == 1:
        (i,) = ins
        return lambda env: (env[i],)
    return itemgetter(*ins)


def _handler_step(run: Any, ins: tuple[int, ...], outs: tuple[int, ...]) -> Step:
    """A prepared pto op on the run's core (a prepared op with no operands and no results may carry its own
    ``step``: then running it is that one call)."""
    gather = _gather(ins)
    step: Step
    if not outs:
        step_of = getattr(run, "step_of", None)
        if step_of is not None:  # a data op: its own step, with the accounting in one call
            step = step_of(gather)
            step.role = _role(run, gather, False)  # type: ignore[attr-defined]
            return step
        if not ins:
            direct: Step | None = getattr(run, "step", None)
            if direct is not None:
                return direct

            def no_operand(env: Env, core: CoreState) -> None:
                run(core, core.interp, ())

            step = no_operand
        else:

            def no_result(env: Env, core: CoreState) -> None:
                run(core, core.interp, gather(env))

            step = no_result
    elif len(outs) == 1:
        (out,) = outs
        value_step = getattr(run, "value_step", None)
        if value_step is not None:  # a pure op with its own step over the slots (partition_view)
            step = value_step(ins, out)
            step.role = _role(run, gather, True)  # type: ignore[attr-defined]
            return step

        def one_result(env: Env, core: CoreState) -> None:
            env[out] = run(core, core.interp, gather(env))[0]

        step = one_result
    else:

        def results(env: Env, core: CoreState) -> None:
            for s, v in zip(outs, run(core, core.interp, gather(env)), strict=True):
                env[s] = v

        step = results
    step.role = _role(run, gather, bool(outs))  # type: ignore[attr-defined]
    return step


def _role(run: Any, gather: Callable[[Env], tuple[Any, ...]], has_results: bool) -> Role | None:
    """A prepared pto op's part in a loop replay: pure (``run.pure``: views, tile allocation), a data op
    (``run.check``, ``run.probe``, ``run.account``), or none (the loop is not replayed)."""
    if getattr(run, "pure", False):
        return _PURE
    check, probe = getattr(run, "check", None), getattr(run, "probe", None)
    if check is None or probe is None or has_results:
        return None

    def checked(env: Env, core: CoreState, want: Any) -> Any:
        return check(core, core.interp, gather(env), want)

    def probed(env: Env, core: CoreState) -> Any:
        return probe(core, gather(env))

    return Role(DATA, frozenset((run.pipe,)), check=checked, probe=probed, account=run.account)


_PURE = Role(PURE)


def _arith_step(fn: Any, op: Operation, ins: tuple[int, ...], outs: tuple[int, ...]) -> Step:
    """An arith op of :data:`~.arith_impls.ARITH_IMPLS` (an index add/sub/mul of two values: the
    operation itself, ``fn`` only when the result leaves the 32-bit range and may wrap)."""
    if len(outs) == 1:
        (out,) = outs
        gather = _gather(ins)
        exact = INDEX_BINARY.get(type(op))
        if exact is not None and len(ins) == 2:
            a, b = ins

            def binary(env: Env, core: CoreState) -> None:
                value = exact(env[a], env[b])
                if -2147483648 <= value < 2147483648:
                    env[out] = value
                else:
                    env[out] = fn(core.interp, op, (env[a], env[b]))[0]

            binary.role = _PURE  # type: ignore[attr-defined]
            binary.inline = ("index", dict(exact=exact, a=a, b=b, out=out, fn=fn, op=op))  # type: ignore[attr-defined]
            return binary

        def one_result(env: Env, core: CoreState) -> None:
            env[out] = fn(core.interp, op, gather(env))[0]

        one_result.role = _PURE  # type: ignore[attr-defined]
        return one_result
    return _generic_step(op, ins, outs)


def _generic_step(op: Operation, ins: tuple[int, ...], outs: tuple[int, ...]) -> Step:
    """Any other op: its implementation registered with the xDSL interpreter."""

    def step(env: Env, core: CoreState) -> None:
        for s, v in zip(outs, core.interp.run_op(op, tuple([env[s] for s in ins])), strict=True):
            env[s] = v

    step.role = _PURE  # type: ignore[attr-defined]  # the xDSL interpreter without the pto ops: no core
    return step


# -- the cache ----------------------------------------------------------------------------------


_MISSING = object()


@dataclass
class ModulePlan:
    """What one module's runs reuse: compiled functions and memoised facts (kernel lookup, fixed addresses).

    ``fingerprint`` is :func:`~pypto.utils.ir_fingerprint.fingerprint` of the module when the plan was
    made (it holds what it names, so no new object can take an erased op's id while this plan lives);
    ``sealed``: the module is sealed (:func:`~pypto.utils.ir_fingerprint.seal`): the plan is not checked again.
    """

    fingerprint: list[object]
    functions: dict[func.FuncOp, CompiledFunction | None]
    facts: dict[object, Any]
    sealed: bool = False
    numerics: dict[func.FuncOp, CompiledFunction | None] = field(default_factory=dict)
    """The functions' numerics-only forms (:attr:`_Compiler.numerics`), compiled on first need."""

    def fact(self, key: object, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per module version."""
        got = self.facts.get(key, _MISSING)
        if got is _MISSING:
            got = self.facts[key] = compute()
        return got


_PLAN_ATTR = "_pypto_kernel_plan"


class KernelCache:
    """Module plans, rebuilt when the module's ops or operands change.

    A plan is kept on its module object (an attribute): the plan holds the module's ops, so a side
    table would keep modules alive; on the module, the two are one collectable cycle. Each run of an
    unsealed module fingerprints it (a walk over its ops, ~14 us for the benchmark's 32); a sealed module's
    plan is found by the module's identity alone."""

    def plan(self, module: Operation) -> ModulePlan:
        """The current plan of ``module`` (a fresh one if it is new or was edited)."""
        got: ModulePlan | None = getattr(module, _PLAN_ATTR, None)
        if got is not None and got.sealed:
            return got
        key = fingerprint(module)
        if got is None or got.fingerprint != key:
            got = ModulePlan(key, {}, {})
            setattr(module, _PLAN_ATTR, got)
        got.sealed = is_sealed(module)  # checked once more after sealing: the plan is of the sealed version
        return got

    def get(self, fn: func.FuncOp, plan: ModulePlan | None = None, numerics: bool = False) -> CompiledFunction:
        """The compiled form of ``fn`` (``numerics``: its numerics-only form); raises :class:`Unsupported` for
        IR this engine does not run."""
        plan = plan or self.plan(fn.get_toplevel_object())
        functions = plan.numerics if numerics else plan.functions
        got = functions.get(fn, _MISSING)
        if got is not _MISSING:
            if got is None:
                raise Unsupported(f"@{fn.sym_name.data} uses IR the compiled engine does not run")
            return got  # type: ignore[return-value]
        try:
            compiled = functions[fn] = _Compiler(self, plan, numerics).function(fn)
        except Unsupported:
            functions[fn] = None
            raise
        return compiled


KERNELS = KernelCache()
"""The process-wide cache :func:`~.run.run_kernel` uses."""
