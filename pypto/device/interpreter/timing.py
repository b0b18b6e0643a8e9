"""perf_sim-style timing: per-pipe in-order queues running concurrently, and per-instruction records.

Model (a2a3-costs.md §3, §8; pto-isa ``cm/perf_sim``):

- every pipe is an in-order queue; an instruction starts when the previous one
  of its pipe has ended (and after any wait entry before it in that queue) and
  lasts its cost in cycles; different pipes overlap freely;
- ``set_flag(P, Q, e)`` is a SIGNAL entry in P's queue: it fires when P's
  earlier work is done and is counted on the (P, Q, e) flag;
- ``wait_flag(P, Q, e)`` is a WAIT entry in Q's queue: Q's later work starts
  no earlier than the oldest uncounted signal of (P, Q, e), which it consumes.
  A wait with no signal before it in program order would block forever; it
  is reported in :attr:`Timeline.problems` and does not stall;
- ``pipe_barrier(P)`` is an entry in P's queue (the queue is already in order);
  ``pipe_barrier(PIPE_ALL)`` drains every pipe: later work on any pipe starts
  after all earlier work has ended.

Sync entries last ``target.sync_cycles(instr)`` (0 in perf_sim).

A :class:`InstrRecord` per executed instruction (sync entries included) holds
its pipe, start and end cycle, op, ``.pto`` location and DSL location;
:attr:`Timeline.flag_pairs` pairs each ``wait_flag`` record with the
``set_flag`` record whose signal it consumed (the in-core trace's flow arrows).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from pypto.ptoas.dialect.attrs import Pipe

from .costs import TARGET_PIPE

PIPE_NAMES: dict[Pipe, tuple[str, str]] = {p: (TARGET_PIPE.get(p, p.value), p.value) for p in Pipe}
"""(target pipe name, PTOAS pipe name) per pipe."""


_FLAG_DETAIL: dict[tuple[Pipe, Pipe, int], str] = {}
""":func:`_flag_detail` by flag (a plain dict: looked up once per sync record)."""


def _flag_detail(src: Pipe, dst: Pipe, event: int) -> str:
    """A record's detail for a flag: ``PIPE_MTE2->PIPE_V e0``."""
    got = _FLAG_DETAIL[(src, dst, event)] = f"{src.value}->{dst.value} e{event}"
    return got


def flag_detail(key: tuple[Pipe, Pipe, int]) -> str:
    """The detail of the flag ``key`` = (src, dst, event)'s records (formatted once per flag)."""
    return _FLAG_DETAIL.get(key) or _flag_detail(*key)


@dataclass(slots=True)
class InstrRecord:
    """One executed instruction.

    ``index`` is its position in execution order; ``pipe`` the target's pipe
    name (``VECTOR``...), ``hw_pipe`` the PTOAS one (``PIPE_V``...); ``start``
    and ``end`` are cycles from kernel start (``end - start`` = its cost);
    ``op`` the pto op name, ``instr`` the PTO instruction (``TADD``); ``kind``
    ``compute`` | ``transfer`` | ``signal`` | ``wait`` | ``barrier``;
    ``pto_loc`` ``file:line:col`` in the ``.pto`` text, ``dsl_loc`` the op's
    ``loc(...)`` (``kernels.py:12:5``), each None when unknown; ``detail`` a
    short operand summary (shape/dtype or flag).
    """

    index: int
    op: str
    instr: str
    pipe: str
    hw_pipe: str
    start: int
    end: int
    kind: str
    pto_loc: str | None = None
    dsl_loc: str | None = None
    detail: str = ""

    @property
    def cycles(self) -> int:
        """Duration."""
        return self.end - self.start

    def to_json(self) -> dict[str, object]:
        """A plain dict (for JSON artefacts)."""
        return asdict(self)


Locs = tuple[str | None, str | None]
"""(``.pto`` location, DSL location) of an instruction, each None when unknown."""

Row = tuple[str, str, str, str, int, int, str, object, str]
"""(op, instr, pipe, hw_pipe, start, end, kind, site, detail): an :class:`InstrRecord` before it is built
(records are built when first read: most runs only need the totals). ``site`` is what
:attr:`Timeline.locate` turns into the record's two locations (the op: its locations are formatted only
when a record is read)."""


def _no_locs(site: object) -> Locs:
    return None, None


