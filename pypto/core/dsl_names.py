"""Naming analysis for the DSL printer: what prints inline, what shares a name.

One pass over a function numbers its ops in print order and records, per SSA
value, its use count, its single user and its last use; a second pass decides

- which ``scf.for`` loops print in the plain rebinding form (init value, iter
  arg, yielded value and result form one Python variable),
- which ``pl.at`` results are implicit (the yielded value's variable is read
  after the scope) and which need a rebinding line,
- which unnamed single-use values print inline as nested expressions.

Positions are doubled op numbers so that a use lifted to the end of a loop
(``2 * end + 1``: the value must survive every iteration) sorts after the
loop's own last op (``2 * end``).
"""

from __future__ import annotations

import keyword

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from pypto.dialects.op_base import ArgKind, PLOp
from pypto.dialects.program import AtOp
from pypto.dialects.tile_ops import TileAllocOp

LOOP_OPS = (scf.ForOp, scf.WhileOp)
RESERVED = frozenset({"pl", "self", "tuple"})
NEVER_DEAD = 1 << 62


def printed_operands(op: Operation) -> list[SSAValue]:
    """The operands of ``op`` in the order its DSL call writes them."""
    if isinstance(op, PLOp):
        out: list[SSAValue] = []
        for arg in op.DSL_ARGS:
            if arg.kind is ArgKind.VALUE:
                out.append(getattr(op, arg.name))
            elif arg.kind is ArgKind.OPT_VALUE:
                v = getattr(op, arg.name)
                if v is not None:
                    out.append(v)
            elif arg.kind is ArgKind.VALUE_LIST:
                out.extend(getattr(op, arg.name))
        return out
    return list(op.operands)


def is_literal(v: SSAValue) -> bool:
    """An unnamed ``arith.constant``: printed as a literal at every use."""
    return isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp) and not v.name_hint


def const_int(v: SSAValue) -> int | None:
    """The value of a literal integer constant, else None."""
    if is_literal(v):
        assert isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp)
        val = v.owner.value
        if isinstance(val, IntegerAttr):
            return val.value.data
    return None


