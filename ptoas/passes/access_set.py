"""Immutable sets of :class:`~.access.Access` as bit sets (the insert-sync lattice's sets).

The analysis keeps a state after every op, and its sets (``issued``, the pending set of an idle pipe)
grow with the function: as frozensets each op's union copied every member, so the pass was quadratic
in op count (and the snapshots held a quadratic number of references for the collector to scan). Here
an access is a bit of an int, numbered once by an :class:`AccessIndex` shared by every state of one
analysis: a union, difference or intersection is one C loop over machine words (64 accesses a word),
and a snapshot holds one int per set.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .access import Access


class AccessIndex:
    """Numbers the accesses of one analysis (bit ``i`` of a set is ``accesses[i]``)."""

    __slots__ = ("accesses", "bits")

    def __init__(self) -> None:
        self.accesses: list[Access] = []
        self.bits: dict[Access, int] = {}

    def bit(self, a: Access) -> int:
        """The bit of ``a`` (numbered when first seen)."""
        got = self.bits.get(a)
        if got is None:
            got = self.bits[a] = 1 << len(self.accesses)
            self.accesses.append(a)
        return got


class AccessSet:
    """An immutable set of accesses of one :class:`AccessIndex` (``index`` None: the empty set)."""

    __slots__ = ("bits", "index")

    def __init__(self, bits: int = 0, index: AccessIndex | None = None) -> None:
        self.bits = bits
        self.index = index

    @staticmethod
    def of(accesses: Iterable[Access], index: AccessIndex) -> AccessSet:
        """The set of ``accesses`` (numbered in ``index``)."""
        bits = 0
        for a in accesses:
            bits |= index.bit(a)
        return AccessSet(bits, index)

    def _with(self, other: AccessSet, bits: int) -> AccessSet:
        index = self.index or other.index
        if self.index is not None and other.index is not None and self.index is not other.index:
            raise ValueError("AccessSet: sets of two analyses mixed")
        return AccessSet(bits, index if bits else None)

    def __or__(self, other: AccessSet) -> AccessSet:
        if not other.bits:
            return self
        if not self.bits:
            return other
        return self._with(other, self.bits | other.bits)

    def __sub__(self, other: AccessSet) -> AccessSet:
        if not other.bits or not self.bits:
            return self
        return self._with(other, self.bits & ~other.bits)

    def __and__(self, other: AccessSet) -> AccessSet:
        return self._with(other, self.bits & other.bits)

    def __le__(self, other: AccessSet) -> bool:
        return not self.bits & ~other.bits

    def __contains__(self, a: object) -> bool:
        if self.index is None:
            return False
        bit = self.index.bits.get(a)  # type: ignore[call-overload]
        return bit is not None and bool(self.bits & bit)

    def __iter__(self) -> Iterator[Access]:
        bits, accesses = self.bits, self.index.accesses if self.index is not None else []
        while bits:
            low = bits & -bits
            yield accesses[low.bit_length() - 1]
            bits ^= low

    def __len__(self) -> int:
        return self.bits.bit_count()

    def __bool__(self) -> bool:
        return bool(self.bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AccessSet) and self.bits == other.bits

    def __hash__(self) -> int:
        return hash(self.bits)

    def __repr__(self) -> str:
        return f"AccessSet({sorted(map(str, self))})"


EMPTY = AccessSet()