@dataclass
class Timeline:
    """The per-pipe queues of one core.

    ``locate`` gives a row's ``site`` its (``.pto``, DSL) locations when records are built."""

    free: dict[Pipe, int] = field(default_factory=dict)
    signals: dict[tuple[Pipe, Pipe, int], deque[tuple[int, int]]] = field(default_factory=dict)
    """Per flag, its uncounted signals: (cycle it fired, index of its set_flag record)."""
    rows: list[Row] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    flag_pairs: list[tuple[int, int]] = field(default_factory=list)
    """(set_flag record index, wait_flag record index) per wait that consumed a signal, in wait order."""
    locate: Callable[[object], Locs] = _no_locs
    _records: list[InstrRecord] = field(default_factory=list)

    @property
    def records(self) -> list[InstrRecord]:
        """One :class:`InstrRecord` per executed instruction, in execution order."""
        built = self._records
        if len(built) < len(self.rows):
            locate = self.locate
            built.extend(
                InstrRecord(i, op, instr, pipe, hw, start, end, kind, *locate(site), detail)
                for i, (op, instr, pipe, hw, start, end, kind, site, detail) in enumerate(
                    self.rows[len(built) :], len(built)
                )
            )
        return built

    def pipe_busy(self) -> dict[str, int]:
        """Busy cycles per target pipe name (``VECTOR``...): the sum of its instructions' costs (read from
        the rows: no :class:`InstrRecord` is built)."""
        busy: dict[str, int] = {}
        for row in self.rows:
            busy[row[2]] = busy.get(row[2], 0) + row[5] - row[4]
        return busy

    def issue(
        self,
        op: str,
        instr: str,
        pipe: Pipe,
        cycles: int,
        kind: str,
        site: object,
        detail: str = "",
        not_before: int = 0,
    ) -> int:
        """An instruction on ``pipe`` lasting ``cycles`` (starting no earlier than ``not_before``: a pop
        waits for its push on the other core); returns its end."""
        free = self.free
        start = free.get(pipe, 0)
        if not_before > start:
            start = not_before
        end = free[pipe] = start + cycles
        target_pipe, pipe_name = PIPE_NAMES[pipe]
        self.rows.append((op, instr, target_pipe, pipe_name, start, end, kind, site, detail))
        return end

    def signal(self, op: str, key: tuple[Pipe, Pipe, int], cycles: int, site: object) -> None:
        """``set_flag`` of the flag ``key`` = (src, dst, event): a SIGNAL entry in src's queue."""
        free, rows = self.free, self.rows
        src = key[0]
        start = free.get(src, 0)
        end = free[src] = start + cycles
        pending = self.signals.get(key)
        if pending is None:
            pending = self.signals[key] = deque()
        pending.append((end, len(rows)))
        target_pipe, pipe_name = PIPE_NAMES[src]
        detail = _FLAG_DETAIL.get(key) or _flag_detail(*key)
        rows.append((op, "SET_FLAG", target_pipe, pipe_name, start, end, "signal", site, detail))

    def wait(self, op: str, key: tuple[Pipe, Pipe, int], cycles: int, site: object) -> None:
        """``wait_flag`` of the flag ``key`` = (src, dst, event): a WAIT entry in dst's queue, consuming the
        oldest signal."""
        pending = self.signals.get(key)
        dst = key[1]
        free, rows = self.free, self.rows
        start = free.get(dst, 0)
        if pending:
            fired, signal_row = pending.popleft()
            if fired > start:
                start = fired
            self.flag_pairs.append((signal_row, len(rows)))
        else:
            pto, dsl = self.locate(site)
            where = dsl or pto or "?"
            src, _, event = key
            self.problems.append(
                f"wait_flag[{src.value}, {dst.value}, EVENT_ID{event}] at {where} has no set_flag before it (would block)"
            )
        end = free[dst] = start + cycles
        target_pipe, pipe_name = PIPE_NAMES[dst]
        detail = _FLAG_DETAIL.get(key) or _flag_detail(*key)
        rows.append((op, "WAIT_FLAG", target_pipe, pipe_name, start, end, "wait", site, detail))

    def barrier(self, op: str, pipe: Pipe, cycles: int, site: object) -> None:
        """``pipe_barrier``: an entry in ``pipe``'s queue; ``PIPE_ALL`` drains every pipe."""
        if pipe != Pipe.PIPE_ALL:
            self.issue(op, "PIPE_BARRIER", pipe, cycles, "barrier", site, pipe.value)
            return
        start = max(self.free.values(), default=0)
        end = start + cycles
        for p in list(self.free):
            self.free[p] = end
        self.free[Pipe.PIPE_S] = end
        target_pipe = PIPE_NAMES[Pipe.PIPE_S][0]
        self.rows.append(
            (op, "PIPE_BARRIER", target_pipe, Pipe.PIPE_ALL.value, start, end, "barrier", site, "PIPE_ALL")
        )

    @property
    def cycles(self) -> int:
        """End of the last instruction (every record's end moves its queue's ``free`` to at least it, and
        ``free`` only grows: the latest ``free`` is the last end)."""
        return max(self.free.values(), default=0)

    def per_pipe_busy(self) -> dict[str, int]:
        """Total busy cycles per target pipe name (sync entries count their own cost)."""
        busy: dict[str, int] = {}
        for row in self.rows:
            busy[row[2]] = busy.get(row[2], 0) + row[5] - row[4]
        return busy
