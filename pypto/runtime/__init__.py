"""The PyPTO runtime: run programs on the simulated chip (docs/runtime.md).

- :class:`RunConfig` -- compile and run options (``platform="a2a3sim"``,
  ``target``, ``check_races`` ...);
- :func:`run` -- ``run(program_or_compiled, *args, config=) -> RunResult``
  (what it accepts: :mod:`.runnable`), or the seed's ``run(program=, tensor_specs=, golden=, config=)``
  with :class:`TensorSpec` / :class:`ScalarSpec` (:mod:`.specs`);
- :func:`benchmark` -- device (simulated cycles, us) and host (wall time) statistics over N runs;
- :mod:`.build_dir` / :mod:`.debug` -- the build-directory contract and ``replay``;
- :class:`ChipWorker` / :class:`DeviceTensor` -- resident device memory;
- :class:`DistributedWorker` -- a prepared multi-chip (L3) worker: persistent rank processes, resident
  tensors (``StackedDeviceTensor``), HOST callbacks (:mod:`.distributed.worker`);
- :mod:`.device_runner` -- upstream's L2 device pipeline (``compile_and_assemble``, ``execute_on_device``) and
  :mod:`.simpler_compat` -- the Simpler runtime's level-3 ``Worker`` API upstream's programs call;
- :mod:`.orchestration` (host-side task graph) and :mod:`.scheduler`
  (dispatch onto the target's AIC/AIV cores).
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

# Names -> the submodule defining them, imported on first use (PEP 562): compile writes the build
# contract through ``pypto.runtime.build_dir`` without importing the simulator (import cost).
_EXPORTS = {
    "BenchmarkResult": "bench", "Stats": "bench", "benchmark": "bench",
    "PLATFORMS": "config", "RunConfig": "config", "backend_for_platform": "config",
    "OrchestrationError": "orchestration", "Task": "orchestration", "TaskGraph": "orchestration",
    "build_task_graph": "orchestration",
    "InputWrittenError": "run", "RunResult": "run", "TaskRace": "run", "run": "run",
    "Runnable": "runnable", "RunSpec": "runnable",
    "Scheduler": "scheduler", "TaskRecord": "scheduler",
    "ScalarSpec": "specs", "TensorSpec": "specs",
    "DeviceTensor": "tensors",
    "ChipWorker": "worker", "RegistrationHandle": "worker",
    "DistributedWorker": "distributed.worker", "DistributedRunHandle": "distributed.worker",
    "StackedDeviceTensor": "distributed.resident",
}  # fmt: skip


class _Package(types.ModuleType):
    """This package's module type: ``pypto.runtime.run`` is the function even once the submodule
    of the same name is imported (the import system then binds the submodule here; as with an
    eager ``from .run import run``, the function stays)."""

    @property
    def run(self) -> Any:
        from .run import run

        return run

    @run.setter
    def run(self, value: Any) -> None:
        pass


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .bench import BenchmarkResult, Stats, benchmark
    from .config import PLATFORMS, RunConfig, backend_for_platform
    from .distributed.resident import StackedDeviceTensor
    from .distributed.worker import DistributedRunHandle, DistributedWorker
    from .orchestration import OrchestrationError, Task, TaskGraph, build_task_graph
    from .run import InputWrittenError, RunResult, TaskRace, run
    from .runnable import Runnable, RunSpec
    from .scheduler import Scheduler, TaskRecord
    from .specs import ScalarSpec, TensorSpec
    from .tensors import DeviceTensor
    from .worker import ChipWorker, RegistrationHandle

__all__ = [
    "PLATFORMS",
    "BenchmarkResult",
    "Stats",
    "benchmark",
    "ChipWorker",
    "DeviceTensor",
    "DistributedRunHandle",
    "DistributedWorker",
    "RegistrationHandle",
    "StackedDeviceTensor",
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
