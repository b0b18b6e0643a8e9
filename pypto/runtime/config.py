"""``RunConfig``: how a ``@pl.jit`` call compiles and runs (pl-dsl.md §6).

The compile-side fields are forwarded to ``ir.compile`` (``save_kernels_dir``
becomes ``output_dir``, ``compile_profiling`` becomes ``profiling``); the
run-side fields are held for the runtime. ``backend_type`` follows
``platform`` (``a5``/``a5sim`` -> Ascend950, else Ascend910B) unless given.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import ArgumentTypeError, InvalidArgumentError
from pypto.log import logger

PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5")

KERNEL_ENGINES = ("interpreter", "cpp", "both")
"""What runs the kernels: the interpreter (cycles, every DFX artefact), the compiled C++, or both."""

PMU_EVENT_TYPES = (1, 2, 4, 5, 6, 7, 8)
"""The a2a3 PMU event types (runtime-dfx-formats.md §5); any other positive type falls back to 2."""

PMU_EVENT_ENV = "SIMPLER_PMU_EVENT_TYPE"
"""The environment variable whose a2a3 event type overrides ``enable_pmu``'s when PMU collection is on (§5)."""

_ATOI = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")
"""What C's ``atoi`` reads of a string (upstream reads :data:`PMU_EVENT_ENV` with it; nothing read is 0)."""

DFX_FLAGS = (
    "enable_chip_swimlane", "enable_dump_args", "enable_pmu", "enable_dep_gen", "enable_scope_stats",
    "enable_incore_trace",
)  # fmt: skip
"""The run-time collection flags (runtime-dfx-formats.md §1; ``enable_incore_trace``: issue 13)."""

_DFX_DEFAULTS: dict[str, int | bool] = {}


def set_dfx_defaults(**flags: int | bool) -> None:
    """The values a ``RunConfig`` built without these flags takes (the test suite's ``--enable-pmu`` ...); a
    value :func:`check_dfx_flag` refuses is its InvalidArgumentError."""
    unknown = set(flags) - set(DFX_FLAGS)
    if unknown:
        raise ValueError(f"unknown DFX flag(s): {', '.join(sorted(unknown))}; expected {', '.join(DFX_FLAGS)}")
    for flag, value in flags.items():  # a bad default is refused here, not by every RunConfig built later
        check_dfx_flag(flag, value)
    _DFX_DEFAULTS.clear()
    _DFX_DEFAULTS.update({k: v for k, v in flags.items() if v})


def _dfx_default(flag: str) -> Any:
    return field(default_factory=lambda: _DFX_DEFAULTS.get(flag, False))


def _level(flag: str, value: Any, top: int, true_means: int) -> int:
    """A flag as a level 0..``top``: ``True`` means ``true_means``; anything else is an InvalidArgumentError
    (a ValueError)."""
    if isinstance(value, bool):
        return true_means if value else 0
    if isinstance(value, int) and 0 <= value <= top:
        return value
    raise InvalidArgumentError(f"RunConfig.{flag} takes True/False or a level 0-{top}, got {value!r}")


def _pmu_event_type(value: Any) -> int:
    """``enable_pmu``: 0 off, ``True`` event type 2, an a2a3 event type, any other positive type 2 (before
    :func:`_pmu_env_override`)."""
    if isinstance(value, bool):
        return 2 if value else 0
    if isinstance(value, int) and value >= 0:
        return value if value == 0 or value in PMU_EVENT_TYPES else 2
    raise InvalidArgumentError(
        f"RunConfig.enable_pmu takes True/False or a PMU event type {PMU_EVENT_TYPES}, got {value!r}"
    )


def _pmu_env_override(requested: int) -> int:
    """The PMU event type a run collects: when PMU collection is on (``requested`` > 0),
    ``SIMPLER_PMU_EVENT_TYPE`` (:data:`PMU_EVENT_ENV`, read as upstream's C ``atoi`` reads it: leading
    blanks, a sign, the digits) overrides ``requested`` if it is an a2a3 event type; any other value is
    ignored with a warning and ``requested`` stays (upstream's ``resolve_pmu_event_type``). Off, the variable
    is not read."""
    env = os.environ.get(PMU_EVENT_ENV) if requested else None
    if env is None:
        return requested
    m = _ATOI.match(env)
    override = int(m.group()) if m else 0
    if override in PMU_EVENT_TYPES:
        return override
    logger.warning(
        f"{PMU_EVENT_ENV}={env!r} is not an a2a3 PMU event type ({', '.join(map(str, PMU_EVENT_TYPES))}): "
        f"ignored, enable_pmu's event type {requested} stays"
    )
    return requested


_FLAG_RULES: dict[str, Callable[[Any], int | bool]] = {
    "enable_chip_swimlane": lambda v: _level("enable_chip_swimlane", v, 4, 4),
    "enable_dump_args": lambda v: _level("enable_dump_args", v, 2, 1),
    "enable_pmu": _pmu_event_type,
    "enable_dep_gen": lambda v: bool(_level("enable_dep_gen", v, 1, 1)),
    "enable_scope_stats": lambda v: bool(_level("enable_scope_stats", v, 1, 1)),
    "enable_incore_trace": lambda v: bool(_level("enable_incore_trace", v, 1, 1)),
}
"""Each DFX flag's normalisation: the one place its allowed values are spelled."""


