"""Fused blocks: one generated Python function per straight-line block and per plain loop.

The compiled engine (:mod:`.compiled`) runs a block as one call per step. A step that describes itself
(``step.inline = (kind, params)``: a single-tile data op, a static ``set_flag`` / ``wait_flag``, a
handshake pair, a 2-D ``partition_view``, an index ``addi``/``subi``/``muli``) is written out here as
source text instead, the same statements its step runs, in one function generated (``compile``/``exec``)
once per compiled block, on its second execution (:data:`HOT`), so a trip of a loop costs no step calls
and no attribute lookups of the timeline's and the race detector's containers: those are read into
locals once (``tl.free.get``, ``tl.rows.append``, ``races.clock``, ...), and so are each pipe's queue end
and race-detector index (:func:`_pipe_locals`).

What the locals assume, and where it is proved or re-established:

- the core's timeline, race detector, interpreter and their containers (queue ends, rows, pending
  signals, flag pairs, clocks, flags, access list, exact segments) are the same objects for the whole
  block: the inlined statements and the fall-back calls they make (``RaceDetector.access``,
  ``handshake``, ``set_flag``, ``wait_flag``, ``Timeline.wait``: first use of a pipe or flag, a wait with
  no signal, a tile not at a known segment) only change their contents. Any other step (a barrier,
  which replaces the clocks; a nested loop; an op with no template) is called as it is, and the locals
  are read again before the next inlined step;
- the values held are the containers, the pipes' race-detector indices (never changed once given) and
  the pipes' queue ends, written through (every write of a queue end writes the timeline's too, and the
  locals are read again after any call that may write one); clocks, signals and shadow memory are read
  where the step reads them, so every inlined statement sees the state as the step would.

Each template is its step's body (``CoreState.flag_step`` / ``flag_pair_step``, ``_dps``' ``step_of`` with
``RaceDetector.instruction_1``, ``partition_view``'s ``value_step`` with ``TensorView.partition_2d``,
``compiled._arith_step``) written out: records, cycles, races and errors are those of calling the steps
(``test/python/test_fused.py`` compares both on the benchmark's kernel and every corpus kernel). An error is
located at the op that raised it, as :meth:`CompiledBlock.run <.compiled.CompiledBlock.run>` does.
"""

from __future__ import annotations

import operator
import re
from collections import deque
from collections.abc import Callable, Sequence
from itertools import count
from typing import Any

from .memory import PartitionView

ENABLED = True
"""Whether blocks are fused (off: one call per step; for tests comparing both)."""

HOT = 2
"""A block or loop is generated on its ``HOT``-th execution (:func:`lazy`): compiling the source costs ~3 ms
for the benchmark's loop, more than a one-off run of it gains, so a block run once runs its steps as they
are."""

Located = Callable[[Any, Any, Exception], Exception]
"""``located(core, op, error)``: the error raised by ``op``'s step, located."""

_HOIST = """\
tl = core.timeline
free = tl.free
free_get = free.get
rows = tl.rows
rows_append = rows.append
signals = tl.signals
signals_get = signals.get
pairs_append = tl.flag_pairs.append
set_cycles = core.set_flag_cycles
wait_cycles = core.wait_flag_cycles
interp = core.interp
races = core.races
if races is not None:
    r_index_get = races.index.get
    r_clock = races.clock
    r_flags_get = races.flags.get
    r_who = races.who
    r_who_append = r_who.append
    r_exact_get = races._exact.get
"""

# -- templates: each is the body of the step named, with $name for that step's constants ------------

_SET = """\
start = $FQ_src
end = free[$src] = $FQ_src = start + set_cycles
pending = signals_get($key)
if pending is None:
    pending = signals[$key] = deque()
pending.append((end, len(rows)))
rows_append(($name, "SET_FLAG", $set_pipe, $set_hw, start, end, "signal", $op, $detail))
if races is not None:
    q = $QI_src
    if q is None:
        q = $QI_src = r_index_get($src)
    snaps = r_flags_get($key)
    if q is None or snaps is None:
        races.set_flag($key)
    else:
        snaps.append(r_clock[q][:])
"""

