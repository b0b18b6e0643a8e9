"""The device model's interpreter: run ``pto`` kernels on a simulated core (xDSL interpreter framework).

- :func:`run_kernel` -- numerics on byte-addressed per-core buffers, perf_sim-style
  per-pipe timing with one record per instruction, and the sync-race detector;
- :mod:`.memory` (buffers, tiles, GM views), :mod:`.pto_impls` (the xDSL
  ``InterpreterFunctions``), :mod:`.numerics` (tile math), :mod:`.timing`
  (queues and records), :mod:`.races` (happens-before and shadow memory),
  :mod:`.costs` (the target's cycle tables), :mod:`.core` (per-run state).

See docs/device.md.
"""

from .memory import DeviceError, bf16_to_f32, f32_to_bf16
from .races import Race
from .run import KernelRun, example_args, find_kernel, load_module, run_kernel
from .timing import InstrRecord

__all__ = [
    "DeviceError",
    "InstrRecord",
    "KernelRun",
    "Race",
    "bf16_to_f32",
    "example_args",
    "f32_to_bf16",
    "find_kernel",
    "load_module",
    "run_kernel",
]
