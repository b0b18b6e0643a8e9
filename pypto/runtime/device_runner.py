"""``pypto.runtime.device_runner``: upstream's L2 (one chip) device pipeline, on the simulated chip.

Upstream compiles a build directory's kernels and orchestration C++ into binaries, assembles them into
Simpler's ``ChipCallable`` and runs that through Simpler's ``Worker``. Here a build directory already
holds everything the simulated chip runs (``kernel_config.py``, the orchestration and the ``.pto``
kernels: :mod:`.build_dir`), so:

- :func:`compile_and_assemble` (``work_dir``, ``platform``) checks and loads the build into a
  :class:`ChipCallable` and returns ``(chip_callable, runtime_name, runtime_config)`` as upstream;
- :func:`execute_on_device` runs a chip callable on the ordered arguments (host tensors are written in
  place), with upstream's DFX switches (``enable_chip_swimlane``, ``enable_dump_args``, ``enable_pmu``,
  ``enable_dep_gen``, ``enable_scope_stats``) and ``aicpu_thread_num``; only ``level=2``, as upstream;
- :func:`validate_golden` compares outputs with a golden (``NaN`` in the golden: don't care).

A chip callable also runs on its own (``chip_callable(*args)``) and is what the Simpler-style
``Worker.register`` of :mod:`.simpler_compat` takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .build_dir import KERNEL_CONFIG, BuildDirProgram, read_kernel_config

DEFAULT_RUNTIME = "tensormap_and_ringbuffer"
"""The runtime a ``kernel_config.py`` without ``RUNTIME_CONFIG['runtime']`` names (upstream's default)."""


class ChipCallable:
    """One chip's program, assembled from a build directory: call it with the orchestration's arguments."""

    def __init__(self, work_dir: Path, platform: str, runtime_config: Mapping[str, Any],
                 orchestration: Mapping[str, Any]):
        self.work_dir = work_dir
        self.platform = platform
        self.runtime_config = dict(runtime_config)
        self.name = str(orchestration.get("function_name", work_dir.name))
        self.signature = list(orchestration.get("signature", ()))
        """The orchestration's parameter directions (``In``/``Out``/``InOut``), as ``kernel_config.py`` lists them."""
        self._program = BuildDirProgram(work_dir, platform)

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run on the simulated chip; Out/InOut host tensors are written in place. Returns the run's result."""
        from .config import RunConfig
        from .run import run

        if self.signature and len(args) != len(self.signature):
            raise TypeError(f"{self.name}: expected {len(self.signature)} arguments ({', '.join(self.signature)}), "
                            f"got {len(args)}")
        return run(self._program, *args, config=config or RunConfig(platform=self.platform))

    def __repr__(self) -> str:
        return f"ChipCallable({self.name!r}, {str(self.work_dir)!r})"


def compile_and_assemble(work_dir: Path | str, platform: str) -> tuple[ChipCallable, str, dict[str, Any]]:
    """The chip callable of the build in ``work_dir``, its runtime name and its ``RUNTIME_CONFIG``.

    Raises ``FileNotFoundError`` when ``work_dir`` has no ``kernel_config.py`` (a compile-only artefact, or not
    a build directory) and :class:`~.build_dir.BuildDirError` naming the file when the build is inconsistent."""
    work = Path(work_dir).resolve()
    if not (work / KERNEL_CONFIG).is_file():
        raise FileNotFoundError(f"{work}: no {KERNEL_CONFIG} (expected the output_dir of an ir.compile of a "
                                "program with an Orchestration entry)")
    kc = read_kernel_config(work)
    runtime_config = dict(kc.runtime_config)
    callable_ = ChipCallable(work, platform, runtime_config, kc.orchestration)
    callable_._program.run_spec()  # load now: a broken build is reported here, as upstream's compile step
    return callable_, str(runtime_config.get("runtime", DEFAULT_RUNTIME)), runtime_config


DFX_SWITCHES = ("enable_chip_swimlane", "enable_dump_args", "enable_pmu", "enable_dep_gen", "enable_scope_stats")


def execute_on_device(chip_callable: ChipCallable, orch_args: Sequence[Any], platform: str, runtime_name: str,
                      device_id: int, *, level: int = 2, aicpu_thread_num: int | None = None,
                      enable_sdma: bool = False, output_prefix: str | None = None, runtime_env: Any = None,
                      **dfx: Any) -> Any:
    """Run ``chip_callable`` on ``orch_args`` (host tensors written in place) on simulated chip ``device_id``.

    ``enable_sdma``, ``output_prefix`` and ``runtime_env`` are accepted for upstream's signature: the simulated
    chip needs no SDMA workspace and writes its DFX files under the build directory."""
    from .config import RunConfig

    del enable_sdma, output_prefix, runtime_env
    if level != 2:
        raise ValueError(f"execute_on_device: only level=2 (one chip) is supported, got level={level}")
    if not isinstance(chip_callable, ChipCallable):
        raise TypeError(f"execute_on_device: expected a ChipCallable (from compile_and_assemble), got "
                        f"{type(chip_callable).__name__}")
    unknown = sorted(set(dfx) - set(DFX_SWITCHES))
    if unknown:
        raise TypeError(f"execute_on_device: unknown argument(s) {unknown} (DFX switches: {', '.join(DFX_SWITCHES)})")
    del runtime_name  # one simulated runtime
    config = RunConfig(platform=platform, device_id=int(device_id), aicpu_thread_num=aicpu_thread_num, **dfx)
    return chip_callable(*orch_args, config=config)


def validate_golden(outputs: Mapping[str, Any], golden: Mapping[str, Any], rtol: float = 1e-5,
                    atol: float = 1e-5) -> None:
    """Raise ``AssertionError`` naming the first output that differs from its golden (``NaN`` in the golden: any
    value is accepted there, as upstream)."""
    import torch

    for name, actual in outputs.items():
        if name not in golden:
            raise AssertionError(f"output {name!r} has no golden")
        got = torch.as_tensor(actual).cpu()
        want = torch.as_tensor(golden[name]).cpu().to(got.dtype)
        if got.shape != want.shape:
            raise AssertionError(f"output {name!r}: shape {list(got.shape)}, golden {list(want.shape)}")
        care = ~torch.isnan(want) if want.is_floating_point() else torch.ones_like(want, dtype=torch.bool)
        close = torch.isclose(got, want, rtol=rtol, atol=atol) | ~care
        if not bool(close.all()):
            bad = int((~close).sum())
            diff = (got.double() - want.double()).abs()[~close].max().item()
            raise AssertionError(f"output {name!r}: {bad} of {got.numel()} elements differ from the golden "
                                 f"(max abs diff {diff:g}, rtol={rtol}, atol={atol})")
