"""Loop replay: an ``scf.for`` body's sync and accounting worked out once and repeated arithmetically.

A loop body whose steps are only data ops (numerics, then accounting), static
``set_flag``/``wait_flag`` steps (accounting only) and pure steps (index math,
views, tile allocation) does the same accounting every iteration once the core's queues and
clocks are in a steady state. The model is shift-invariant:

- the timeline is max-plus: an instruction starts at the maximum of queue ends
  and signal times and ends its cost later, so when every queue and pending
  signal the body touches moved by the same ``c`` cycles over one iteration
  (and nothing else changed), the next iteration with the same instructions
  moves them by ``c`` again and its records are the last iteration's, ``c``
  cycles later (:class:`TimelinePeriod`);
- the race detector compares ticks of one pipe with clock entries of that pipe
  only, ticks once per instruction and joins clocks with ``max``: when every
  clock row of the body's pipes moved by ``d[p]`` in each pipe ``p``'s column,
  every shadow field the iteration wrote moved by ``d`` of its pipe (and the
  access ids by the iteration's access count), and the iteration reported
  nothing, the next iteration makes the same comparisons with the same outcome
  (:class:`RacePeriod`). A shadow field left as it was is only compared against
  clocks that grow, so an access that did not race keeps not racing.

:class:`LoopReplay` runs the first iterations of a loop of :data:`MIN_TRIPS`
or more as usual, marking the state between them, until one iteration is such
a period (at most :data:`LEARN_ITERATIONS`). The rest then run their numerics
and pure steps only; each data op's cost and tiles are checked against that
iteration's (the same tiles or tiles at the same bytes, the same
``(cycles, kind, detail)``), and the records, flag pairs,
clocks and shadow ticks of the replayed iterations are written in one go when
the loop ends. A data op that differs (another tile, another valid shape)
ends the replay there: the replayed iterations are written, the current one's
skipped accounting is done in program order, and the loop goes on as usual.
Results, records, cycles, races and problems are those of running every
iteration (the tests compare both).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import add, getitem, sub
from typing import TYPE_CHECKING, Any

from pypto.ptoas.dialect.attrs import Pipe

from .races import RaceDetector, _Seg
from .timing import Timeline

if TYPE_CHECKING:
    from xdsl.ir import Operation

    from .core import CoreState

ENABLED = True
"""Whether loops are replayed (off: every iteration runs every step; for tests comparing both)."""

LEARN_ITERATIONS = 4
"""Iterations run as usual while looking for a period before giving up on a loop."""

MIN_TRIPS = 32
"""Loops with fewer iterations run as usual (as one fused loop, :mod:`.fused`): finding the period takes
two or three iterations and writing the replayed ones back costs about as much as accounting two, and a
fused trip's accounting is cheap, so shorter loops do not gain (measured on
``benchmarks/interpreter_overhead.py``'s kernel against the fused loop: replay 12% slower at 12 trips,
4% at 24, break-even at 28-32, 4% faster at 48 and 64)."""

Key = tuple[Pipe, Pipe, int]
Env = list[Any]
Measured = tuple[Any, Sequence[Any], Sequence[Any]]
"""A data op's ((cycles, kind, detail), input tiles, output tiles)."""


# -- the timeline --------------------------------------------------------------------------------

TimelineMark = tuple[int, int, int, dict[Pipe, int], dict[Key, tuple[tuple[int, int], ...]]]
"""(rows, flag pairs, problems, queue ends, pending signals) of a :class:`Timeline` at one moment."""


@dataclass(slots=True)
class TimelinePeriod:
    """One iteration as a shift of the timeline: its rows ``[lo, hi)`` and flag pairs ``[lo, hi)``; the
    body's queues and flags moved ``shift`` cycles (and the signals' rows ``rows[1] - rows[0]`` on)."""

    shift: int
    rows: tuple[int, int]
    pairs: tuple[int, int]
    pipes: frozenset[Pipe]
    keys: frozenset[Key]


def timeline_mark(tl: Timeline) -> TimelineMark:
    """What :func:`timeline_period` compares."""
    pending = {k: tuple(v) for k, v in tl.signals.items() if v}
    return len(tl.rows), len(tl.flag_pairs), len(tl.problems), dict(tl.free), pending


def _moved(before: tuple[tuple[int, int], ...], after: tuple[tuple[int, int], ...], c: int, r: int) -> bool:
    return len(before) == len(after) and all(
        fa - fb == c and ra - rb == r for (fb, rb), (fa, ra) in zip(before, after, strict=True)
    )