_WAIT = """\
pending = signals_get($key)
if not pending:
    tl.wait($name, $key, wait_cycles, $op)
    $FQ_dst = free_get($dst, 0)
    if races is not None:
        races.wait_flag($key)
else:
    start = $FQ_dst
    fired, signal_row = pending.popleft()
    if fired > start:
        start = fired
    pairs_append((signal_row, len(rows)))
    end = free[$dst] = $FQ_dst = start + wait_cycles
    rows_append(($name, "WAIT_FLAG", $wait_pipe, $wait_hw, start, end, "wait", $op, $detail))
    if races is not None:
        snaps = r_flags_get($key)
        d = $QI_dst
        if d is None:
            d = $QI_dst = r_index_get($dst)
        if not snaps or d is None:
            races.wait_flag($key)
        else:
            cd = r_clock[d]
            cq = snaps.popleft()
$JOIN
"""

_PAIR = """\
if signals_get($key):
    $set_step(env, core)
    $wait_step(env, core)
    $FQ_src = free_get($src, 0)
    $FQ_dst = free_get($dst, 0)
else:
    start = $FQ_src
    fired = free[$src] = $FQ_src = start + set_cycles
    n = len(rows)
    rows_append(($set_name, "SET_FLAG", $set_pipe, $set_hw, start, fired, "signal", $set_op, $detail))
    start = $FQ_dst
    if fired > start:
        start = fired
    end = free[$dst] = $FQ_dst = start + wait_cycles
    pairs_append((n, n + 1))
    rows_append(($wait_name, "WAIT_FLAG", $wait_pipe, $wait_hw, start, end, "wait", $wait_op, $detail))
    if races is not None:
        q = $QI_src
        if q is None:
            q = $QI_src = r_index_get($src)
        d = $QI_dst
        if d is None:
            d = $QI_dst = r_index_get($dst)
        if q is None or d is None:
            races.handshake($src, $dst)
        else:
            cd = r_clock[d]
            cq = r_clock[q]
$JOIN
"""

_JOIN = """\
if len(cd) == 3 and len(cq) == 3:
    c0, c1, c2 = cd
    q0, q1, q2 = cq
    r_clock[d] = [c0 if c0 >= q0 else q0, c1 if c1 >= q1 else q1, c2 if c2 >= q2 else q2]
elif len(cd) == 4 and len(cq) == 4:
    c0, c1, c2, c3 = cd
    q0, q1, q2, q3 = cq
    r_clock[d] = [c0 if c0 >= q0 else q0, c1 if c1 >= q1 else q1, c2 if c2 >= q2 else q2, c3 if c3 >= q3 else q3]
else:
    r_clock[d] = list(map(max, cd, cq))
"""
"""``r_clock[d]`` = the element-wise maximum of the clocks ``cd`` and ``cq`` (the join of ``wait_step`` and
``pair``: unrolled for the common widths, a kernel's 3 or 4 pipes)."""


def _join(indent: int) -> str:
    return _indent(_JOIN, indent).rstrip("\n")


_VIEW_2D = """\
view = env[$v]
if len(view.shape) != 2:
    env[$out] = view.partition((env[$a], env[$b]), (env[$c], env[$d]))
elif (base := view._array) is False:
    env[$out] = view.partition_2d(env[$a], env[$b], env[$c], env[$d])
else:
    o0 = env[$a]
    o1 = env[$b]
    n0 = env[$c]
    n1 = env[$d]
    (d0, d1), strides = view.shape, view.strides
    pv = env[$out] = PartitionView(view.ptr, o0 * strides[0] + o1 * strides[1], (n0, n1), strides)
    if base is not None and 0 <= o0 and 0 <= o1 and 0 <= n0 and 0 <= n1 and o0 + n0 <= d0 and o1 + n1 <= d1:
        pv.view = base[o0 : o0 + n0, o1 : o1 + n1]
"""
"""``partition_view`` of a 2-D view: :meth:`TensorView.partition_2d <.memory.TensorView.partition_2d>` written
out once the view's array is known (its first partition computes it)."""

_INDEX = """\
value = env[$a] $SYM env[$b]
if -2147483648 <= value < 2147483648:
    env[$out] = value
else:
    env[$out] = $fn(interp, $op, (env[$a], env[$b]))[0]
"""

_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*"}

_DATA_HEAD = """\
args = $gather(env)
$NUMERICS
$COST
start = $FQ_pipe
end = free[$pipe] = $FQ_pipe = start + cycles
rows_append(($name, $instr, $target_pipe, $pipe_name, start, end, kind, $op, detail))
if races is not None:
    q = $QI_pipe
    if q is None:
        q = $QI_pipe = r_index_get($pipe)
    if q is None:
        races.instruction_1($acc, $READ, $WRITE)
    else:
        seen = r_clock[q]
        seen[q] += 1
        me = len(r_who)
        r_who_append($acc)
        tick = seen[q]
"""

