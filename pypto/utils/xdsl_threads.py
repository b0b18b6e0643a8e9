"""xDSL's ``ImplicitBuilder`` made safe to enter from several threads at once (:func:`serialise_implicit_builder`).

``ImplicitBuilder`` swaps ``Operation.__post_init__`` (a class attribute, shared by every thread) on entry and
puts back what it found on exit; only its builder is per thread. The parser enters it for every ``scf.for``
it reads without a ``scf.yield`` (``traits.ensure_terminator`` adds one), so two threads parsing at once
(ptoas units read in parallel, compiles in threads) could interleave the swaps: the later thread put the
earlier one's wrapper back for good, and from then on every op an ``ImplicitBuilder`` created was inserted
twice ("Can't add to a block an operation already attached to a block"), for the rest of the process. One
re-entrant lock around each ``ImplicitBuilder`` block keeps the swaps of two threads from overlapping (a
block is short: the parser creates one op in it).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import xdsl.builder

_LOCK = threading.RLock()
_ORIGINAL = xdsl.builder.ImplicitBuilder


@contextlib.contextmanager
def _one_thread_at_a_time(arg: Any) -> Iterator[Any]:
    """``xdsl.builder.ImplicitBuilder(arg)``, with no other thread inside one meanwhile."""
    with _LOCK, _ORIGINAL(arg) as args:
        yield args


def serialise_implicit_builder() -> None:
    """Make ``xdsl.builder.ImplicitBuilder`` (what ``ensure_terminator`` imports when it runs) take the lock; once
    per process (a second call changes nothing)."""
    xdsl.builder.ImplicitBuilder = _one_thread_at_a_time  # type: ignore[assignment]
