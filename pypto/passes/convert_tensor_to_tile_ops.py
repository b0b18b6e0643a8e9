"""ConvertTensorToTileOps: inside InCore functions, tensor ops become tile ops.

What upstream PyPTO's pass 11 does (see the ``11_after_ConvertTensorToTileOps``
dumps), for the subset PyPTO-on-xDSL supports:

- a tensor parameter read by a vector op gets one *entry load* at the top of
  the function, ``<p>__tile = pl.tile.load(p, [0, ..], shape, shape,
  target_memory=pl.Mem.Vec)``; a parameter read whole by a matmul gets a Mat
  entry load ``<p>_mat``;
- ``pl.tensor.slice`` of a tensor becomes a ``pl.tile.load`` of that window (in
  Mat when its users are matmuls, else Vec), named ``<slice>__tile``;
- ``pl.tensor.X`` (elementwise, scalar forms, unary, reductions, expands,
  cast, full, reshape, concat) becomes ``pl.tile.X`` on the tiles, its result
  named ``<name>__tile`` (row reductions get a scratch ``pl.tile.create``
  ``tmp__tile``); ``matmul`` / ``matmul_acc`` take Mat operands and give Acc;
- ``pl.tensor.assemble(out, v, offs)`` into a tensor becomes
  ``pl.tile.store(v, offs, out)`` named ``<out>__tile`` (after the tensor
  written); into a tile it is
  ``pl.tile.assemble``;
- loop carries (``scf.for`` iter_args, ``scf.if`` results) that become tiles
  are retyped;
- ``pld.tensor.remote_store`` of a value that became a tile becomes ``pld.tile.remote_store`` of it.

Repeated names are numbered ``_1``, ``_2`` by the printers. A tensor op this pass cannot
convert is a located user error (:func:`pypto.diagnostics.error_at`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import Rewriter

from pypto.diagnostics import Diagnostic, Severity, error_at, op_span
from pypto.dialects import PL
from pypto.dialects import op_families as F
from pypto.dialects.enums import CastMode, FunctionType, MemorySpace
from pypto.dialects.op_base import ArgKind, OpTypeError, PLOp, describe_type
from pypto.dialects.tensor_ops import (
    TensorAssembleOp,
    TensorCastOp,
    TensorCreateOp,
    TensorDimOp,
    TensorMatmulAccOp,
    TensorMatmulOp,
    TensorReadOp,
    TensorSliceOp,
    TensorWriteOp,
)
from pypto.dialects.tile_ops import (
    TileAssembleOp,
    TileCreateOp,
    TileLoadOp,
    TileMatmulAccOp,
    TileMatmulOp,
    TileMoveOp,
    TileSliceOp,
    TileStoreOp,
    TileTransposeViewOp,
)
from pypto.dialects.types import DYNAMIC, TensorType, TileType
from pypto.errors import KernelCodegenError

from .base import FunctionPass, NameGen, index_constant, value_base
from .registry import register_pass

_OPS: dict[str, type[Operation]] = {op.name: op for op in PL.operations}

_CUBE_SPACES = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right)
_CROSSINGS = {(MemorySpace.Acc, MemorySpace.Vec), (MemorySpace.Vec, MemorySpace.Mat)}
"""(tile space, wanted space) pairs moved across the cube/vector boundary instead of rejected, as upstream: a
matmul result read by a vector op (Acc -> Vec), a vector result read by a matmul (Vec -> Mat). A kernel with
both runs its AIC and AIV parts interleaved on the device model (:mod:`pypto.utils.interleave`)."""

# Tensor op families converted one to one onto the tile op of the same name.
_ELEMENTWISE = (
    F.BinaryOp,
    F.ScalarBinaryOp,
    F.UnaryOp,
    F.ColReduceOp,
    F.RowExpandOp,
    F.ColExpandOp,
    F.CastOp,
    F.FullOp,
    F.ReshapeOp,
    F.ConcatOp,
)


def _is_matmul_operand(op: Operation, index: int) -> bool:
    if isinstance(op, TensorMatmulOp):
        return index in (0, 1)
    if isinstance(op, TensorMatmulAccOp):
        return index in (1, 2)
    return isinstance(op, TileMatmulOp | TileMatmulAccOp)


class _FunctionConverter:
    """Converts the tensor ops of one InCore function, in program order."""

    def __init__(self, f: func.FuncOp):
        self.f = f
        self.names = NameGen.for_function(f)
        self.entry = f.body.blocks.first
        self.entry_last: Operation | None = None  # last entry load inserted
        self.loads: dict[tuple[SSAValue, MemorySpace], SSAValue] = {}

    # ---- helpers -------------------------------------------------------------

    def fresh(self, like: SSAValue, suffix: str = "__tile") -> str:
        return self.names.fresh(f"{value_base(like)}{suffix}")

    def insert_before(self, anchor: Operation, *ops: Operation) -> None:
        block = anchor.parent_block()
        assert block is not None
        block.insert_ops_before(list(ops), anchor)

    def _insert_load_ops(self, value: SSAValue, ops: list[Operation]) -> None:
        """Entry loads of parameters go to the top of the function (first-use
        order); loads of other tensors go right after the tensor's definition."""
        if isinstance(value, BlockArgument):
            block = value.block
            if block is self.entry:
                if self.entry_last is None:
                    first = block.first_op
                    if first is None:
                        block.add_ops(ops)
                    else:
                        block.insert_ops_before(ops, first)
                else:
                    block.insert_ops_after(ops, self.entry_last)
                self.entry_last = ops[-1]
                return
            first = block.first_op
            if first is None:
                block.add_ops(ops)
            else:
                block.insert_ops_before(ops, first)
            return
        owner = value.owner
        assert isinstance(owner, Operation)
        parent = owner.parent_block()
        assert parent is not None
        parent.insert_ops_after(ops, owner)

    def build(self, anchor: Operation, cls: type[Operation], values: dict[str, Any], attrs: dict[str, Attribute]) -> PLOp:
        """Build a tile op from DSL arguments; typing errors are located at ``anchor``."""
        assert issubclass(cls, PLOp)
        try:
            new = cls.build_from_args(values, attrs)
        except OpTypeError as e:
            raise error_at(anchor, f"cannot convert {anchor.name} to {cls.name}: {e}") from None
        new.location = anchor.location
        return new

    def as_tile(self, value: SSAValue, space: MemorySpace, user: Operation) -> SSAValue:
        """``value`` as a tile in ``space``: a tile as is, a tensor loaded whole."""
        t = value.type
        if isinstance(t, TileType) and (t.memory_space, space) in _CROSSINGS:
            return self.cross(value, space, user)
        if isinstance(t, TileType):
            ok = t.memory_space in _CUBE_SPACES if space is MemorySpace.Mat else t.memory_space is space
            if not ok and (t.memory_space, space) == (MemorySpace.Acc, MemorySpace.Mat):
                name = value_base(value).removesuffix("__tile")
                raise error_at(
                    user,
                    f"{user.name}: operand {name!r} is a matmul result (pl.Mem.Acc); on tensors a matmul reads "
                    "another's result only narrowed to pl.FP16 / pl.BF16 by the cube's write-back",
                    hint=f'pl.cast({name}, pl.BF16, mode="rint") before this matmul, or out_dtype=pl.BF16 on the '
                    "matmul making it",
                )
            if not ok:
                raise error_at(
                    user,
                    f"{user.name}: operand {value_base(value)!r} is a tile in pl.Mem.{t.memory_space.value}, "
                    f"expected pl.Mem.{space.value}",
                    hint="move it with pl.move, or store it and load it again",
                )
            return value
        if not isinstance(t, TensorType):
            return value
        key = (value, space)
        if key in self.loads:
            return self.loads[key]
        shape = t.get_shape()
        if DYNAMIC in shape:
            raise error_at(user, f"{user.name}: cannot load the dynamic-shaped tensor {value_base(value)!r} whole")
        zeros = [index_constant(0) for _ in shape]
        dims = [index_constant(d) for d in shape]
        load = self.build(
            user,
            TileLoadOp,
            {"tensor": value, "offsets": [z.result for z in zeros], "valid_shapes": [d.result for d in dims]},
            {"shapes": _ints(shape), "target_memory": _space(space)},
        )
        if isinstance(value, BlockArgument) and value.block is self.entry:
            load.location = self.f.location
        suffix = "_mat" if space is MemorySpace.Mat else "__tile"
        load.result.name_hint = self.fresh(value, suffix)
        self._insert_load_ops(value, [*zeros, *dims, load])
        self.loads[key] = load.result
        return load.result

    def cross(self, value: SSAValue, space: MemorySpace, user: Operation) -> SSAValue:
        """A tile the other core's op reads (an Acc matmul result read by a vector op, a Vec tile read by a
        matmul): moved once, after it is made, as upstream does (ExpandMixedKernel turns the move into the
        cube <-> vector push/pop)."""
        key = (value, space)
        if key not in self.loads:
            move = self.build(user, TileMoveOp, {"tile": value}, {"target_memory": _space(space)})
            move.location = value.owner.location if isinstance(value.owner, Operation) else user.location
            move.result.name_hint = self.fresh(value, "_vec" if space is MemorySpace.Vec else "_mat")
            self._insert_load_ops(value, [move])
            self.loads[key] = move.result
        return self.loads[key]

    def replace(self, old: Operation, new: Operation, *extra_before: Operation) -> None:
        """Put ``new`` (after ``extra_before``) where ``old`` is; ``old``'s result
        uses move to ``new``'s result, named ``<old>__tile``."""
        self.insert_before(old, *extra_before, new)
        if not new.results[0].name_hint:
            new.results[0].name_hint = self.fresh(old.results[0])
        old.results[0].replace_all_uses_with(new.results[0])
        Rewriter.erase_op(old)

    # ---- the walk ------------------------------------------------------------

    def run(self) -> None:
        for op in list(self.f.walk()):
            if isinstance(op, TensorMatmulOp):
                self.split_output_cast(op)
        for block in self.f.body.blocks:
            self.convert_block(block)

    def split_output_cast(self, op: TensorMatmulOp) -> None:
        """A tensor matmul whose dtype is not the cube's accumulator's (``out_dtype=pl.FP16``, or FP16
        operands without ``out_dtype``: upstream's promotion) becomes the matmul into the accumulator dtype and
        a ``pl.cast`` to its own, rounding half to even as the FIXPIPE write-back does; the cast then converts
        as a written one does (folded into the FIXPIPE when only matmuls read it, else on the vector core)."""
        want = op.result.type
        assert isinstance(want, TensorType)
        acc = F.accumulator_dtype(op.lhs.type.element_type) if isinstance(op.lhs.type, (TensorType, TileType)) else None
        if acc is None or want.element_type == acc:
            return
        props = {k: v for k, v in op.properties.items() if k != "out_dtype"}
        matmul = self.build(op, TensorMatmulOp, {"lhs": op.lhs, "rhs": op.rhs}, {**props, "out_dtype": acc})
        matmul.results[0].name_hint = self.names.fresh(f"{value_base(op.result)}_acc")
        cast = self.build(op, TensorCastOp, {"input": matmul.results[0]},
                          {"target_type": want.element_type, "mode": F.STR.to_attr(CastMode.rint.value)})  # fmt: skip
        cast.results[0].name_hint = op.result.name_hint
        self.insert_before(op, matmul, cast)
        op.result.replace_all_uses_with(cast.results[0])
        Rewriter.erase_op(op)

    def convert_block(self, block: Block) -> None:
        for op in list(block.ops):
            self.convert_op(op)

    def convert_op(self, op: Operation) -> None:
        if op.name.startswith("pl.tensor."):
            self.convert_tensor_op(op)
        elif op.name == "pld.tensor.remote_store" and isinstance(op.operands[0].type, TileType):
            self.convert_remote_store(op)
        elif isinstance(op, F.TransposeOp) and op.name.startswith("pl.tile.") and op.tmp_tile is None:
            # a tile transpose as written (pl.transpose of a tile) gets its pto.ttrans scratch here, as one
            # converted from a tensor does: a codegen detail the user never supplies (upstream's tile.transpose)
            self.convert_row_reduce(op)
        elif isinstance(op, scf.ForOp):
            self.convert_for(op)
        elif isinstance(op, scf.IfOp):
            self.convert_if(op)
        elif isinstance(op, func.ReturnOp | func.CallOp):
            for v in op.operands:
                if isinstance(v.type, TileType):
                    what = "returned" if isinstance(op, func.ReturnOp) else f"passed to {op.callee}"  # type: ignore[union-attr]
                    raise KernelCodegenError(
                        Diagnostic(
                            Severity.ERROR,
                            f"the tile {value_base(v)!r} is {what} from the InCore function "
                            f"'{self.f.sym_name.data}'; InCore functions exchange tensors",
                            op_span(op),
                            hint="write the value into an Out parameter (out[:] = value) and return that",
                        )
                    )
        else:
            for region in op.regions:
                for block in region.blocks:
                    self.convert_block(block)

    def convert_remote_store(self, op: Operation) -> None:
        """``pld.tensor.remote_store`` of a value computed on the core (now a tile) becomes
        ``pld.tile.remote_store`` of that tile, as upstream lowers it 1:1 (no GM round trip before the push)."""
        from pypto.dialects.distributed_ops import TileRemoteStoreOp  # lazily: pld is not on every compile path

        assert isinstance(op, PLOp)
        view = op.arg_view()
        values = {"tile": view.value("src"), "target": view.value("target"), "peer": view.value("peer"),
                  "offsets": view.values("offsets")}
        attrs = {"atomic": op.properties["atomic"]} if "atomic" in op.properties else {}
        new = self.build(op, TileRemoteStoreOp, values, attrs)
        new.results[0].name_hint = op.results[0].name_hint
        self.replace(op, new)

    def convert_for(self, op: scf.ForOp) -> None:
        body = op.body.block
        for init, arg in zip(op.iter_args, body.args[1:], strict=True):
            if init.type != arg.type:
                Rewriter.replace_value_with_new_type(arg, init.type)
        self.convert_block(body)
        term = body.last_op
        assert term is not None
        for i, (arg, y) in enumerate(zip(body.args[1:], term.operands, strict=True)):
            if arg.type != y.type:
                raise error_at(
                    term,
                    f"loop-carried value {value_base(arg)!r} #{i} enters the loop as "
                    f"{describe_type(arg.type)} but is yielded as {describe_type(y.type)}",
                )
        for res, arg in zip(op.results, body.args[1:], strict=True):
            if res.type != arg.type:
                Rewriter.replace_value_with_new_type(res, arg.type)

    def convert_if(self, op: scf.IfOp) -> None:
        for region in op.regions:
            for block in region.blocks:
                self.convert_block(block)
        yields = [r.block.last_op for r in op.regions if r.blocks]
        types: list[list[Attribute]] = [[v.type for v in y.operands] for y in yields if y is not None]
        if len(types) == 2 and types[0] != types[1]:
            raise error_at(op, "the branches of this if yield different types after tensor-to-tile conversion")
        if types:
            for res, t in zip(op.results, types[0], strict=True):
                if res.type != t:
                    Rewriter.replace_value_with_new_type(res, t)

    def convert_tensor_op(self, op: Operation) -> None:
        if isinstance(op, TensorSliceOp):
            self.convert_slice(op)
        elif isinstance(op, TensorAssembleOp):
            self.convert_assemble(op)
        elif isinstance(op, TensorMatmulOp | TensorMatmulAccOp):
            self.convert_matmul(op)
        elif isinstance(op, TensorReadOp):
            if isinstance(op.input.type, TileType):
                self.convert_generic(op)
        elif isinstance(op, TensorDimOp):
            pass  # a parameter's extent (pl.range(NR)): a scalar, known once the kernel's shapes are
        elif isinstance(op, TensorWriteOp):
            if isinstance(op.target.type, TileType):
                self.convert_generic(op)  # a GM element write stays a tensor op (pto.store_scalar)
        elif isinstance(op, F.RowReduceOp | F.TransposeOp):
            self.convert_row_reduce(op)  # both take a scratch tile shaped like the input
        elif isinstance(op, F.CastOp) and self.fold_cast_into_fixpipe(op):
            pass
        elif isinstance(op, _ELEMENTWISE):
            self.convert_generic(op)
        elif isinstance(op, TensorCreateOp):
            self.convert_create(op)
        else:
            extra = ""
            raise error_at(
                op,
                f"cannot convert {op.name} to a tile op in the InCore function '{self.f.sym_name.data}'{extra}",
            )

    def tile_args(self, op: PLOp, space: MemorySpace = MemorySpace.Vec) -> tuple[dict[str, Any], dict[str, Attribute]]:
        """The op's DSL arguments with tensor operands turned into tiles."""
        view = op.arg_view()
        values: dict[str, Any] = {}
        attrs: dict[str, Attribute] = {}
        for arg in op.DSL_ARGS:
            if arg.kind in (ArgKind.VALUE, ArgKind.OPT_VALUE):
                v = view.opt_value(arg.name)
                if v is not None:
                    values[arg.name] = self.as_tile(v, space, op)
            elif arg.kind is ArgKind.VALUE_LIST:
                values[arg.name] = view.values(arg.name)
            elif arg.name in op.properties:
                attrs[arg.name] = op.properties[arg.name]
        return values, attrs

    def tile_class(self, op: Operation) -> type[Operation]:
        cls = _OPS.get(op.name.replace("pl.tensor.", "pl.tile.", 1))
        if cls is None:
            raise error_at(op, f"{op.name} has no tile counterpart")
        return cls

    def convert_generic(self, op: Operation) -> None:
        assert isinstance(op, PLOp)
        cls = self.tile_class(op)
        values, attrs = self.tile_args(op)
        keep = {a.name for a in cls.DSL_ARGS}  # type: ignore[attr-defined]
        attrs = {k: v for k, v in attrs.items() if k in keep}
        if isinstance(op, F.BinaryOp):
            lt, rt = values["lhs"].type, values["rhs"].type
            if lt.get_shape() != rt.get_shape():
                raise error_at(
                    op,
                    f"{op.name}: operand shapes {list(lt.get_shape())} and {list(rt.get_shape())} differ; "
                    "tile ops do not broadcast",
                    hint="use pl.row_expand_* / pl.col_expand_* for row or column broadcasts",
                )
        self.replace(op, self.build(op, cls, values, attrs))

    def fold_cast_into_fixpipe(self, op: F.CastOp) -> bool:
        """``pl.cast(acc, pl.BF16, mode="rint")`` of a matmul result read only by matmuls: the cube's
        FIXPIPE write-back narrows it on the way to a Mat scratch (``pl.tile.create`` in Mat, then an
        Acc -> Mat ``pl.tile.assemble`` of the whole window), as upstream folds it; the value never
        leaves the cube. Only ``rint``: FIXPIPE rounds half to even (other modes keep the vector cast)."""
        x, res = op.input, op.results[0]
        mode = F.STR.from_attr(op.properties["mode"]) if "mode" in op.properties else CastMode.round.value
        if mode != CastMode.rint.value or not isinstance(x.type, TileType) or not res.uses:
            return False
        if not all(_is_matmul_operand(u.operation, u.index) for u in res.uses):
            return False
        shape = x.type.get_shape()
        if not F.fixpipe_narrowing(x.type, TileType.get(shape, F.DTYPE.from_attr(op.properties["target_type"]), MemorySpace.Mat)):
            return False
        attrs = {"shape": _ints(shape), "dtype": op.properties["target_type"], "target_memory": _space(MemorySpace.Mat)}
        scratch = self.build(op, TileCreateOp, {}, attrs)
        scratch.results[0].name_hint = self.fresh(res, "_mat")
        zeros = [index_constant(0) for _ in shape]
        write = self.build(op, TileAssembleOp, {"target": scratch.results[0], "source": x, "offset": [z.result for z in zeros]}, {})
        self.replace(op, write, scratch, *zeros)
        return True

    def convert_row_reduce(self, op: Operation) -> None:
        assert isinstance(op, PLOp)
        values, attrs = self.tile_args(op)
        x = values["input"].type
        tmp = self.build(op, TileCreateOp, {}, {"shape": _ints(x.get_shape()), "dtype": x.element_type, "target_memory": _space(MemorySpace.Vec)})
        tmp.result.name_hint = self.names.fresh("tmp__tile")
        values["tmp_tile"] = tmp.result
        self.replace(op, self.build(op, self.tile_class(op), values, attrs), tmp)

    def convert_slice(self, op: TensorSliceOp) -> None:
        if isinstance(op.input.type, TileType):
            values, attrs = self.tile_args(op)
            self.replace(op, self.build(op, TileSliceOp, values, attrs))
            return
        cube = [_is_matmul_operand(u.operation, u.index) for u in op.result.uses]
        if cube and all(cube):
            space = MemorySpace.Mat
        elif not any(cube):
            space = MemorySpace.Vec
        else:
            raise error_at(op, "this slice feeds both a matmul and a vector op; slice the tensor twice")
        shape = tuple(F.INTS.from_attr(op.shape))
        valid: list[SSAValue] = list(op.valid_shape)
        consts: list[Operation] = []
        if not valid:
            consts = [index_constant(d) for d in shape]
            valid = [c.results[0] for c in consts]
        load = self.build(
            op,
            TileLoadOp,
            {"tensor": op.input, "offsets": list(op.offset), "valid_shapes": valid},
            {"shapes": op.shape, "target_memory": _space(space)},
        )
        self.replace(op, load, *consts)

    def convert_assemble(self, op: TensorAssembleOp) -> None:
        if isinstance(op.target.type, TileType):
            values, attrs = self.tile_args(op)
            self.replace(op, self.build(op, TileAssembleOp, values, attrs))
            return
        src = self.as_tile(op.source, _store_space(op.source), op)
        attrs = {"atomic": op.properties["atomic"]} if "atomic" in op.properties else {}
        store = self.build(op, TileStoreOp, {"tile": src, "offsets": list(op.offset), "output": op.target}, attrs)
        store.results[0].name_hint = self.fresh(op.target)  # ``out__tile``: named after the tensor written
        self.replace(op, store)

    def convert_create(self, op: TensorCreateOp) -> None:
        """``pl.create_tensor`` in an InCore body: an uninitialised tile, as upstream (Vec; Acc when it
        is the loop-carried accumulator of a ``matmul_acc``)."""
        t = op.results[0].type
        if isinstance(t, TensorType) and DYNAMIC in t.get_shape():
            raise error_at(op, f"cannot convert {op.name} with the dynamic shape {list(t.get_shape())} to a tile (tiles have static shapes)")
        space = MemorySpace.Acc if _feeds_acc(op.results[0]) else MemorySpace.Vec
        attrs = {"shape": op.properties["shape"], "dtype": op.properties["dtype"], "target_memory": _space(space)}
        self.replace(op, self.build(op, TileCreateOp, {}, attrs))

    def convert_matmul(self, op: TensorMatmulOp | TensorMatmulAccOp) -> None:
        lhs = self.transposed_if(op, "a_trans", self.as_tile(op.lhs, MemorySpace.Mat, op))
        rhs = self.transposed_if(op, "b_trans", self.as_tile(op.rhs, MemorySpace.Mat, op))
        if isinstance(op, TensorMatmulOp):  # its dtype is the accumulator's (split_output_cast)
            new = self.build(op, TileMatmulOp, {"lhs": lhs, "rhs": rhs}, {})
        else:
            acc = op.acc
            if not (isinstance(acc.type, TileType) and acc.type.memory_space is MemorySpace.Acc):
                raise error_at(op, f"{op.name}: the accumulator {value_base(acc)!r} must come from a matmul")
            new = self.build(op, TileMatmulAccOp, {"acc": acc, "lhs": lhs, "rhs": rhs}, {})
        self.replace(op, new)


    def transposed_if(self, op: TensorMatmulOp | TensorMatmulAccOp, flag: str, tile: SSAValue) -> SSAValue:
        """The matmul operand ``tile``, seen transposed when ``flag`` (``a_trans`` / ``b_trans``) is set: loaded
        in its natural orientation into Mat and read through a zero-copy ``pl.tile.transpose_view``, as upstream
        lowers it. A transposed operand must be a Mat tile (a tensor is loaded there)."""
        attr = op.properties.get(flag)
        if attr is None or not F.BOOL.from_attr(attr):
            return tile
        t = tile.type
        if not (isinstance(t, TileType) and t.memory_space is MemorySpace.Mat):
            space = t.memory_space.value if isinstance(t, TileType) else describe_type(t)
            raise error_at(op, f"{op.name}: {flag}=True needs its operand {value_base(tile)!r} in pl.Mem.Mat (it reads "
                               f"it through a transposed view), got pl.Mem.{space}",
                           hint=f"pass the tensor, or the pl.Mem.Mat tile before its pl.move; or drop {flag} and "
                                "pl.tile.transpose_view the Mat tile yourself")  # fmt: skip
        view = self.build(op, TileTransposeViewOp, {"input": tile}, {})
        view.results[0].name_hint = self.fresh(tile, "_t")
        self.insert_before(op, view)
        return view.results[0]