def py_name(hint: str) -> str:
    """A name hint made into a Python identifier the printed program may bind."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
    if not name or name[0].isdigit():
        name = "_" + name
    if keyword.iskeyword(name) or name in RESERVED:
        name += "_"
    return name


def _def_block(v: SSAValue) -> Block | None:
    if isinstance(v, BlockArgument):
        return v.block
    assert isinstance(v, OpResult)
    return v.owner.parent_block()


class FunctionAnalysis:
    """Print-order positions, liveness, variable classes and inlining of one function body."""

    def __init__(self, body: Block):
        self.start: dict[Operation, int] = {}
        self.end: dict[Operation, int] = {}
        self.last_use: dict[SSAValue, int] = {}
        self.use_count: dict[SSAValue, int] = {}
        self.user: dict[SSAValue, Operation] = {}
        self._parent: dict[SSAValue, SSAValue] = {}
        self._hint: dict[SSAValue, str | None] = {}
        self.class_last: dict[SSAValue, int] = {}
        self.in_class: set[SSAValue] = set()
        self.plain_loops: set[scf.ForOp] = set()
        self.rebind: dict[AtOp, list[int]] = {}
        self.inline: set[Operation] = set()
        self._loops: list[scf.ForOp] = []
        self._ats: list[AtOp] = []
        self._blocks: list[Block] = []
        self._n = 0
        self._number(body)
        self._scan_uses()
        for loop in reversed(self._loops):
            self._decide_loop(loop)
        for at in self._ats:
            self._decide_at(at)
        self._finish_classes()
        for block in self._blocks:
            self._decide_inline(block)

    # ---- positions and liveness ------------------------------------------------

    def _number(self, block: Block) -> None:
        self._blocks.append(block)
        for op in block.ops:
            self.start[op] = self._n
            self._n += 1
            if isinstance(op, scf.ForOp):
                self._loops.append(op)
            elif isinstance(op, AtOp):
                self._ats.append(op)
            for region in op.regions:
                for b in region.blocks:
                    self._number(b)
            self.end[op] = self._n - 1

    def _scan_uses(self) -> None:
        for op in self.start:
            for v in op.operands:
                self.use_count[v] = self.use_count.get(v, 0) + 1
                self.user[v] = op
                p = self._use_pos(op, v)
                if p > self.last_use.get(v, -1):
                    self.last_use[v] = p

    def _use_pos(self, user: Operation, v: SSAValue) -> int:
        """Where ``user`` reads ``v``; a read inside a loop that ``v`` is defined
        outside of lasts until the end of that loop."""
        block = _def_block(v)
        pos = 2 * self.start[user]
        a: Operation | None = user
        while a is not None and a.parent_block() is not block:
            a = a.parent_op()
            if isinstance(a, LOOP_OPS) and a in self.end:
                pos = max(pos, 2 * self.end[a] + 1)
        return pos

    def def_pos(self, v: SSAValue) -> int:
        """Where the printed program binds ``v``'s variable."""
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            return 2 * self.start[owner] if owner in self.start else -1
        assert isinstance(v, OpResult)
        op = v.owner
        return 2 * (self.end[op] if op.regions else self.start[op])

    # ---- variable classes (union-find) ------------------------------------------

    def find(self, v: SSAValue) -> SSAValue:
        root = v
        while (p := self._parent.get(root)) is not None:
            root = p
        while v is not root:
            nxt = self._parent[v]
            self._parent[v] = root
            v = nxt
        return root

    def class_hint(self, v: SSAValue) -> str | None:
        r = self.find(v)
        return self._hint[r] if r in self._hint else r.name_hint

    def _union(self, members: list[SSAValue], hint: str) -> None:
        roots = []
        for m in members:
            r = self.find(m)
            if r not in roots:
                roots.append(r)
        for r in roots[1:]:
            self._parent[r] = roots[0]
        self._hint[roots[0]] = hint
        self.in_class.update(members)

    def _nameable(self, v: SSAValue) -> bool:
        return not is_literal(v) and not (isinstance(v, OpResult) and isinstance(v.owner, TileAllocOp))

    def _common_hint(self, members: list[SSAValue]) -> str | None:
        hints = {h for m in members if (h := self.class_hint(m))}
        return hints.pop() if len(hints) == 1 else None

    def _decide_loop(self, loop: scf.ForOp) -> None:
        if not loop.iter_args:
            return
        body = loop.body.block
        term = body.last_op
        assert term is not None
        pos = 2 * self.start[loop]
        groups: list[tuple[list[SSAValue], str]] = []
        seen: set[SSAValue] = set()
        for i, init in enumerate(loop.iter_args):
            ia, y, r = body.args[i + 1], term.operands[i], loop.res[i]
            members = [init, ia, y, r]
            hint = self._common_hint(members)
            ok = (
                hint is not None
                and all(self._nameable(m) for m in members)
                and init not in seen
                and y not in seen
                and (y is ia or (isinstance(y, OpResult) and y.owner.parent_block() is body))
                and self.last_use.get(init, -1) <= pos
                and (y is ia or self.last_use.get(ia, -1) <= 2 * self.start[y.owner])  # type: ignore[union-attr]
            )
            if not ok:
                return
            seen.update((init, y))
            groups.append((members, hint))  # type: ignore[arg-type]
        for members, hint in groups:
            self._union(members, hint)
        self.plain_loops.add(loop)

    def _decide_at(self, at: AtOp) -> None:
        term = at.block.last_op
        assert term is not None
        rebind: list[int] = []
        seen: set[SSAValue] = set()
        for i, (y, r) in enumerate(zip(term.operands, at.res, strict=True)):
            hy, hr = self.class_hint(y), self.class_hint(r)
            if y in seen or not self._nameable(y) or (hy and hr and hy != hr):
                rebind.append(i)
                continue
            seen.add(y)
            if hy or hr:
                self._union([y, r], hy or hr)  # type: ignore[arg-type]
            else:
                self._parent[self.find(r)] = self.find(y)
                self.in_class.update((y, r))
        self.rebind[at] = rebind

    def _finish_classes(self) -> None:
        for v, p in self.last_use.items():
            r = self.find(v)
            if p > self.class_last.get(r, -1):
                self.class_last[r] = p

    def live_after(self, rep: SSAValue, pos: int) -> bool:
        """Whether the variable of class ``rep`` is still read after ``pos``."""
        if isinstance(rep, OpResult) and isinstance(rep.owner, TileAllocOp):
            return True
        return self.class_last.get(rep, -1) > pos

    # ---- inline expressions -----------------------------------------------------

    def _candidate(self, op: Operation) -> bool:
        if len(op.results) != 1 or op.regions or isinstance(op, (arith.ConstantOp, TileAllocOp)):
            return False
        v = op.results[0]
        if v.name_hint or v in self.in_class or self.use_count.get(v, 0) != 1:
            return False
        return self.user[v].parent_block() is op.parent_block()

    def _decide_inline(self, block: Block) -> None:
        """Reconstruct expression trees: an unnamed single-use value prints inside its
        user only if evaluating it there keeps the block's order of evaluation."""
        pending: list[Operation] = []
        for op in block.ops:
            if isinstance(op, arith.ConstantOp) and not op.result.name_hint:
                continue  # literals print nothing and are pure
            cands = [
                v.owner
                for v in printed_operands(op)
                if isinstance(v, OpResult) and v.owner in self.inline and self.user.get(v) is op
            ]
            k = len(cands)
            if k and pending[-k:] == cands:
                del pending[-k:]
            elif k:
                self.inline.difference_update(pending)
                self.inline.difference_update(cands)
                pending = []
            if self._candidate(op):
                self.inline.add(op)
                pending.append(op)
            else:
                self.inline.difference_update(pending)
                pending = []
        self.inline.difference_update(pending)
