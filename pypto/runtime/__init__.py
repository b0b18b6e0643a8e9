"""The PyPTO runtime: run programs on the simulated chip (docs/runtime.md).

- :class:`RunConfig` -- compile and run options (``platform="a2a3sim"``,
  ``target``, ``check_races`` ...);
- :func:`run` -- ``run(program_or_compiled, *args, config=) -> RunResult``
  (what it accepts: :mod:`.runnable`), or the seed's ``run(program=, tensor_specs=, golden=, config=)``
  with :class:`TensorSpec` / :class:`ScalarSpec` (:mod:`.specs`);
- :func:`benchmark` -- device (simulated cycles, us) and host (wall time) statistics over N runs;
- :mod:`.build_dir` / :mod:`.debug` -- the build-directory contract and ``replay``;
- :class:`ChipWorker` / :class:`DeviceTensor` -- resident device memory;
- :mod:`.orchestration` (host-side task graph) and :mod:`.scheduler`
  (dispatch onto the target's AIC/AIV cores).
"""

from __future__ import annotations

from .bench import BenchmarkResult, Stats, benchmark
from .config import PLATFORMS, RunConfig, backend_for_platform
from .orchestration import OrchestrationError, Task, TaskGraph, build_task_graph
from .run import InputWrittenError, RunResult, TaskRace, run
from .runnable import Runnable, RunSpec
from .scheduler import Scheduler, TaskRecord
from .specs import ScalarSpec, TensorSpec
from .tensors import DeviceTensor
from .worker import ChipWorker

__all__ = [
    "PLATFORMS",
    "BenchmarkResult",
    "Stats",
    "benchmark",
    "ChipWorker",
    "DeviceTensor",
    "InputWrittenError",
    "OrchestrationError",
    "RunConfig",
    "RunResult",
    "RunSpec",
    "ScalarSpec",
    "Runnable",
    "Scheduler",
    "Task",
    "TaskGraph",
    "TaskRace",
    "TaskRecord",
    "TensorSpec",
    "backend_for_platform",
    "build_task_graph",
    "run",
]
