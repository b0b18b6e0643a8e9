"""One rank's view of a multi-chip run: its clock, its transfers and its signals.

Each rank is one process holding one simulated chip. :class:`RankComm` carries
every rank-to-rank interaction over ``torch.distributed``:

- **transfers** (:meth:`RankComm.exchange`): gloo point-to-point messages; each
  message carries the sender's clock, so the receiver's clock becomes
  ``max(own, sender) + hop(bytes)`` (the target's ``npu.link``);
- **signals** (:meth:`notify` / :meth:`wait`) and **window slots** (:meth:`put` /
  :meth:`get`): one-sided, on the run's ``torch.distributed`` store (``add`` is
  atomic), each entry tagged with the simulated time it lands; a wait ends at the
  first time its condition holds over every notify that will reach the cell, once
  the ranks' published clock floors say no earlier one can come (:mod:`.horizon`).

Every wait, receive and store read is bounded by the run's timeout; a failure
is a :class:`DistributedRankError` naming the rank, its task and what it waited for.
Each interaction is also recorded as an event (cycles) for the merged trace
(:mod:`.trace`).
"""

from __future__ import annotations

import json
import struct
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from pypto.dialects.distributed_enums import NotifyOp, WaitCmp
from pypto.target.model import LinkCosts, Target, TargetError

from .horizon import INF, Entry, RankState, first_hold, issue_floors, monotone, settles

_HEADER = struct.Struct("<qq")
"""A window slot's header on the store: the cycle its data landed and its byte count."""

_MESSAGE = struct.Struct("<qqq")
"""The header of an :meth:`RankComm.exchange` message, sent before its payload: the sender's clock (cycles),
the message's number on its (src, dst) pair and the payload's byte count (the receiver checks it before it
takes the payload: gloo aborts a process that receives more bytes than its buffer holds)."""


TILE_ROWS, TILE_COLS = 16, 256
"""The UB tile a collective's local reduce works in (16 x 256 FP32 = 16 KiB)."""


class DistributedRankError(RuntimeError):
    """A rank could not go on: a peer failed, hung past the timeout, or the rank's own code raised."""

    def __init__(self, rank: int, task: str, message: str):
        self.rank, self.task, self.message = rank, task, message
        super().__init__(f"rank {rank}, task '{task}': {message}")


def _as_bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