def _feeds_acc(value: SSAValue, seen: set[SSAValue] | None = None) -> bool:
    """``value`` reaches the accumulator of a ``matmul_acc`` (through loop-carried values)."""
    seen = set() if seen is None else seen
    if value in seen:
        return False
    seen.add(value)
    for use in value.uses:
        user = use.operation
        if isinstance(user, TensorMatmulAccOp) and user.acc is value:
            return True
        if isinstance(user, scf.ForOp) and use.index >= 3:
            i = use.index - 3
            if _feeds_acc(user.body.block.args[1 + i], seen) or _feeds_acc(user.results[i], seen):
                return True
    return False


def _store_space(value: SSAValue) -> MemorySpace:
    t = value.type
    return MemorySpace.Acc if isinstance(t, TileType) and t.memory_space is MemorySpace.Acc else MemorySpace.Vec


def _ints(shape: tuple[int, ...] | list[int]) -> Attribute:
    return F.INTS.to_attr(list(shape))


def _space(space: MemorySpace) -> Attribute:
    from pypto.dialects.enums import enum_attr

    return enum_attr(space)


@register_pass
@dataclass(frozen=True)
class ConvertTensorToTileOps(FunctionPass):
    """Tensor ops -> tile ops (entry loads, exit stores) in InCore functions."""

    FUNCTION_TYPES = (FunctionType.InCore,)

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        _FunctionConverter(f).run()
