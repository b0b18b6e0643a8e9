"""Re-run and re-measure a build directory without its Python source (docs: README "Looking inside a build").

- :func:`replay` -- ``replay(work_dir, *tensors, config=RunConfig(...))``; the command line is
  ``python -m pypto.runtime.debug.replay <dir> [--pmu N] [--swimlane] ...``;
- :func:`rebuild_kernel_cpp_from_pto` -- splice edited ``ptoas/*.pto`` into ``kernels/{aic,aiv}/*.cpp``;
- :func:`invalidate_binary_cache` -- drop ``<dir>/cache/kernels/`` (the C++ engine's binaries).

``replay`` is imported on first use, so ``python -m pypto.runtime.debug.replay`` runs its module once.
"""

from __future__ import annotations

from typing import Any

from .pto_rebuild import PtoUnitError, invalidate_binary_cache, rebuild_kernel_cpp_from_pto

__all__ = ["PtoUnitError", "invalidate_binary_cache", "rebuild_kernel_cpp_from_pto", "replay"]


def __getattr__(name: str) -> Any:
    if name == "replay":
        from .replay import replay

        return replay
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
