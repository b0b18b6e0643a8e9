"""``pypto.runtime.benchmark``: run a program N times and summarise device and host time.

::

    stats = benchmark(compiled, [a, b, out], rounds=20)
    stats.device_cycles.median, stats.device_us.min, stats.host_s.mean
    print(stats.summary())

Device figures are the simulated chip's (``RunResult.total_cycles`` and its microseconds at the target's
clock); host figures the wall time of each whole run (``time.perf_counter``). ``warmup`` runs before the
measured rounds are not counted (the first run prepares the kernel units).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pypto.errors import ArgumentTypeError, InvalidArgumentError

from .config import RunConfig
from .run import run


@dataclass(frozen=True)
class Stats:
    """min, median, mean and max of one series."""

    min: float
    median: float
    mean: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        if not values:
            raise ValueError("no values to summarise")
        return cls(float(min(values)), float(statistics.median(values)), float(statistics.fmean(values)),
                   float(max(values)))  # fmt: skip


@dataclass(frozen=True)
class BenchmarkResult:
    """What :func:`benchmark` measured over ``rounds`` runs."""

    rounds: int
    device_cycles: Stats
    device_us: Stats
    host_s: Stats

    def summary(self) -> str:
        """Three lines: device cycles, device microseconds, host milliseconds (min / median / mean / max)."""
        rows = [("device cycles", self.device_cycles, 1.0, "{:.0f}"), ("device us", self.device_us, 1.0, "{:.3f}"),
                ("host ms", self.host_s, 1e3, "{:.3f}")]  # fmt: skip
        lines = [f"{self.rounds} rounds         min      median        mean         max"]
        for label, s, k, fmt in rows:
            cells = " ".join(f"{fmt.format(v * k):>11}" for v in (s.min, s.median, s.mean, s.max))
            lines.append(f"{label:<14} {cells}")
        return "\n".join(lines)


def benchmark(
    program: Any, args: Sequence[Any], rounds: int = 10, *, warmup: int = 1, config: RunConfig | None = None
) -> BenchmarkResult:
    """Run ``program`` (a CompiledProgram, ``CompiledProgram.from_dir(...)``, @pl.jit function ...) on ``args``
    ``warmup`` + ``rounds`` times with ``config`` (default ``RunConfig(platform=<the program's>)``)."""
    for name, value, least in (("rounds", rounds, 1), ("warmup", warmup, 0)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ArgumentTypeError(f"benchmark's {name} is a whole number, got {type(value).__name__} {value!r}")
        if value < least:
            raise InvalidArgumentError(f"benchmark needs {name} >= {least}, got {value}")
    if config is None:
        config = RunConfig(platform=getattr(program, "platform", "a2a3sim"))
    cycles: list[float] = []
    micros: list[float] = []
    host: list[float] = []
    for i in range(warmup + rounds):
        t0 = time.perf_counter()
        result = run(program, *args, config=config)
        elapsed = time.perf_counter() - t0
        if i >= warmup:
            cycles.append(result.total_cycles)
            micros.append(result.time_us)
            host.append(elapsed)
    return BenchmarkResult(rounds, Stats.of(cycles), Stats.of(micros), Stats.of(host))