class RankComm:
    """This rank's clock and its channels to the other ranks (see the module docstring)."""

    def __init__(
        self,
        rank: int,
        world_size: int,
        store: Any,
        link: LinkCosts,
        clock_hz: float,
        timeout_s: float,
        device_id: int | None = None,
        target: Target | None = None,
    ):
        self.rank, self.world_size = rank, world_size
        self.target = target
        self.output_dir: Any = None
        """Where the run's artefacts go (the launch's ``output_dir``), None: none."""
        """The chip (its vector costs price the local reduce of a collective); None: reduces are free."""
        self.device_id = rank if device_id is None else device_id
        self.store, self.link, self.clock_hz, self.timeout_s = store, link, clock_hz, timeout_s
        self.clock = 0
        """This chip's simulated time, in core cycles (every rank starts at 0: the common clock)."""
        self.task = "main"
        self.events: list[dict[str, Any]] = []
        self._sent: dict[int, int] = defaultdict(int)
        self._received: dict[int, int] = defaultdict(int)
        self._puts = 0
        self._notifies = 0
        self.dispatches = 0
        """Chip dispatches so far (:func:`.chip.run_on_chip`: the ``k`` of ``dfx_outputs/rank{r}/d{k}``)."""
        self.signal_stores: dict[str, Any] = {}
        """Signals kept on another store than the dispatch's (a prepared worker's persistent windows: their
        cells, and so their counts, outlive the dispatch)."""
        self.epoch = 0
        """The dispatch this comm serves (a notify is tagged with it: one from an earlier dispatch, still
        counted by a persistent window, landed before this dispatch's clock started)."""
        self.tracked = True
        """This rank's notifies follow the clock it publishes (:mod:`.horizon`); False once it ran a chip whose
        kernel parts can notify out of simulated-time order (more than one part) or registered a deferred
        wait: it then publishes no floor (``inf``) for the rest of the dispatch, and the ranks' waits take its
        notifies as they arrive in host time."""
        self._published: str | None = None
        self._entries: dict[tuple[int, str], list[Entry]] = {}
        """Per signal cell (store, key), the notifies read so far (a notify's entry never changes)."""
        self._started: set[int] = set()
        """The ranks whose state key exists (before, a rank has not started: its floor is 0)."""
        self._states_seen: list[Any] = []
        self._news = 0
        """Notifies and peer states read that were new (a wait polls again soon after one)."""

    # ---- task names, errors, costs -------------------------------------------------

    @contextmanager
    def scope(self, task: str) -> Iterator[None]:
        """Run a block as ``task`` (what an error or a killed rank is reported with)."""
        prev = self.task
        self._set_task(task)
        yield  # an exception leaves the task set: it is what the failure is reported with
        self._set_task(prev)

    def _set_task(self, task: str) -> None:
        self.task = task
        try:
            self.store.set(f"task/{self.rank}", task)
        except Exception:  # noqa: BLE001 - the task name is a courtesy for failure reports
            pass

    def error(self, message: str) -> DistributedRankError:
        """A :class:`DistributedRankError` of this rank's current task."""
        return DistributedRankError(self.rank, self.task, message)

    def hop_cycles(self, nbytes: int) -> int:
        """Cycles of one link hop carrying ``nbytes`` (the target's ``npu.link``)."""
        return self.link.hop_cycles(nbytes, self.clock_hz)

    def _event(self, name: str, cat: str, start: int, end: int, **extra: Any) -> dict[str, Any]:
        ev = {"name": name, "cat": cat, "start": int(start), "end": int(end), "task": self.task, **extra}
        self.events.append(ev)
        return ev

    def reduce_cycles(self, instr: str, dtype: torch.dtype, numel: int) -> int:
        """Cycles of an element-wise ``instr`` (``TADD`` ...) over ``numel`` elements on one vector core,
        in UB tiles of up to 16 x 256 (ASSUMPTION: the received data is already in UB; no load/store cost)."""
        if self.target is None or numel == 0:
            return 0
        dt = str(dtype).removeprefix("torch.")
        try:
            full, rem = divmod(numel, TILE_ROWS * TILE_COLS)
            cycles = full * self.target.compute_cycles(instr, dt, TILE_ROWS, TILE_COLS) if full else 0
            if rem:
                cycles += self.target.compute_cycles(instr, dt, -(-rem // TILE_COLS), TILE_COLS)
        except TargetError:
            return 0
        return cycles

    def compute(self, cycles: int, name: str = "compute") -> None:
        """Advance this chip's clock by ``cycles`` of local work."""
        start = self.clock
        self.clock += int(cycles)
        self._event(name, "compute", start, self.clock)

    # ---- point-to-point transfers (gloo) -------------------------------------------

    def _comm_failure(self, what: str, exc: BaseException) -> DistributedRankError:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "closed by peer" in text or "Connection reset" in text:
            text = "the connection was closed: the peer rank's process died"
        text = text.split("] ", 1)[-1] if text.startswith("[") else text
        return self.error(f"{what} failed within the {self.timeout_s:g} s timeout ({text})")

    def _wait_work(self, work: Any, what: str) -> None:
        try:
            work.wait(timeout=timedelta(seconds=self.timeout_s))
        except RuntimeError as exc:
            raise self._comm_failure(what, exc) from None

    def _post(self, send: bool, buf: torch.Tensor, peer: int, what: str) -> Any:
        try:
            return dist.isend(buf, dst=peer) if send else dist.irecv(buf, src=peer)
        except RuntimeError as exc:
            raise self._comm_failure(what, exc) from None

    def exchange(
        self,
        sends: Sequence[tuple[int, torch.Tensor]],
        recvs: Sequence[tuple[int, torch.Tensor]],
        name: str = "transfer",
    ) -> None:
        """Send each ``(peer, tensor)`` and receive into each ``(peer, out)``, all posted at once (no
        ordering deadlock). The receives are read one after another in the given order: the clock after
        receive ``i`` is ``max(clock, sender's clock) + hop(bytes)``. Sending does not advance the clock."""
        works = []
        for peer, t in sends:
            seq = self._sent[peer]
            self._sent[peer] += 1
            fid = f"x{self.rank}-{peer}-{seq}"
            data = _as_bytes(t).clone()  # the bytes as they are now (a receive may write the same tensor)
            header = torch.frombuffer(bytearray(_MESSAGE.pack(self.clock, seq, data.numel())), dtype=torch.uint8)
            self._event(f"{name} -> r{peer}", "send", self.clock, self.clock + self.hop_cycles(data.numel()),
                        peer=peer, bytes=int(data.numel()), flows=[{"id": fid, "ph": "s"}])
            works.append((peer, self._post(True, header, peer, f"{name}: send to rank {peer}")))
            if data.numel():
                works.append((peer, self._post(True, data, peer, f"{name}: send to rank {peer}")))
        posted = []
        for peer, out in recvs:
            if not out.is_contiguous():
                raise self.error(f"{name}: the receive buffer from rank {peer} is not contiguous")
            head = torch.empty(_MESSAGE.size, dtype=torch.uint8)
            posted.append((peer, out, head, self._post(False, head, peer, f"{name}: receive from rank {peer}")))
        for peer, out, head, work in posted:
            nbytes = out.numel() * out.element_size()
            # about to block: the peers' waits must not wait for this rank's floor (which follows the sender's)
            self.publish(recv=(peer, self._received[peer], self.hop_cycles(nbytes)))
            self._wait_work(work, f"{name}: receive from rank {peer}")
            sender_clock, seq, sent = _MESSAGE.unpack(bytes(head.tolist()))
            expect = self._received[peer]
            self._received[peer] += 1
            if seq != expect:
                raise self.error(f"{name}: message {seq} from rank {peer} arrived, expected message {expect}")
            if sent != nbytes:
                raise self.error(
                    f"{name}: rank {peer} sent {sent} bytes, rank {self.rank} expects {nbytes} "
                    f"(a {list(out.shape)} {str(out.dtype).removeprefix('torch.')} tensor): the ranks' shapes or "
                    "dtypes differ"
                )
            if nbytes:
                payload = out.view(-1).view(torch.uint8)
                self._wait_work(self._post(False, payload, peer, f"{name}: receive from rank {peer}"),
                                f"{name}: receive from rank {peer}")
            start = max(self.clock, sender_clock)
            self.clock = start + self.hop_cycles(nbytes)
            self._event(f"{name} <- r{peer}", "recv", start, self.clock, peer=peer,
                        bytes=int(nbytes), flows=[{"id": f"x{peer}-{self.rank}-{seq}", "ph": "f"}])
        for peer, work in works:
            self._wait_work(work, f"{name}: send to rank {peer}")

    # ---- signals (store, one-sided) -------------------------------------------------

    def _sig_key(self, signal: str, owner: int, slot: int) -> str:
        return f"sig/{signal}/{owner}/{slot}"

    def notify(self, signal: str, peer: int, slot: int = 0, value: int = 1,
               op: NotifyOp | str = NotifyOp.AtomicAdd, delay: int | None = None) -> None:
        """Add ``value`` to (or set) cell ``slot`` of ``peer``'s signal ``signal``; it lands a link hop of
        4 bytes later in simulated time (``delay`` cycles when given: a kernel's notify of its own cell; this
        rank's own cell otherwise: at once, a local store, so its own next wait sees it)."""
        op = NotifyOp(op)
        self._check_peer(peer, "notify")
        key, store = self._sig_key(signal, peer, slot), self.signal_stores.get(signal, self.store)
        if delay is None:
            delay = 0 if peer == self.rank else self.hop_cycles(4)
        landed = self.clock + int(delay)
        fid = f"n{self.rank}-{self.epoch}-{self._notifies}"
        self._notifies += 1
        idx = store.add(key + "/n", 1)
        store.set(f"{key}/e{idx}", json.dumps([landed, int(value), op.value, fid, self.epoch]))
        if op is NotifyOp.AtomicAdd:
            store.add(key, int(value))
        else:
            store.set(key, str(int(value)))
        self.publish()  # a waiter whose condition now holds need not wait for this rank to block
        self._event(f"notify r{peer}[{slot}] {op.value} {value}", "notify", self.clock, self.clock, peer=peer,
                    flows=[{"id": fid, "ph": "s"}], remote={"rank": peer, "ts": landed, "id": fid,
                                                             "name": f"{signal}[{slot}] <- r{self.rank}"})

    def wait(self, signal: str, slot: int = 0, expected: int = 1, cmp: WaitCmp | str = WaitCmp.Ge) -> int:
        """Block until this rank's cell ``slot`` of ``signal`` compares ``cmp`` with ``expected`` (bounded
        by the timeout). The clock moves to the first simulated time the condition holds over every notify
        that will reach the cell (:mod:`.horizon`: once no rank can still send one landing earlier), not
        before the wait started. Returns the cell's value then."""
        cmp = WaitCmp(cmp)
        start, spec = self.clock, (signal, int(slot), int(expected), cmp.value)
        self.publish(spec)
        deadline = time.monotonic() + self.timeout_s
        pause = 0.0005
        while True:
            seen = self._news
            got = self._settled(spec, start)
            if got is not None:
                break
            if time.monotonic() > deadline:
                raise self.wait_timeout(signal, slot, expected, cmp, self.signal_value(signal, slot),
                                        detail=self._behind(spec, start))
            pause = 0.0005 if self._news != seen else min(pause * 2, 0.01)  # something moved: look again soon
            time.sleep(pause)
        first, value, used = got
        self.clock = max(start, int(first))
        self._event(f"wait {signal}[{slot}] {cmp.value} {expected}", "wait", start, self.clock, consumed=used)
        return value

    def _settled(self, spec: tuple[str, int, int, str], start: int) -> tuple[float, int, list[str]] | None:
        """The wait ``spec`` (started at ``start``): its first holding time, value and consumed notifies once
        final, else None. The peers' states are read before the cells' notifies (a floor covers every notify
        its rank posted before publishing it)."""
        signal, slot, expected, cmp = spec
        mine = self._cell_entries(signal, self.rank, slot)
        got = first_hold(mine, expected, cmp, start)
        if got[0] == INF:
            return None
        if got[0] == start and monotone(mine, cmp):  # it held when the wait began: later notifies only add
            return got
        floors, mine = self._floors(spec, start)
        got = first_hold(mine, expected, cmp, start)
        others = [f for r, f in floors.items() if r != self.rank]
        return got if settles(got[0], others, self.hop_cycles(4)) else None

    def _floors(self, spec: tuple[str, int, int, str], start: int) -> tuple[dict[int, float], list[Entry]]:
        """Every rank's issue floor (:func:`.horizon.issue_floors`) from the published states, this rank
        blocked in the wait ``spec`` since ``start``; and this rank's cell's notifies (read with the others',
        after the states)."""
        states = self._states()
        states[self.rank] = RankState(start if self.tracked else INF, spec,
                                      sent=tuple(self._sent[r] for r in range(self.world_size)))
        waiting = [r for r, st in states.items() if st.wait is not None and st.floor != INF and r != self.rank]
        cells = [(states[r].wait[0], r, states[r].wait[1]) for r in waiting]  # type: ignore[index]
        entries = self._cells([(spec[0], self.rank, spec[1]), *cells])
        firsts = {self.rank: first_hold(entries[0], spec[2], spec[3], start)[0]} if self.tracked else {}
        for r, e in zip(waiting, entries[1:], strict=True):
            firsts[r] = first_hold(e, states[r].wait[2], states[r].wait[3], states[r].floor)[0]  # type: ignore[index]
        return issue_floors(states, firsts, self.hop_cycles(4)), entries[0]

    def _behind(self, spec: tuple[str, int, int, str], start: int) -> str:
        """Why a wait whose condition may hold is not final yet: the ranks that could still notify earlier."""
        signal, slot, expected, cmp = spec
        first = first_hold(self._cell_entries(signal, self.rank, slot), expected, cmp, start)[0]
        if first == INF:
            return ""
        late = [r for r, f in self._floors(spec, start)[0].items() if r != self.rank and f + self.hop_cycles(4) < first]
        return f"; it held at cycle {int(first)}, but rank(s) {late} could still notify earlier" if late else ""

    # ---- the published clock floors (:mod:`.horizon`) ---------------------------------

    def _state_key(self, rank: int) -> str:
        return f"floor/{self.epoch}/{rank}"

    def publish(self, wait: tuple[str, int, int, str] | None = None, recv: tuple[int, int, int] | None = None) -> None:
        """Publish this rank's floor (:class:`.horizon.RankState`): its clock (a lower bound on every notify or
        message it issues from now on), with the wait or receive it is blocked in and the messages it sent;
        ``inf`` once untracked. Called before every host blocking point, so a blocked rank does not hold its
        peers' waits back."""
        sent = [self._sent[r] for r in range(self.world_size)]
        text = json.dumps([self.clock, list(wait) if wait else None, list(recv) if recv else None, sent]
                          if self.tracked else [INF, None, None, sent])
        if text != self._published:
            self.store.set(self._state_key(self.rank), text)
            self._published = text

    def stop_tracking(self) -> None:
        """From now on this rank publishes no floor (``inf``: it finished, or its notifies may come out of
        simulated-time order; see :attr:`tracked`)."""
        self.tracked = False
        self.publish()

    def _states(self) -> dict[int, RankState]:
        """The other ranks' published states (one not started yet: floor 0)."""
        peers = [r for r in range(self.world_size) if r != self.rank]
        for r in peers:
            if r not in self._started and self.store.check([self._state_key(r)]):
                self._started.add(r)
        keys = [r for r in peers if r in self._started]
        out = {r: RankState(0) for r in peers}
        if keys:
            raws = self.store.multi_get([self._state_key(r) for r in keys])
            if raws != self._states_seen:
                self._states_seen, self._news = raws, self._news + 1
            for r, raw in zip(keys, raws, strict=True):
                floor, wait, recv, sent = json.loads(bytes(raw))
                out[r] = RankState(floor, tuple(wait) if wait else None, tuple(recv) if recv else None, tuple(sent))
        return out

    def _cell_entries(self, signal: str, owner: int, slot: int) -> list[Entry]:
        """The notifies of ``owner``'s cell ``slot`` of ``signal`` posted so far (one of an earlier dispatch:
        landed at 0)."""
        return self._cells([(signal, owner, slot)])[0]

    def _cells(self, cells: Sequence[tuple[str, int, int]]) -> list[list[Entry]]:
        """:meth:`_cell_entries` of each ``(signal, owner, slot)``: per store, one read of their counts and one
        of their new notifies."""
        out: list[list[Entry]] = [[] for _ in cells]
        groups: dict[int, tuple[Any, list[int]]] = {}
        for k, (signal, _, _) in enumerate(cells):
            store = self.signal_stores.get(signal, self.store)
            groups.setdefault(id(store), (store, []))[1].append(k)
        for store, ks in groups.values():
            keys = [self._sig_key(*cells[k]) for k in ks]
            fresh = [key for key in keys if (id(store), key) not in self._entries]
            for key in fresh:  # makes the count (0) of a cell never notified yet: a multi_get then finds it
                store.add(key + "/n", 0)
                self._entries[(id(store), key)] = []
            counts = [int(c) for c in store.multi_get([key + "/n" for key in keys])]
            seen = [self._entries[(id(store), key)] for key in keys]
            want = [(key, e, i) for key, e, n in zip(keys, seen, counts, strict=True)
                    for i in range(len(e) + 1, n + 1)]  # fmt: skip
            if want:
                self._news += 1
                raws = store.multi_get([f"{key}/e{i}" for key, _, i in want])
                lists = dict(zip(keys, seen, strict=True))
                for (key, _, _), raw in zip(want, raws, strict=True):
                    t, v, op, fid, epoch = json.loads(bytes(raw))
                    lists[key].append((t if epoch == self.epoch else 0, v, op, fid))
            for k, e in zip(ks, seen, strict=True):
                out[k] = e
        return out

    def signal_value(self, signal: str, slot: int = 0) -> int:
        """The value of this rank's cell ``slot`` of ``signal`` now (one store read, never blocking)."""
        key, store = self._sig_key(signal, self.rank, slot), self.signal_stores.get(signal, self.store)
        return int(store.add(key, 0))

    def wait_timeout(self, signal: str, slot: int, expected: int, cmp: WaitCmp | str, have: int,
                     what: str = "wait", detail: str = "") -> DistributedRankError:
        """The error of a wait on ``signal[slot]`` that did not hold within the timeout."""
        return self.error(
            f"{what} on signal '{signal}'[{slot}] for {WaitCmp(cmp).value} {expected} timed out after "
            f"{self.timeout_s:g} s (the cell holds {have}{detail}): a peer rank failed or never notified"
        )

    def landed(self, signal: str, slot: int, expected: int, cmp: WaitCmp | str, start: int,
               name: str = "wait") -> int:
        """The simulated time (not before ``start``) the notifies that satisfy a wait that now holds
        landed, the cell taken as the wait found it (:func:`.horizon.first_hold`, as :meth:`wait`); records the
        wait from ``start`` to it (an event consuming their flows)."""
        entries = self._cell_entries(signal, self.rank, slot)
        first, _, used = first_hold(entries, expected, cmp, start)
        landed = int(first) if first != INF else max([start, *(int(e[0]) for e in entries)])
        self._event(f"{name} {signal}[{slot}] {WaitCmp(cmp).value} {expected}", "wait", start, landed,
                    consumed=used)
        return landed

    # ---- window slots (store, one-sided put / get) ----------------------------------

    def _check_peer(self, peer: int, what: str) -> None:
        if not 0 <= peer < self.world_size:
            raise self.error(f"{what}: peer rank {peer} out of range (world size {self.world_size})")

    def put(self, window: str, peer: int, slot: int, data: torch.Tensor) -> None:
        """Write ``data`` into slot ``slot`` of ``peer``'s window ``window``; the put completes (this
        rank's clock advances) when the data has landed: one hop later."""
        self._check_peer(peer, "put")
        raw = _as_bytes(data)
        landed = self.clock + self.hop_cycles(raw.numel())
        fid = f"p{self.rank}-{self._puts}"
        self._puts += 1
        self.store.set(f"win/{window}/{peer}/{slot}", _HEADER.pack(landed, raw.numel()) + bytes(raw.numpy()))
        self._event(f"put {window}[{slot}] -> r{peer}", "put", self.clock, landed, peer=peer, bytes=int(raw.numel()),
                    flows=[{"id": fid, "ph": "s"}],
                    remote={"rank": peer, "ts": landed, "id": fid, "name": f"{window}[{slot}] <- r{self.rank}"})
        self.clock = landed

    def get(self, window: str, peer: int, slot: int, out: torch.Tensor) -> torch.Tensor:
        """Read slot ``slot`` of ``peer``'s window into ``out`` (waits, bounded, until it was written).
        A remote read costs a request latency and a data hop after the data landed; a local one only
        waits until it landed."""
        self._check_peer(peer, "get")
        key = f"win/{window}/{peer}/{slot}"
        self.publish()  # may block: see exchange
        try:
            self.store.wait([key], timedelta(seconds=self.timeout_s))
            blob = self.store.get(key)
        except Exception as exc:  # noqa: BLE001 - the store's timeout / connection errors
            raise self.error(f"get {window}[{slot}] from rank {peer}: not written within {self.timeout_s:g} s "
                             f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__})"
                             ) from None
        landed, nbytes = _HEADER.unpack(blob[: _HEADER.size])
        want = out.numel() * out.element_size()
        if nbytes != want:
            raise self.error(f"get {window}[{slot}] from rank {peer}: slot holds {nbytes} bytes, expected {want}")
        out.view(-1).view(torch.uint8).copy_(torch.frombuffer(bytearray(blob[_HEADER.size :]), dtype=torch.uint8))
        start = max(self.clock, landed)
        remote = peer != self.rank
        self.clock = start + (self.link.latency_cycles + self.hop_cycles(nbytes) if remote else 0)
        extra: dict[str, Any] = {}
        if remote:
            fid = f"g{self.rank}-{len(self.events)}"
            extra = {"flows": [{"id": fid, "ph": "f"}],
                     "remote": {"rank": peer, "ts": start, "id": fid, "name": f"{window}[{slot}] -> r{self.rank}",
                                "ph": "s"}}
        self._event(f"get {window}[{slot}] <- r{peer}", "get", start, self.clock, peer=peer, bytes=nbytes, **extra)
        return out

    # ---- synchronisation --------------------------------------------------------------

    def barrier(self, name: str = "barrier") -> None:
        """Every rank notifies every peer, then waits for all of them (AtomicAdd / Ge on a counter of its
        own per barrier: with one counter reused, a fast peer's notify of the next barrier could satisfy
        this one's wait before a slow peer's notify of this one arrived in host time, and the clock would
        then depend on the host's scheduling)."""
        with self.scope(name):
            epoch = self._barriers = getattr(self, "_barriers", 0) + 1
            signal = f"__barrier{epoch}"
            for k in range(1, self.world_size):
                self.notify(signal, (self.rank + k) % self.world_size, 0, 1)
            self.wait(signal, 0, self.world_size - 1, WaitCmp.Ge)