def timeline_period(
    before: TimelineMark, after: TimelineMark, pipes: frozenset[Pipe], keys: frozenset[Key]
) -> TimelinePeriod | None:
    """The period from ``before`` to ``after`` (marks around one iteration whose instructions run on
    ``pipes`` and use the flags ``keys``), or None: a queue of ``pipes`` not started before it or moved by
    another amount than the others, a flag's pending signals not moved with them, a queue or flag outside
    the body changed, or a new problem."""
    rows0, pairs0, problems0, free0, sig0 = before
    rows1, pairs1, problems1, free1, sig1 = after
    if problems1 != problems0 or len(free0) != len(free1):
        return None
    c = None
    for p, end in free1.items():
        start = free0.get(p)
        if start is None:
            return None
        if p in pipes:
            if c is None:
                c = end - start
            elif end - start != c:
                return None
        elif end != start:
            return None
    if c is None or len(pipes) > len(free1) or not all(p in free0 for p in pipes):
        return None
    if sig0 or sig1:
        r = rows1 - rows0
        for k in sig0.keys() | sig1.keys():
            b, a = sig0.get(k, ()), sig1.get(k, ())
            if not (_moved(b, a, c, r) if k in keys else a == b):
                return None
    return TimelinePeriod(c, (rows0, rows1), (pairs0, pairs1), pipes, keys)


def timeline_repeat(tl: Timeline, period: TimelinePeriod, times: int) -> None:
    """``times`` more iterations of ``period`` right after it (each ``shift`` cycles after the last)."""
    c = period.shift
    lo, hi = period.rows
    r = hi - lo
    rows, pairs = tl.rows, tl.flag_pairs
    template = rows[lo:hi]
    if c:
        rows.extend(
            [
                (op, instr, pipe, hw, start + off, end + off, kind, site, detail)
                for off in range(c, c * times + 1, c)
                for op, instr, pipe, hw, start, end, kind, site, detail in template
            ]
        )
    else:
        rows.extend(template * times)
    flagged = pairs[period.pairs[0] : period.pairs[1]]
    if flagged:
        pairs.extend([(s + n, w + n) for n in range(r, r * times + 1, r) for s, w in flagged])
    total = times * c
    free, signals = tl.free, tl.signals
    for p in period.pipes:
        free[p] += total
    for k in period.keys:
        pending = signals.get(k)
        if pending:
            signals[k] = deque([(f + total, i + times * r) for f, i in pending])


# -- the race detector ---------------------------------------------------------------------------

SegState = tuple[_Seg, int, int, int, int, int, tuple[tuple[int, tuple[int, int]], ...]]
RaceMark = tuple[int, int, dict[Pipe, int], list[list[int]], dict[Key, list[list[int]]], list[SegState]]
"""(accesses, reports, pipe indices, clocks, pending flag snapshots, shadow segments) at one moment."""


@dataclass(slots=True)
class RacePeriod:
    """One iteration as a shift of the race detector: ``ticks[p]`` per pipe index, ``accesses`` access ids,
    the clock rows and flags of the body, and the shadow fields it moved."""

    ticks: list[int]
    accesses: tuple[int, int]
    rows: list[int]
    keys: frozenset[Key]
    writes: list[_Seg]
    reads: list[tuple[_Seg, int]]


def race_mark(rd: RaceDetector) -> RaceMark:
    """What :func:`race_period` compares."""
    segs = [
        (s, s.lo, s.hi, s.w_pipe, s.w_tick, s.w_who, tuple(s.reads.items()))
        for space in rd.shadows.values()
        for s in space
    ]
    flags = {k: [snap[:] for snap in v] for k, v in rd.flags.items() if v}
    return len(rd.who), sum(rd.counts.values()), dict(rd.index), [row[:] for row in rd.clock], flags, segs


