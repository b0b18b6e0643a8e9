"""``RunConfig``: how a ``@pl.jit`` call compiles and runs (pl-dsl.md §6).

The compile-side fields are forwarded to ``ir.compile`` (``save_kernels_dir``
becomes ``output_dir``, ``compile_profiling`` becomes ``profiling``); the
run-side fields are held for the runtime. ``backend_type`` follows
``platform`` (``a5``/``a5sim`` -> Ascend950, else Ascend910B) unless given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")


def backend_for_platform(platform: str) -> str:
    """``Ascend950`` for the a5 platforms, else ``Ascend910B``."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}; expected one of {', '.join(PLATFORMS)}")
    return "Ascend950" if platform.startswith("a5") else "Ascend910B"


@dataclass
class RunConfig:
    """Options of one ``@pl.jit`` call (compile side, then run side)."""

    # ---- compile side (forwarded to ir.compile) ----
    strategy: Any = None
    dump_passes: Any = False
    dump_ptoas_passes: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None
    save_kernels_dir: str | None = None
    distributed_config: Any = None
    platform: str = "a2a3sim"
    backend_type: Any = None
    # ---- run side ----
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    save_kernels: bool = False
    codegen_only: bool = False
    golden_data_dir: str | None = None
    enable_chip_swimlane: bool = False
    enable_dump_args: bool = False
    enable_pmu: bool = False
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    aicpu_thread_num: int | None = None
    ring_task_window: int | None = None
    ring_heap: int | None = None
    ring_dep_pool: int | None = None
    target: Any = None
    """The simulated chip: a packaged target name (``"a2a3"``) or a path to a
    user's ``npu.target`` ``.mlir`` (docs/target.md); None: the platform's."""
    check_races: bool = True
    """Run the sync-race detector on every kernel (``RunResult.races``)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.backend_type is None:
            self.backend_type = backend_for_platform(self.platform)
        else:
            backend_for_platform(self.platform)  # validate the platform

    def compile_options(self) -> dict[str, Any]:
        """The keyword arguments for ``ir.compile`` (unset options left out)."""
        opts: dict[str, Any] = {
            "dump_passes": self.dump_passes,
            "dump_ptoas_passes": self.dump_ptoas_passes,
            "profiling": self.compile_profiling,
            "analyze_auto_scopes_for_deps": self.analyze_auto_scopes_for_deps,
            "platform": self.platform,
            "backend_type": self.backend_type,
        }
        optional = {
            "strategy": self.strategy,
            "diagnostic_phase": self.diagnostic_phase,
            "disabled_diagnostics": self.disabled_diagnostics,
            "memory_planner": self.memory_planner,
            "distributed_config": self.distributed_config,
            "output_dir": self.save_kernels_dir,
        }
        opts.update({k: v for k, v in optional.items() if v is not None})
        return opts