_DATA_READ = """\
        t = $IN0
        lo = t.addr
        hi = lo + t.nbytes
        seg = r_exact_get((t.space, lo))
        if seg is None or seg.hi != hi or lo >= hi:
            races.access(me, t.space, lo, hi, False)
        else:
            p = seg.w_pipe
            if p >= 0 and p != q and seg.w_tick > seen[p]:
                races._report($acc, t.space, lo, hi, seg.w_who, "reads", "written")
            seg.reads[q] = (tick, me)
"""

_DATA_WRITE = """\
        t = $OUT0
        lo = t.addr
        hi = lo + t.nbytes
        seg = r_exact_get((t.space, lo))
        if seg is None or seg.hi != hi or lo >= hi:
            races.access(me, t.space, lo, hi, True)
        else:
            p = seg.w_pipe
            if p >= 0 and p != q and seg.w_tick > seen[p]:
                races._report($acc, t.space, lo, hi, seg.w_who, "writes", "written")
            reads_of = seg.reads
            if reads_of:
                for rp, (rtick, rwho) in reads_of.items():
                    if rp != q and rtick > seen[rp]:
                        races._report($acc, t.space, lo, hi, rwho, "writes", "read")
                reads_of.clear()
            seg.w_pipe, seg.w_tick, seg.w_who = q, tick, me
"""


_COST = "cycles, kind, detail = $cost(core, $INS, $OUTS, args)"

_COST_KEPT = """\
t = $TILE
if t is $L_tile and t.valid is $L_valid:
    cycles, kind, detail = $L_cost
else:
    cycles, kind, detail = $L_cost = $cost(core, $INS, $OUTS, args)
    $L_tile = t
    $L_valid = t.valid"""
"""The cost of a data op whose cost is a function of one tile's facts (``cost.of_tile``), kept in locals while
that tile and its valid shape are the same objects (a tile's element type and space never change; the
cost model is the core's, the same for the whole call): a loop trip over the same tiles makes no cost call."""


_COST_STORE = """\
t = $IN0
pv = args[-1]
if t is $L_tile and pv.__class__ is PartitionView and pv.sizes == $L_sizes and pv.ptr.dtype is $L_dtype:
    cycles, kind, detail = $L_cost
else:
    cycles, kind, detail = $L_cost = $cost(core, $INS, $OUTS, args)
    if pv.__class__ is PartitionView:
        $L_tile = t
        $L_sizes = pv.sizes
        $L_dtype = pv.ptr.dtype
    else:
        $L_tile = None"""
"""A ``tstore``'s cost into a GM window (``cost.of_tile == "store"``: a function of the source tile's space
and the window's sizes and element type, a new ``PartitionView`` each trip), kept as :data:`_COST_KEPT`
keeps one while the tile is the same object and the window's sizes and element type are equal."""


def _cost(p: dict[str, Any]) -> str:
    """The data template's cost line: through :data:`_COST_KEPT` (or :data:`_COST_STORE`) when the cost says
    which operands it reads."""
    of_tile = getattr(p["cost"], "of_tile", None)
    i0, o0 = p["i0"], p["o0"]
    if of_tile == "store" and i0 >= 0:
        return _COST_STORE
    if of_tile == "out" and o0 >= 0:
        return _COST_KEPT.replace("$TILE", "$OUT0")
    if of_tile == "main" and (i0 >= 0 or o0 >= 0):
        return _COST_KEPT.replace("$TILE", "$IN0" if i0 >= 0 else "$OUT0")
    return _COST


