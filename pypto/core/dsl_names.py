"""Naming analysis for the DSL printer: what prints inline, what shares a name.

The function's :class:`~pypto.core.analysis.liveness.Liveness` numbers its ops
in print order and gives each SSA value's last use; one scan records, per
value, its use count and its single user; a second pass decides

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

import functools
import keyword

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, OpResult, SSAValue

from pypto.core.analysis.liveness import Liveness, Use
from pypto.dialects.op_base import ArgKind, PLOp
from pypto.dialects.program import AtOp
from pypto.dialects.tile_ops import TileAllocOp

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


@functools.lru_cache(maxsize=4096)
def py_name(hint: str) -> str:
    """A name hint made into a Python identifier the printed program may bind (a pure function of
    the hint: cached, a printer asks for the same few hints many times)."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
    if not name or name[0].isdigit():
        name = "_" + name
    if keyword.iskeyword(name) or name in RESERVED:
        name += "_"
    return name


class FunctionAnalysis:
    """Print-order positions, liveness, variable classes and inlining of one function body."""

    def __init__(self, body: Block):
        root = body.parent_op()
        assert root is not None, "a function body"
        self.liveness = Liveness(root)
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
        self._scan_uses()
        ops = list(self.liveness.ops())
        for loop in reversed([op for op in ops if isinstance(op, scf.ForOp)]):
            self._decide_loop(loop)
        for at in [op for op in ops if isinstance(op, AtOp)]:
            self._decide_at(at)
        self._finish_classes()
        for block in self.liveness.blocks():
            self._decide_inline(block)

    # ---- positions and liveness ------------------------------------------------

    def _scan_uses(self) -> None:
        for op in self.liveness.ops():
            for v in op.operands:
                self.use_count[v] = self.use_count.get(v, 0) + 1
                self.user[v] = op
        for v in self.use_count:
            self.last_use[v] = max(self._use_pos(use) for use in self.liveness.uses(v))

    def _use_pos(self, use: Use) -> int:
        """Where a use reads its value; a read inside a loop that the value is
        defined outside of lasts until just after the end of that loop."""
        lv = self.liveness
        return max([2 * lv.index(use.user), *(2 * lv.end_index(loop) + 1 for loop in use.loops)])

    def def_pos(self, v: SSAValue) -> int:
        """Where the printed program binds ``v``'s variable."""
        d = self.liveness.definition(v)
        return -1 if d < 0 else 2 * d

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
        pos = 2 * self.liveness.index(loop)
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
                and (y is ia or self.last_use.get(ia, -1) <= 2 * self.liveness.index(y.owner))  # type: ignore[union-attr]
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
