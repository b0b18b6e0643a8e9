"""Instruction names, pipes and cycle costs of interpreted pto ops, asked of the target.

The pipe an op occupies is the dialect's ``op.pipe()`` (PTOAS semantics, the
pipes ``set_flag``/``wait_flag`` name); records also carry it in the target's
vocabulary (``MTE2``, ``MTE1``, ``CUBE``, ``VECTOR``, ``FIXPIPE``, ``MTE3``,
``SCALAR``). Cycles come from :class:`pypto.target.Target`:
``compute_cycles`` for vector ops (valid rows x cols of the op's main tile),
``matmul_cycles`` for cube ops, ``transfer_cycles(transfer_key(...), bytes)``
for DMA and moves, ``sync_cycles`` for sync ops. Spaces are passed in pto's
spelling (``vec``), which the target matches to its own (``Vec``); GM is ``None``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Protocol

from pypto.ptoas.dialect.attrs import Pipe

TARGET_PIPE: dict[Pipe, str] = {
    Pipe.PIPE_S: "SCALAR",
    Pipe.PIPE_V: "VECTOR",
    Pipe.PIPE_M: "CUBE",
    Pipe.PIPE_MTE1: "MTE1",
    Pipe.PIPE_MTE2: "MTE2",
    Pipe.PIPE_MTE3: "MTE3",
    Pipe.PIPE_FIX: "FIXPIPE",
    Pipe.PIPE_V2: "VECTOR",
}
"""PTOAS pipe -> the target's pipe name."""


class TargetLike(Protocol):
    """What the interpreter needs of :class:`pypto.target.Target`."""

    name: str
    clock_hz: float
    capacity: dict[str, int]
    alignment: dict[str, int]

    def compute_cycles(self, instr: str, dtype: str, rows: int, cols: int) -> int: ...

    def matmul_cycles(self, m: int, k: int, n: int, a_dtype: str) -> int: ...

    def transfer_key(self, instr: str, src_space: str | None, dst_space: str | None) -> str: ...

    def transfer_cycles(self, key: str, nbytes: int) -> int: ...

    def sync_cycles(self, instr: str) -> int: ...


def instr_name(op_name: str) -> str:
    """``pto.tmatmul.acc`` -> ``TMATMUL_ACC``."""
    return op_name.removeprefix("pto.").replace(".", "_").upper()


class CostModel:
    """Cycle costs of one target, memoised per (instruction, shape)."""

    def __init__(self, target: TargetLike) -> None:
        self.target = target
        self._memo: dict[tuple[object, ...], int] = {}

    @staticmethod
    def of(target: TargetLike) -> CostModel:
        """The shared cost model of ``target`` (its memo outlives one run; dropped with the target)."""
        got = _MODELS.get(id(target))
        if got is None or got[0]() is not target:
            model = CostModel(target)
            try:
                ref: Callable[[], object] = weakref.ref(target)
            except TypeError:  # not weak-referenceable: no sharing
                return model
            got = _MODELS[id(target)] = (ref, model)
            weakref.finalize(target, _MODELS.pop, id(target), None)
        return got[1]

    def compute(self, instr: str, dtype: str, rows: int, cols: int) -> int:
        """A vector (or scalar-pipe) instruction over rows x cols elements."""
        key = ("c", instr, dtype, rows, cols)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = max(0, int(self.target.compute_cycles(instr, dtype, rows, cols)))
        return got

    def matmul(self, m: int, k: int, n: int, a_dtype: str) -> int:
        """A cube instruction."""
        key = ("m", m, k, n, a_dtype)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = max(0, int(self.target.matmul_cycles(m, k, n, a_dtype)))
        return got

    def transfer(self, instr: str, src: str | None, dst: str | None, nbytes: int) -> int:
        """A DMA or tile move of ``nbytes``."""
        key = ("t", instr, src, dst, nbytes)
        got = self._memo.get(key)
        if got is None:
            tkey = self.target.transfer_key(instr, src, dst)  # the target reads pto's ``vec`` as its ``Vec``
            got = self._memo[key] = max(0, int(self.target.transfer_cycles(tkey, nbytes)))
        return got

    def sync(self, instr: str) -> int:
        """A sync instruction (set/wait flag, barrier)."""
        key = ("s", instr)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = max(0, int(self.target.sync_cycles(instr)))
        return got


_MODELS: dict[int, tuple[Callable[[], object], CostModel]] = {}