def check_dfx_flag(flag: str, value: Any) -> int | bool:
    """``value`` of the DFX flag ``flag`` as a ``RunConfig`` holds it (``enable_pmu`` before
    ``SIMPLER_PMU_EVENT_TYPE``'s override), or an InvalidArgumentError (a ValueError) naming the flag and the
    values it takes."""
    return _FLAG_RULES[flag](value)


def backend_for_platform(platform: str) -> str:
    """``Ascend950`` for the a5 platforms, else ``Ascend910B``."""
    if platform not in PLATFORMS:
        raise InvalidArgumentError(f"unknown platform {platform!r}; expected one of {', '.join(PLATFORMS)}")
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
    enable_chip_swimlane: int | bool = _dfx_default("enable_chip_swimlane")
    """Swimlane level 0-4 (``True``: 4): ``dfx_outputs/chip_swimlane_records.json``."""
    enable_dump_args: int | bool = _dfx_default("enable_dump_args")
    """0 off, 1 the marked tensors, 2 every argument: ``dfx_outputs/args_dump/``."""
    enable_pmu: int | bool = _dfx_default("enable_pmu")
    """0 off, else the PMU event type (``True``: 2): ``dfx_outputs/pmu.csv``."""
    enable_dep_gen: bool = _dfx_default("enable_dep_gen")
    """``dfx_outputs/deps.json``."""
    enable_scope_stats: bool = _dfx_default("enable_scope_stats")
    """``dfx_outputs/scope_stats/scope_stats.jsonl``."""
    enable_incore_trace: bool = _dfx_default("enable_incore_trace")
    """``dfx_outputs/incore/<task_id>_<kernel>/``: trace.clean.json, instr_metrics.json, bottleneck.txt."""
    aicpu_thread_num: int | None = None
    ring_task_window: int | None = None
    ring_heap: int | None = None
    ring_dep_pool: int | None = None
    target: Any = None
    """The simulated chip: a packaged target name (``"a2a3"``) or a path to a
    user's ``npu.target`` ``.mlir`` (docs/target.md); None: the platform's."""
    check_races: bool = True
    """Run the sync-race detector on every kernel (``RunResult.races``)."""
    kernel_engine: str = "interpreter"
    """What computes the kernels' numbers: ``"interpreter"`` (the device model), ``"cpp"`` (the
    build's ``kernels/{aic,aiv}/<func>.cpp`` compiled by g++; cycles and DFX still from the
    interpreter) or ``"both"`` (both run; ``RunResult.kernel_engine`` lists where they differ)."""
    recompile_kernels: bool = True
    """``False``: reuse the cached kernel binaries (``<work_dir>/cache/kernels/``) even when a
    ``.cpp`` is newer (replay's ``--no-recompile``)."""
    check_inputs: bool | None = None
    """Compare every task's In arguments byte for byte before and after it runs (a kernel writing one
    raises ``InputWrittenError``). ``None``: every task with the interpreter (and with
    ``kernel_engine="both"``); with ``"cpp"`` the first run of each kernel signature (which arguments a
    kernel writes is a property of its code, like its cycles), the later ones skip the O(input) copy.
    ``True``: every task whatever the engine; ``False``: never."""
    golden: Any = None
    """A torch reference: compile writes ``golden.py`` from it (``pypto.runtime.golden_file``)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kernel_engine not in KERNEL_ENGINES:
            raise InvalidArgumentError(
                f"RunConfig.kernel_engine takes one of {', '.join(map(repr, KERNEL_ENGINES))}, got {self.kernel_engine!r}"
            )
        if self.check_inputs not in (None, True, False):
            raise InvalidArgumentError(f"RunConfig.check_inputs takes None, True or False, got {self.check_inputs!r}")
        for flag, rule in _FLAG_RULES.items():
            setattr(self, flag, rule(getattr(self, flag)))
        self.enable_pmu = _pmu_env_override(self.enable_pmu)
        if self.dfx_enabled:
            self.save_kernels = True  # the artefacts go into the build directory
        if self.backend_type is None:
            self.backend_type = backend_for_platform(self.platform)
        else:
            backend_for_platform(self.platform)  # validate the platform

    @property
    def dfx_enabled(self) -> bool:
        """Whether any run-time collection flag is on."""
        return any(getattr(self, f) for f in DFX_FLAGS)

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
            "golden": self.golden,
        }
        opts.update({k: v for k, v in optional.items() if v is not None})
        if self.golden is not None:
            opts["golden_rtol"], opts["golden_atol"] = self.rtol, self.atol
        return opts


_NOT_A_CONFIG = (bool, int, float, complex, str, bytes, dict, list, tuple, set)


def check_config(config: Any) -> None:
    """``config=`` of a run or a ``@pl.jit`` call is None or a :class:`RunConfig` (an object with the
    options as attributes); a number, a string or a dict of options is an ``ArgumentTypeError`` (it failed
    deep in the run with "'dict' object has no attribute 'compile_profiling'")."""
    if isinstance(config, _NOT_A_CONFIG):
        hint = f"RunConfig(**{config!r})" if isinstance(config, dict) else "RunConfig(dump_passes=True)"
        raise ArgumentTypeError(f"config= takes a pypto.runtime.RunConfig (e.g. {hint}), got {type(config).__name__}")
