"""ExpandMixedKernel: every InCore function becomes AIC, AIV, or an AIC + AIV pair
called by a Group function.

Affinity (pl-dsl.md §3): the matmul family runs on the cube core (CUBE);
``load`` / ``store`` / ``move`` / ``create`` / ``reshape`` / ``slice`` /
``extract`` / ``assemble`` / ``read`` follow their tile's memory space (Vec ->
VECTOR, Mat / Left / Right / Acc / ... -> CUBE); every other ``pl.tile.*`` op is
VECTOR; scalar code (``arith``, loop bounds) is SHARED and runs on both cores. A
``pl.tile.move`` from a cube space to Vec (or back) is a *boundary*: the data
crosses cores.

- A function with only CUBE (and SHARED) ops is retyped AIC, with only VECTOR
  ops AIV (level/role from ``pypto.dialects.enums.DEFAULT_LEVEL``), as upstream
  does for the add / softmax / matmul_k kernels (their ``22_after_`` dumps).
- A mixed function ``f`` is split like upstream: ``f_aic`` keeps the CUBE and
  SHARED ops and returns nothing; ``f_aiv`` keeps the VECTOR and SHARED ops and
  the returns; a C->V boundary move becomes ``pl.tile.tpush_to_aiv(src,
  split=0)`` on the cube side and ``dst = pl.tile.tpop_from_aic(shape=,
  dtype=)`` on the vector side (V->C: ``tpush_to_aic`` / ``tpop_from_aiv``
  into Mat, then a ``pl.tile.move`` when the destination is Left / Right).
  ``f`` itself becomes the Group function (same name and signature, so callers
  are unchanged) that calls ``f_aic`` then ``f_aiv`` and returns the latter's
  results. Loops and ifs are kept on each side with the carried tiles of the
  other side dropped; a tensor written by the other side is read through its
  parameter (DDR is shared).

No InCore function remains afterwards. Ordering between the cores through DDR
(one core storing a tensor the other loads) is not synchronised here; only
boundary moves carry data between the halves.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FunctionType as FuncSig
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from pypto.diagnostics import error_at
from pypto.dialects.enums import FunctionType, MemorySpace, enum_attr
from pypto.dialects.op_base import INT, INTS
from pypto.dialects.op_facts import static_extent, valid_shape
from pypto.dialects.program import set_function_type
from pypto.dialects.tile_ops import (
    TileAssembleOp,
    TileCreateOp,
    TileExtractOp,
    TileLoadOp,
    TileMatmulAccOp,
    TileMatmulOp,
    TileMoveOp,
    TileReadOp,
    TileReshapeOp,
    TileSliceOp,
    TileStoreOp,
    TileTpopFromAicOp,
    TileTpopFromAivOp,
    TileTpushToAicOp,
    TileTpushToAivOp,
    TileTransposeViewOp,
    _BlockQueryOp,
)
from pypto.dialects.types import TensorType, TileType

from .base import FunctionPass, base_name, index_constant
from .registry import register_pass


class Affinity(Enum):
    SHARED = "shared"
    CUBE = "cube"
    VECTOR = "vector"
    C2V = "c2v"
    V2C = "v2c"


VECTOR_SPACES = (MemorySpace.Vec, MemorySpace.ScalarLocal)


def space_side(space: MemorySpace) -> Affinity:
    """The core that owns a memory space."""
    return Affinity.VECTOR if space in VECTOR_SPACES else Affinity.CUBE


def _tile_side(value: SSAValue) -> Affinity:
    t = value.type
    assert isinstance(t, TileType)
    return space_side(t.memory_space)


# Ops whose core is the one owning their tile: (result tile) or (operand index).
_FOLLOW_RESULT = (TileLoadOp, TileCreateOp, TileReshapeOp, TileTransposeViewOp, TileSliceOp, TileExtractOp, TileAssembleOp)
_CUBE_ONLY = (TileMatmulOp, TileMatmulAccOp, TileTpushToAivOp, TileTpopFromAivOp)
_VECTOR_ONLY = (TileTpushToAicOp, TileTpopFromAicOp)


def affinity(op: Operation) -> Affinity:
    """Which core runs ``op`` (SHARED: both; C2V / V2C: a boundary move)."""
    if isinstance(op, _CUBE_ONLY):
        return Affinity.CUBE
    if isinstance(op, _VECTOR_ONLY):
        return Affinity.VECTOR
    if isinstance(op, TileMoveOp):
        src, dst = _tile_side(op.tile), _tile_side(op.result)
        if src is dst:
            return src
        return Affinity.C2V if src is Affinity.CUBE else Affinity.V2C
    if isinstance(op, _FOLLOW_RESULT):
        return _tile_side(op.results[0])
    if isinstance(op, TileStoreOp):
        return _tile_side(op.tile)
    if isinstance(op, TileReadOp):
        return _tile_side(op.input)
    if isinstance(op, _BlockQueryOp):  # the launch's block index/count: the same on both cores
        return Affinity.SHARED
    if op.name.startswith("pl.tile."):
        return Affinity.VECTOR
    return Affinity.SHARED


def function_affinities(f: func.FuncOp) -> set[Affinity]:
    """The affinities of every op of ``f`` (SHARED left out)."""
    found = {affinity(op) for op in f.body.walk() if not op.regions}
    found.discard(Affinity.SHARED)
    return found


def is_mixed(kinds: set[Affinity]) -> bool:
    return bool(kinds & {Affinity.C2V, Affinity.V2C}) or {Affinity.CUBE, Affinity.VECTOR} <= kinds


def _tensor_root(value: SSAValue) -> SSAValue:
    """The tensor a store chain writes: ``store(t, offs, out)`` -> ``out`` (recursively)."""
    while isinstance(value.owner, TileStoreOp):
        value = value.owner.output
    return value


_PURE_SHARED = (arith.ConstantOp,)


def _is_pure(op: Operation) -> bool:
    return op.dialect_name() == "arith" or isinstance(op, _PURE_SHARED)


class _SideFilter:
    """Keeps the ops of one core in a clone of a mixed function."""

    def __init__(self, side: Affinity):
        self.side = side
        self.other = Affinity.VECTOR if side is Affinity.CUBE else Affinity.CUBE
        self.valid: dict[TileMoveOp, list[SSAValue | int] | None] = {}

    def other_tile(self, t: Attribute) -> bool:
        return isinstance(t, TileType) and space_side(t.memory_space) is self.other

    def run(self, f: func.FuncOp) -> None:
        # The valid shape of each tile this side pops, found while the function is whole: cutting loops and
        # ifs down to this side's tiles drops the other side's carried tiles the rules follow.
        self.valid = {
            op: valid_shape(op.tile)
            for op in f.body.walk()
            if isinstance(op, TileMoveOp)
            and affinity(op) in (Affinity.C2V, Affinity.V2C)
            and _tile_side(op.result) is self.side
        }
        for block in f.body.blocks:
            self.block(block)

    def block(self, block: Block) -> None:
        for op in reversed(list(block.ops)):
            if isinstance(op, (scf.YieldOp, func.ReturnOp)):
                continue
            if isinstance(op, scf.ForOp):
                self.for_loop(op)
            elif isinstance(op, scf.IfOp):
                self.if_op(op)
            else:
                self.leaf(op)

    # ---- leaf ops ----------------------------------------------------------

    def leaf(self, op: Operation) -> None:
        aff = affinity(op)
        if aff is Affinity.SHARED:
            if _is_pure(op) and all(not r.uses for r in op.results):
                Rewriter.erase_op(op)
            return
        if aff is self.side:
            return
        if aff is self.other:
            self.erase_other(op)
            return
        assert isinstance(op, TileMoveOp)
        source = Affinity.CUBE if aff is Affinity.C2V else Affinity.VECTOR
        if source is self.side:
            self.push(op, aff)
        else:
            self.pop(op, aff)

    def erase_other(self, op: Operation) -> None:
        for r in op.results:
            if not r.uses:
                continue
            if isinstance(r.type, TensorType):
                r.replace_all_uses_with(_tensor_root(r))
                continue
            user = next(iter(r.uses)).operation
            raise error_at(
                user,
                f"ExpandMixedKernel: {user.name} on the {self.side.value} core uses "
                f"{r.name_hint or 'a value'} computed by {op.name} on the {self.other.value} core; "
                "only tiles moved with pl.move can cross cores",
            )
        Rewriter.erase_op(op)

    def push(self, move: TileMoveOp, aff: Affinity) -> None:
        if move.result.uses:
            raise error_at(move, "ExpandMixedKernel: a cross-core move's result is used on its source core")
        cls = TileTpushToAivOp if aff is Affinity.C2V else TileTpushToAicOp
        push = cls.build_from_args({"tile": move.tile}, {"split": INT.to_attr(0)})
        push.location = move.location
        Rewriter.replace_op(move, push, [None])
        push.results[0].name_hint = None

    def pop(self, move: TileMoveOp, aff: Affinity) -> None:
        cls = TileTpopFromAicOp if aff is Affinity.C2V else TileTpopFromAivOp
        t = move.result.type
        assert isinstance(t, TileType)
        new: list[Operation] = []
        valid = _run_time_valid_shape(move.tile, self.valid.get(move), new)
        for v in valid:
            self.check_computable(move, v)
        pop = cls.build_from_args(
            {"valid_shape": valid},
            {"shape": INTS.to_attr(list(t.get_shape())), "dtype": t.element_type, "split": INT.to_attr(0)},
        )
        pop.location = move.location
        for op in new:
            op.location = move.location
        name = move.result.name_hint
        new.append(pop)
        result = pop.results[0]
        popped = pop.results[0].type
        assert isinstance(popped, TileType)
        if popped.memory_space is not t.memory_space:
            suffix = "_mat" if cls is TileTpopFromAivOp else "_vec"
            pop.results[0].name_hint = f"{name}{suffix}" if name else None
            again = TileMoveOp.build_from_args({"tile": pop.results[0]}, {"target_memory": enum_attr(t.memory_space)})
            again.location = move.location
            new.append(again)
            result = again.results[0]
        result.name_hint = name
        block = move.parent_block()
        assert block is not None
        block.insert_ops_before(new, move)
        move.result.replace_all_uses_with(result)
        Rewriter.erase_op(move)

    def check_computable(self, move: TileMoveOp, value: SSAValue) -> None:
        """``value``, an extent of the valid shape the pop of ``move`` declares, is computed by the scalar code
        both cores run, not from a value only the pushing core has (a ``pl.tile.read`` of its tile): a located
        error naming it otherwise."""
        seen: set[SSAValue] = set()
        todo = [value]
        while todo:
            v = todo.pop()
            if v in seen or not isinstance(v.owner, Operation):
                continue
            seen.add(v)
            op = v.owner
            aff = affinity(op)
            if aff is Affinity.SHARED:
                todo.extend(op.operands)
                continue
            if aff is self.side:
                continue
            name = f"'{base_name(v.name_hint)}'" if v.name_hint else "a value"
            raise error_at(
                move,
                f"ExpandMixedKernel: the tile this pl.move sends to the {self.side.value} core has a valid shape "
                f"computed from {name} ({op.name} on the {self.other.value} core), which the {self.side.value} "
                "core cannot compute, so its pop cannot declare it; give both cores the extent (a scalar "
                "parameter, pl.tensor.read) or make the tile valid everywhere before the move (pl.tile.fillpad)",
            )

    # ---- control flow ------------------------------------------------------

    def for_loop(self, op: scf.ForOp) -> None:
        body = op.body.block
        carried = list(body.args[1:])
        keep = [i for i, a in enumerate(carried) if not self.other_tile(a.type)]
        term = body.last_op
        assert isinstance(term, scf.YieldOp)
        if len(keep) != len(carried):
            new_yield = scf.YieldOp(*[term.operands[i] for i in keep])
            Rewriter.replace_op(term, new_yield, [])
        self.block(body)
        if len(keep) != len(carried):
            op = self._rebuild_for(op, keep)
        self._drop_if_empty(op, op.body.block, list(op.iter_args))

    def _rebuild_for(self, op: scf.ForOp, keep: list[int]) -> scf.ForOp:
        body = op.body.block
        inits = [op.iter_args[i] for i in keep]
        dropped = [a for i, a in enumerate(body.args[1:]) if i not in keep]
        for res_i, res in enumerate(op.results):
            if res_i not in keep and res.uses:
                raise error_at(op, "ExpandMixedKernel: a loop result of the other core is still used")
        new = scf.ForOp(op.lb, op.ub, op.step, inits, op.detach_region(op.body))
        for a in dropped:
            if a.uses:
                raise error_at(op, "ExpandMixedKernel: a carried tile of the other core is still used")
            new.body.block.erase_arg(a)
        new.attributes.update(op.attributes)
        new.location = op.location
        for j, i in enumerate(keep):
            new.results[j].name_hint = op.results[i].name_hint
            op.results[i].replace_all_uses_with(new.results[j])
        Rewriter.replace_op(op, new, [None] * len(op.results))
        return new

    def if_op(self, op: scf.IfOp) -> None:
        keep = [i for i, r in enumerate(op.results) if not self.other_tile(r.type)]
        for region in op.regions:
            for block in region.blocks:
                term = block.last_op
                if len(keep) != len(op.results) and isinstance(term, scf.YieldOp):
                    Rewriter.replace_op(term, scf.YieldOp(*[term.operands[i] for i in keep]), [])
                self.block(block)
        if len(keep) != len(op.results):
            for i, r in enumerate(op.results):
                if i not in keep and r.uses:
                    raise error_at(op, "ExpandMixedKernel: an if result of the other core is still used")
            then_region, else_region = op.true_region, op.false_region  # both before either is detached
            new = scf.IfOp(
                op.cond,
                [op.results[i].type for i in keep],
                op.detach_region(then_region),
                op.detach_region(else_region),
            )
            new.attributes.update(op.attributes)
            new.location = op.location
            for j, i in enumerate(keep):
                new.results[j].name_hint = op.results[i].name_hint
                op.results[i].replace_all_uses_with(new.results[j])
            Rewriter.replace_op(op, new, [None] * len(op.results))
            op = new
        blocks = [r.block for r in op.regions if r.blocks]
        if all(_only_yield(b) for b in blocks) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)

    def _drop_if_empty(self, op: scf.ForOp, body: Block, inits: list[SSAValue]) -> None:
        """Erase a loop left with nothing to do on this core (its body only
        forwards the carried values)."""
        term = body.last_op
        assert isinstance(term, scf.YieldOp)
        if body.first_op is not term:
            return
        if list(term.operands) != list(body.args[1:]):
            return
        for res, init in zip(op.results, inits, strict=True):
            res.replace_all_uses_with(init)
        Rewriter.erase_op(op)


def _run_time_valid_shape(tile: SSAValue, valid: list[SSAValue | int] | None, new: list[Operation]) -> list[SSAValue]:
    """The valid shape a pop of ``tile`` (the cross-core move's source, on the pushing side) declares, given the
    tile's ``valid`` shape (:func:`~pypto.dialects.op_facts.valid_shape`): none when the whole tile is valid or
    the rule is not known (the pop takes the tile's static shape), else an index value per dim, the static
    extents as constants appended to ``new``. The values are scalars, which both cores compute (SHARED), so the
    popping side has them too."""
    assert isinstance(tile.type, TileType)
    shape = list(tile.type.get_shape())
    if valid is None or len(shape) != 2 or len(valid) != 2:
        return []
    if [static_extent(v) for v in valid] == shape:
        return []
    values: list[SSAValue] = []
    for v in valid:
        if isinstance(v, int):
            const = index_constant(v)
            new.append(const)
            v = const.result
        values.append(v)
    return values


def _only_yield(block: Block) -> bool:
    return isinstance(block.first_op, scf.YieldOp) and not block.first_op.operands


def split_function(f: func.FuncOp) -> tuple[func.FuncOp, func.FuncOp]:
    """Split the mixed function ``f`` into ``f_aic`` / ``f_aiv`` and turn ``f``
    into the Group function calling them. Returns (aic, aiv)."""
    name = f.sym_name.data
    sig = f.function_type
    aic = f.clone()
    aiv = f.clone()
    aic.sym_name = StringAttr(f"{name}_aic")
    aiv.sym_name = StringAttr(f"{name}_aiv")
    # The cube half returns nothing: the vector half hands the outputs back.
    for op in aic.body.walk():
        if isinstance(op, func.ReturnOp) and op.parent_op() is aic:
            Rewriter.replace_op(op, func.ReturnOp(), [])
    aic.function_type = FuncSig.from_lists(list(sig.inputs.data), [])
    _SideFilter(Affinity.CUBE).run(aic)
    _SideFilter(Affinity.VECTOR).run(aiv)
    set_function_type(aic, FunctionType.AIC)
    set_function_type(aiv, FunctionType.AIV)

    block = f.body.block
    for op in reversed(list(block.ops)):
        Rewriter.erase_op(op, safe_erase=False)
    args = list(block.args)
    loc = f.location
    call_aic = func.CallOp(aic.sym_name.data, args, [])
    call_aiv = func.CallOp(aiv.sym_name.data, args, list(sig.outputs.data))
    for r in call_aiv.results:
        r.name_hint = "result"
    ret = func.ReturnOp(*call_aiv.results)
    for op in (call_aic, call_aiv, ret):
        op.location = loc
    block.add_ops([call_aic, call_aiv, ret])
    set_function_type(f, FunctionType.Group)
    module_block = f.parent_block()
    assert module_block is not None
    module_block.insert_ops_before([aic, aiv], f)
    return aic, aiv


@register_pass
@dataclass(frozen=True)
class ExpandMixedKernel(FunctionPass):
    """InCore -> AIC / AIV (pure) or AIC + AIV + Group (mixed)."""

    FUNCTION_TYPES = (FunctionType.InCore,)

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        kinds = function_affinities(f)
        if is_mixed(kinds):
            split_function(f)
        elif kinds == {Affinity.CUBE}:
            set_function_type(f, FunctionType.AIC)
        else:
            set_function_type(f, FunctionType.AIV)
