"""Resume the pipeline from a pass dump, and replay a failure's reproducer.

**Resume.** Every dump is a resume point: :func:`resume` loads
``passes_dump/NN_after_X.py`` (or ``00_frontend.py``) with ``pl.loads`` and
runs passes ``NN+1..end`` of the strategy's pipeline (the same
``memory_planner`` as the compile); the result prints like the compile's last
dump. ``pypto-opt passes_dump/NN_after_X.py --resume`` is the command line.

**Reproducer.** :func:`run_reproducer` (``pypto-opt --run-reproducer FILE``)
replays the file a failing pass leaves (format: :mod:`pypto.pipeline.reproducer`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pypto.core.program import Program
from pypto.frontend.parser import loads, parse
from pypto.passes.registry import get_pass
from pypto.pipeline.manager import MemoryPlanner, OptimizationStrategy, PassManager
from pypto.pipeline.reproducer import ResumeError, read_reproducer
from pypto.pipeline.verification import VerificationLevel
from pypto.utils.tracebacks import api_boundary

_DUMP_NAME = re.compile(r"^(?P<n>\d+)_(?:after_(?P<pass>\w+)|frontend)\.py$")


def parse_dump_name(path: str | os.PathLike[str]) -> tuple[int, str | None]:
    """``12_after_OptimizeOrchTensors.py`` -> ``(12, "OptimizeOrchTensors")``;
    ``00_frontend.py`` -> ``(0, None)``."""
    name = Path(path).name
    m = _DUMP_NAME.match(name)
    if m is None:
        raise ResumeError(path, f"{name!r} is not a pass dump name (NN_after_<Pass>.py or 00_frontend.py)")
    return int(m.group("n")), m.group("pass")


def resume_manager(
    path: str | os.PathLike[str],
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    memory_planner: MemoryPlanner | str | None = None,
    verification_level: VerificationLevel | int | str | None = None,
) -> PassManager:
    """The passes after the dump ``path`` (numbered as in the full pipeline)."""
    done, pass_name = parse_dump_name(path)
    full = PassManager.get_strategy(strategy, memory_planner, verification_level=verification_level)
    if done > len(full.passes):
        raise ResumeError(path, f"the pipeline has only {len(full.passes)} passes")
    if pass_name is not None and full.pass_names[done - 1] != pass_name:
        raise ResumeError(
            path,
            f"pass {done:02d} of the pipeline (memory_planner={full.memory_planner.value}) "
            f"is {full.pass_names[done - 1]}, not {pass_name}"
        )
    return full.tail(done)


@api_boundary
def resume(
    path: str | os.PathLike[str],
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    memory_planner: MemoryPlanner | str | None = None,
    verification_level: VerificationLevel | int | str | None = None,
) -> Program:
    """Load a dump and run the rest of the pipeline; returns the final program."""
    manager = resume_manager(path, strategy, memory_planner, verification_level)
    return manager.run(loads(path))


@api_boundary
def run_reproducer(path: str | os.PathLike[str]) -> Program:
    """Replay a reproducer: parse its IR and run its pipeline (raises the
    recorded error when it still reproduces; returns the program otherwise).

    The IR is parsed with the file's real line numbers (the header lines are
    blanked), so locations point into the reproducer."""
    repro = read_reproducer(path)
    try:
        passes = [get_pass(name) for name in repro.pipeline]
    except KeyError as e:
        raise ResumeError(path, str(e.args[0] if e.args else e)) from None
    program = parse("\n" * (repro.ir_line - 1) + repro.ir_text, filename=str(path))
    manager = PassManager(passes, verification_level=repro.verification_level, first_index=repro.first_index)  # type: ignore[arg-type]
    return manager.run(program, options=repro.options)
