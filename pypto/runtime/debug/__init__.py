"""Re-run and re-measure a build directory without its Python source (docs: README "Looking inside a build").

- :func:`replay` -- ``replay(work_dir, *tensors, config=RunConfig(...))`` (:mod:`.replaying`); the command
  line is ``python -m pypto.runtime.debug.replay <dir> [--pmu N] [--swimlane] ...`` (:func:`replay_main`,
  also what a build's ``debug/run.py`` calls);
- :func:`rebuild_kernel_cpp_from_pto` -- splice edited ``ptoas/*.pto`` into ``kernels/{aic,aiv}/*.cpp``;
- :func:`invalidate_binary_cache` -- drop ``<dir>/cache/kernels/`` (the C++ engine's binaries).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {"PtoUnitError": ("pto_rebuild", "PtoUnitError"),
            "invalidate_binary_cache": ("pto_rebuild", "invalidate_binary_cache"),
            "rebuild_kernel_cpp_from_pto": ("pto_rebuild", "rebuild_kernel_cpp_from_pto"),
            "replay": ("replaying", "replay"), "replay_main": ("replaying", "main")}  # fmt: skip
"""Names -> (submodule, name), imported on first use: the build contract's ``debug/run.py`` writer
(:mod:`.run_script`) is imported by compile without the replay machinery."""


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    value = getattr(import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .pto_rebuild import PtoUnitError, invalidate_binary_cache, rebuild_kernel_cpp_from_pto
    from .replaying import main as replay_main
    from .replaying import replay

__all__ = ["PtoUnitError", "invalidate_binary_cache", "rebuild_kernel_cpp_from_pto", "replay", "replay_main"]