def race_period(before: RaceMark, after: RaceMark, pipes: frozenset[Pipe], keys: frozenset[Key]) -> RacePeriod | None:
    """The period from ``before`` to ``after`` (marks around one iteration on ``pipes`` with the flags
    ``keys``), or None (see the module docstring)."""
    who0, reports0, index0, clock0, flags0, segs0 = before
    who1, reports1, index1, clock1, flags1, segs1 = after
    if reports1 != reports0 or index0 != index1 or len(segs0) != len(segs1):
        return None
    rows: list[int] = []
    for p in pipes:
        q = index0.get(p)
        if q is None:
            return None
        rows.append(q)
    width = range(len(clock0))
    ticks = list(map(sub, map(getitem, clock1, width), map(getitem, clock0, width)))
    for q in width:
        row0, row1 = clock0[q], clock1[q]
        if q in rows:
            if list(map(sub, row1, row0)) != ticks:
                return None
        elif row0 != row1:
            return None
    if flags0 or flags1:
        for k in flags0.keys() | flags1.keys():
            b, a = flags0.get(k, []), flags1.get(k, [])
            if len(a) != len(b) or (a != b and k not in keys):
                return None
            if k in keys and any(list(map(sub, sa, sb)) != ticks for sb, sa in zip(b, a, strict=True)):
                return None
    n = who1 - who0
    writes: list[_Seg] = []
    reads: list[tuple[_Seg, int]] = []
    for i in range(len(segs0)):
        s, lo, hi, wp, wt, ww, rd0 = segs0[i]
        s1, lo1, hi1, wp1, wt1, ww1, rd1 = segs1[i]
        if s is not s1 or lo != lo1 or hi != hi1 or wp != wp1:
            return None
        if wt1 != wt or ww1 != ww:
            if wt1 - wt != ticks[wp] or ww1 - ww != n:
                return None
            writes.append(s)
        if rd0 != rd1:
            r0 = dict(rd0)
            if len(r0) != len(rd1):
                return None
            for p, (t1, w1) in rd1:
                got = r0.get(p)
                if got is None:
                    return None
                t0, w0 = got
                if t1 != t0 or w1 != w0:
                    if t1 - t0 != ticks[p] or w1 - w0 != n:
                        return None
                    reads.append((s, p))
    return RacePeriod(ticks, (who0, who1), rows, keys, writes, reads)


def race_repeat(rd: RaceDetector, period: RacePeriod, times: int) -> None:
    """``times`` more iterations of ``period`` right after it."""
    adds = [t * times for t in period.ticks]
    lo, hi = period.accesses
    n = (hi - lo) * times
    rd.who.extend(rd.who[lo:hi] * times)
    clock = rd.clock
    for q in period.rows:
        clock[q] = list(map(add, clock[q], adds))
    for k in period.keys:
        pending = rd.flags.get(k)
        if pending:
            rd.flags[k] = deque(list(map(add, snap, adds)) for snap in pending)
    for s in period.writes:
        s.w_tick += adds[s.w_pipe]
        s.w_who += n
    for s, p in period.reads:
        t, w = s.reads[p]
        s.reads[p] = (t + adds[p], w + n)


# -- the loop ------------------------------------------------------------------------------------

PURE, SYNC, DATA = "pure", "sync", "data"
"""Step roles: runs in every iteration and does no accounting; only accounts (a static flag step); a
data op (numerics, then accounting)."""


@dataclass(frozen=True)
class Role:
    """What a loop body step is to a replay: ``kind`` (:data:`PURE`, :data:`SYNC`, :data:`DATA`) and the
    pipes and flags it accounts on. A data op has ``probe(env, core)``: what its accounting needs
    (:data:`Measured`) for the operands in ``env``; ``check(env, core, want)``: its numerics, then None
    when that is ``want`` (the same tiles or tiles at the same bytes, the same cost), else the probe; ``account(core, measured)``:
    the accounting."""

    kind: str
    pipes: frozenset[Pipe] = frozenset()
    keys: frozenset[Key] = frozenset()
    check: Callable[[Env, CoreState, Measured], Measured | None] | None = None
    probe: Callable[[Env, CoreState], Measured] | None = None
    account: Callable[[CoreState, Measured], None] | None = None


Located = Callable[["CoreState", "Operation", Exception], Exception]


