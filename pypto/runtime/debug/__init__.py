"""Re-run and re-measure a build directory without its Python source (docs: README "Looking inside a build").

- :func:`replay` -- ``replay(work_dir, *tensors, config=RunConfig(...))`` (:mod:`.replaying`); the command
  line is ``python -m pypto.runtime.debug.replay <dir> [--pmu N] [--swimlane] ...`` (:func:`replay_main`,
  also what a build's ``debug/run.py`` calls);
- :func:`rebuild_kernel_cpp_from_pto` -- splice edited ``ptoas/*.pto`` into ``kernels/{aic,aiv}/*.cpp``;
- :func:`invalidate_binary_cache` -- drop ``<dir>/cache/kernels/`` (the C++ engine's binaries).
"""

from __future__ import annotations

from .pto_rebuild import PtoUnitError, invalidate_binary_cache, rebuild_kernel_cpp_from_pto
from .replaying import main as replay_main
from .replaying import replay

__all__ = ["PtoUnitError", "invalidate_binary_cache", "rebuild_kernel_cpp_from_pto", "replay", "replay_main"]