def _data(p: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A single-tile data op (``_dps``' ``step_of`` with ``RaceDetector.instruction_1`` inlined)."""
    consts = dict(p)
    if p["compute"] is None:
        numerics = "$handler(core, interp, $op, args)"
    else:
        numerics = "$compute(core, interp, args)"
    i0, o0 = p["i0"], p["o0"]
    text = _DATA_HEAD.replace("$NUMERICS", numerics).replace("$COST", _cost(p))
    text = text.replace("$READ", "$IN0" if i0 >= 0 else "None").replace("$WRITE", "$OUT0" if o0 >= 0 else "None")
    if i0 >= 0:
        text += _DATA_READ
    if o0 >= 0:
        text += _DATA_WRITE
    # the tiles are read from ``args`` where used: no (ins, outs) tuples unless the cost is called
    text = text.replace("$INS", f"(args[{i0}],)" if i0 >= 0 else "()")
    text = text.replace("$OUTS", f"(args[{o0}],)" if o0 >= 0 else "()")
    return text.replace("$IN0", f"args[{i0}]").replace("$OUT0", f"args[{o0}]"), consts


def _numerics(p: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A data op's numerics alone (``_dps``' ``numerics_step_of``: a numerics-only run)."""
    if p["compute"] is None:
        return "$handler(core, interp, $op, $gather(env))\n", p
    return "$compute(core, interp, $gather(env))\n", p


_NUMERICS_HOIST = "interp = core.interp\n"
"""What a numerics-only function reads once (:func:`block_function`'s ``numerics``): no timeline, no race
detector."""


def _index(p: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    sym = _SYMBOLS.get(p["exact"])
    if sym is None:
        return None
    return _INDEX.replace("$SYM", sym), p


TEMPLATES: dict[str, Callable[[dict[str, Any]], tuple[str, dict[str, Any]] | None]] = {
    "set": lambda p: (_SET, p),
    "wait": lambda p: (_WAIT.replace("$JOIN", _join(12)), p),
    "pair": lambda p: (_PAIR.replace("$JOIN", _join(12)), p),
    "view_2d": lambda p: (_VIEW_2D, p),
    "index": _index,
    "data": _data,
    "numerics": _numerics,
}
"""Per ``step.inline`` kind: (source text, its ``$`` constants) of a step, or None (called as it is)."""

_SLOT_PARAMS = frozenset(("v", "a", "b", "c", "d", "out"))
"""Constants written into the text as literals (slot numbers)."""


_PIPE_PARAMS = ("src", "dst", "pipe")
"""Constants naming a pipe: ``$FQ_<param>`` is that pipe's queue end, ``$QI_<param>`` its race-detector index
(locals of the generated function, :func:`_pipe_locals`)."""


def _inline(step: Any, k: int) -> tuple[str, dict[str, Any], set[Any]] | None:
    """The source of step ``k`` with its constants renamed ``_k<k>_<name>``, those constants, and the pipes
    whose locals it uses."""
    desc = getattr(step, "inline", None)
    if desc is None:
        return None
    kind, params = desc
    got = TEMPLATES[kind](params)
    if got is None:
        return None
    text, consts = got
    text = text.replace("$L_", f"l{k}_")
    pipes = set()
    for name in _PIPE_PARAMS:
        if name in consts:
            pipe = consts[name]
            text = text.replace(f"$FQ_{name}", f"fq_{pipe.name}").replace(f"$QI_{name}", f"qi_{pipe.name}")
            pipes.add(pipe)
    names: dict[str, Any] = {}
    for name in sorted(consts, key=len, reverse=True):  # longest first: $set_pipe before $set
        value = consts[name]
        if name in _SLOT_PARAMS:
            text = text.replace(f"${name}", str(int(value)))
        else:
            text = text.replace(f"${name}", f"_k{k}_{name}")
            names[f"_k{k}_{name}"] = value
    if "$" in text:
        raise AssertionError(f"unfilled template for {kind}: {text}")
    return text, names, pipes


def _pipe_locals(pipes: set[Any], namespace: dict[str, Any]) -> str:
    """The hoisted locals of ``pipes``: ``fq_<pipe>``, its queue end (``free.get(pipe, 0)``: every write of
    the queue end writes both, and the locals are read again after any call that may write it), and
    ``qi_<pipe>``, its race-detector index once known (None until then: an index never changes once given)."""
    lines = []
    for pipe in sorted(pipes, key=lambda p: p.name):
        namespace[f"_pipe_{pipe.name}"] = pipe
        lines.append(f"fq_{pipe.name} = free_get(_pipe_{pipe.name}, 0)\nqi_{pipe.name} = None\n")
    return "".join(lines)


def _step_locals(pieces: Sequence[tuple[Any, tuple[str, dict[str, Any], set[Any]] | None]]) -> str:
    """``l<k>_<name> = None`` for each local a step's text keeps across trips (``$L_<name>`` in its template):
    set once per call of the generated function (a cache checking its own key, see :data:`_COST_KEPT`)."""
    names = sorted({m for _, got in pieces if got is not None for m in re.findall(r"\bl\d+_\w+", got[0])})
    return "".join(f"{name} = None\n" for name in names)


_SERIAL = count()


def _indent(text: str, by: int) -> str:
    pad = " " * by
    return "".join(pad + line + "\n" if line else "\n" for line in text.splitlines())


def _body(
    pieces: Sequence[tuple[Any, tuple[str, dict[str, Any], set[Any]] | None]],
    indent: int,
    namespace: dict[str, Any],
    fresh: bool,
    hoist: str,
) -> list[str]:
    """The lines running the steps in order (``at = k`` before step ``k``): each step's :func:`_inline` piece,
    or a call of the step (the locals ``hoist`` reads are read again before the next piece); ``fresh``:
    whether the locals are current where the lines start."""
    lines: list[str] = []
    for k, (step, got) in enumerate(pieces):
        lines.append(_indent(f"at = {k}", indent))
        if got is None:
            namespace[f"_s{k}"] = step
            lines.append(_indent(f"_s{k}(env, core)", indent))
            fresh = False
            continue
        if not fresh:
            lines.append(_indent(hoist, indent))
            fresh = True
        text, names, _ = got
        namespace.update(names)
        lines.append(_indent(text, indent))
    return lines


_HANDLER = """\
    except KernelError:
        raise
    except Exception as e:
        raise located(core, ops[at], e) from e
"""


def _build(
    head: str,
    pre: str,
    steps: Sequence[Any],
    ops: Sequence[Any],
    located: Located,
    error: type,
    numerics: bool,
    loop: bool,
) -> Any:
    namespace: dict[str, Any] = {
        "deque": deque, "ops": tuple(ops), "located": located, "KernelError": error, "PartitionView": PartitionView,
    }  # fmt: skip
    pieces = [(step, _inline(step, k)) for k, step in enumerate(steps)]
    inlined = sum(got is not None for _, got in pieces)
    if not inlined:
        return None
    pipes = set().union(*(got[2] for _, got in pieces if got is not None))
    # a numerics-only form's templates read no timeline (a step with accounting left in it uses pipe locals)
    hoist = (_NUMERICS_HOIST if numerics and not pipes else _HOIST) + _pipe_locals(pipes, namespace)
    # a trip starts where the last one ended: the locals are stale there when the body's last step is called
    fresh = not loop or pieces[-1][1] is not None
    body = _body(pieces, 12 if loop else 8, namespace, fresh, hoist)
    kept = _step_locals(pieces)
    src = head + "    at = 0\n    try:\n" + _indent(hoist + kept, 8) + pre + "".join(body) + _HANDLER
    code = compile(src, f"<fused block {next(_SERIAL)}>", "exec")
    exec(code, namespace)  # noqa: S102 -- our own generated source, from the templates above
    fn = namespace["fused"]
    fn.inlined = inlined  # type: ignore[attr-defined]  # how many steps are written out (tests)
    fn.source = src  # type: ignore[attr-defined]
    return fn


def lazy(build: Callable[[], Any], plain: Callable[..., None]) -> Callable[..., None]:
    """``plain`` for the first ``HOT - 1`` calls, then ``build()``'s function (``plain`` when it gives None)."""
    calls = 0
    fast: Callable[..., None] | None = None

    def run(*args: Any) -> None:
        nonlocal calls, fast
        if fast is None:
            calls += 1
            if calls < HOT:
                return plain(*args)
            fast = build() or plain
        return fast(*args)

    return run


def block_function(
    steps: Sequence[Any], ops: Sequence[Any], located: Located, error: type, numerics: bool = False
) -> Any:
    """``fused(env, core)``: the steps in order, those with a template inlined; None when none has one
    (or fusing is off). ``located`` turns an error of ``ops[k]`` into the one raised; ``error``'s
    instances (already located) pass through. ``numerics``: the steps are a numerics-only form's (their
    templates read no timeline or race detector: only ``core.interp`` is read ahead)."""
    if not ENABLED:
        return None
    return _build("def fused(env, core):\n", "", steps, ops, located, error, numerics, False)


def loop_function(
    steps: Sequence[Any], ops: Sequence[Any], iv: int, located: Located, error: type, numerics: bool = False
) -> Any:
    """``fused(env, core, values)``: ``env[iv]`` takes each of ``values`` and the steps run, as
    :func:`block_function` does (the locals read once for the whole loop); None as there."""
    if not ENABLED:
        return None
    pre = f"        for i in values:\n            env[{iv}] = i\n"
    return _build("def fused(env, core, values):\n", pre, steps, ops, located, error, numerics, True)