@dataclass(frozen=True)
class LoopReplay:
    """The replay of one loop body: the block's ``run``, its steps, their ops (for errors) and roles."""

    body: Callable[[Env, CoreState], None]
    steps: tuple[Callable[[Env, CoreState], None], ...]
    ops: tuple[Operation, ...]
    roles: tuple[Role, ...]
    pipes: frozenset[Pipe]
    keys: frozenset[Key]
    located: Located

    @staticmethod
    def of(
        body: Callable[[Env, CoreState], None],
        steps: Sequence[Callable[[Env, CoreState], None]],
        ops: Sequence[Operation],
        located: Located,
    ) -> LoopReplay | None:
        """The replay of a body (``body(env, core)`` runs it) whose steps all have a :class:`Role`
        (``step.role``) and account something, else None."""
        roles = [getattr(s, "role", None) for s in steps]
        if not roles or any(r is None for r in roles) or all(r.kind == PURE for r in roles):  # type: ignore[union-attr]
            return None
        pipes = frozenset().union(*(r.pipes for r in roles))  # type: ignore[union-attr]
        keys = frozenset().union(*(r.keys for r in roles))  # type: ignore[union-attr]
        return LoopReplay(body, tuple(steps), tuple(ops), tuple(roles), pipes, keys, located)  # type: ignore[arg-type]

    def run(self, env: Env, core: CoreState, iv: int, values: range) -> None:
        """The loop: ``env[iv]`` takes each of ``values`` and the body runs (replayed once periodic)."""
        tl, rd = core.timeline, core.races
        body, pipes, keys = self.body, self.pipes, self.keys
        it = iter(values)
        t_before = timeline_mark(tl)
        r_before = self._race_mark(tl, rd)
        for _ in range(min(LEARN_ITERATIONS, len(values) - 1)):
            env[iv] = next(it)
            body(env, core)
            t_after = timeline_mark(tl)
            r_after = self._race_mark(tl, rd)
            t_period = timeline_period(t_before, t_after, pipes, keys)
            if t_period is not None and r_before is not None:
                r_period = race_period(r_before, r_after, pipes, keys) if rd is not None else None  # type: ignore[arg-type]
                if rd is None or r_period is not None:
                    template = [r.probe(env, core) for r in self.roles if r.kind == DATA]  # type: ignore[misc]
                    self._replay(env, core, iv, it, (t_period, r_period), template)
                    return
            t_before, r_before = t_after, r_after
        for i in it:
            env[iv] = i
            body(env, core)

    def _race_mark(self, tl: Timeline, rd: RaceDetector | None) -> RaceMark | None | bool:
        """:func:`race_mark` of ``rd`` (True when there is no race detector), or None while one of the body's
        pipes has not started: the timeline is not periodic over the next iteration then (a queue of the body
        not started before it), so no race period is looked for and the mark is not taken."""
        if rd is None:
            return True
        free = tl.free
        return race_mark(rd) if all(p in free for p in self.pipes) else None

    def _replay(
        self,
        env: Env,
        core: CoreState,
        iv: int,
        it: Any,
        period: tuple[TimelinePeriod, RacePeriod | None],
        template: list[Any],
    ) -> None:
        plan = [
            (j, step, role.kind, role.check)
            for j, (step, role) in enumerate(zip(self.steps, self.roles, strict=True))
            if role.kind != SYNC
        ]
        done = j = n = 0  # iterations replayed; the current step; data ops checked in this iteration
        got: Any = None
        try:
            for i in it:
                env[iv] = i
                n = 0
                for j, step, kind, check in plan:  # noqa: B007 -- j locates an error
                    if kind is PURE:
                        step(env, core)
                        continue
                    got = check(env, core, template[n])  # type: ignore[misc]
                    if got is not None:
                        break
                    n += 1
                else:
                    done += 1
                    continue
                break  # a data op differs from the template: account for real from here on
            else:
                self._flush(core, period, done, 0, template, 0, None)
                return
        except Exception as e:
            self._flush(core, period, done, j, template, n, None)
            err = self.located(core, self.ops[j], e)
            if err is e:
                raise
            raise err from e
        self._flush(core, period, done, j, template, n, got)
        self._finish(env, core, j + 1)
        for i in it:
            env[iv] = i
            self.body(env, core)

    def _flush(
        self,
        core: CoreState,
        period: tuple[TimelinePeriod, RacePeriod | None],
        done: int,
        upto: int,
        template: list[Any],
        n: int,
        last: Any,
    ) -> None:
        """Write the ``done`` replayed iterations, then the accounting of the current one's steps before
        ``upto`` (its first ``n`` data ops measured as ``template``) and of ``last`` (step ``upto``'s
        measurement, if any)."""
        if done:
            timeline_repeat(core.timeline, period[0], done)
            if period[1] is not None and core.races is not None:
                race_repeat(core.races, period[1], done)
        k = 0
        for step, role in zip(self.steps[:upto], self.roles[:upto], strict=True):
            if role.kind == SYNC:
                step(None, core)  # type: ignore[arg-type]
            elif role.kind == DATA:
                role.account(core, template[k])  # type: ignore[misc]
                k += 1
        if last is not None:
            self.roles[upto].account(core, last)  # type: ignore[misc]

    def _finish(self, env: Env, core: CoreState, start: int) -> None:
        """The current iteration's steps from ``start`` on, as usual."""
        j = start
        try:
            for j in range(start, len(self.steps)):
                self.steps[j](env, core)
        except Exception as e:
            _reraise(self.located(core, self.ops[j], e), e)


def _reraise(err: Exception, cause: Exception) -> None:
    if err is cause:
        raise cause
    raise err from cause
