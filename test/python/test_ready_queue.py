"""The scheduler's indexed ready queue answers as a walk over a plain dict of visible tasks does."""

from __future__ import annotations

import random

from pypto.runtime.ready_queue import ReadyQueue

KINDS = ("aic", "aiv", "mix")


def _naive_first(visible: dict[int, int], kind_of: dict[int, str], start: int, ok: set[str]) -> int | None:
    return min((t for t, at in visible.items() if at <= start and kind_of[t] in ok), default=None)


def test_ready_queue_matches_a_walk_over_a_dict() -> None:
    rng = random.Random(7)
    n = 400
    kind_of = {t: rng.choice(KINDS) for t in range(n)}
    queue_of = {t: KINDS.index(kind_of[t]) for t in range(n)}
    q = ReadyQueue(kind_of, queue_of)  # type: ignore[arg-type]
    visible: dict[int, int] = {}
    now, shown = 0, 0
    while shown < n or visible:
        now += rng.randint(0, 20)
        for _ in range(rng.randint(0, 4)):  # tasks become visible, some later than now
            if shown < n:
                at = now + rng.randint(0, 60)
                q[shown] = visible[shown] = at
                shown += 1
        for probe in (now, now + 30):
            d = [0, 0, 0]
            for t, at in visible.items():
                d[queue_of[t]] += at <= probe
            assert q.depths(probe) == d
        for kind in KINDS:
            assert q.earliest(kind) == min((at for t, at in visible.items() if kind_of[t] == kind), default=None)
        ok = set(rng.sample(KINDS, rng.randint(0, 3)))
        first = q.first_ready(now, lambda kind, ok=ok: kind in ok)
        assert first == _naive_first(visible, kind_of, now, ok)
        if first is not None:
            del q[first], visible[first]
        assert len(q) == len(visible) and set(q) == set(visible)


def test_a_start_back_in_time_is_answered_by_a_walk() -> None:
    kind_of, queue_of = {0: "aic", 1: "aic"}, {0: 0, 1: 0}
    q = ReadyQueue(kind_of, queue_of)  # type: ignore[arg-type]
    q[0], q[1] = 50, 10
    assert q.first_ready(60, lambda kind: True) == 0
    assert q.first_ready(20, lambda kind: True) == 1  # task 0 is not visible at cycle 20
    assert q.first_ready(5, lambda kind: True) is None
