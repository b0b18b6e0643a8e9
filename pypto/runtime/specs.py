"""The seed's ``run(program=..., tensor_specs=..., golden=...)`` form: :class:`TensorSpec`, :class:`ScalarSpec`.

::

    def golden(tensors, params):
        tensors["out"][:] = tensors["a"] + tensors["b"]

    result = run(program=Add, tensor_specs=[TensorSpec("a", [128, 128], torch.float32, init_value=torch.randn),
                                            TensorSpec("b", [128, 128], torch.float32, init_value=2.0),
                                            TensorSpec("out", [128, 128], torch.float32, is_output=True)],
                 golden=golden, config=RunConfig(compile_profiling=True))
    result.passed, result.error, result.profile

The program is compiled (the ``compile`` stage; through the compiler the driver registers with
:func:`pypto.runtime.runnable.register_compiler`, else lowered in memory), the golden computes the
expected outputs on copies of the inputs and ``golden.py`` is written into the build directory
(``golden_write``), then the program runs (``device_execution``) and its outputs are compared with
the golden's (``config.rtol`` / ``config.atol``): ``passed`` / ``error`` on the result. A compile or
run error is raised as it is (not folded into ``error``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

SCALAR_CTYPES = ("int64", "int32", "uint64", "uint32", "float", "double")
"""The ctypes names a :class:`ScalarSpec` takes."""


@dataclass
class TensorSpec:
    """One tensor argument: its name, shape, torch dtype, initial value and whether it is an output.

    ``init_value``: None (zeros), a number (filled), a tensor (used, cast to ``dtype``), one of
    ``torch.randn / rand / zeros / ones`` (called with the shape) or any no-argument callable
    returning a tensor. An output (``is_output``) starts at zero."""

    name: str
    shape: list[int]
    dtype: Any
    init_value: Any = field(default=None)
    is_output: bool = False

    def create_tensor(self) -> Any:
        """The torch tensor this spec describes."""
        import torch

        shape = list(self.shape)
        if self.init_value is None or self.is_output:
            return torch.zeros(shape, dtype=self.dtype)
        if isinstance(self.init_value, bool) or not isinstance(self.init_value, int | float):
            if isinstance(self.init_value, torch.Tensor):
                return self.init_value.to(dtype=self.dtype)
            if self.init_value in (torch.randn, torch.rand, torch.zeros, torch.ones):
                return self.init_value(shape, dtype=self.dtype)
            if callable(self.init_value):
                return torch.as_tensor(self.init_value(), dtype=self.dtype)
            raise TypeError(f"TensorSpec {self.name!r}: unsupported init_value {type(self.init_value).__name__}")
        return torch.full(shape, self.init_value, dtype=self.dtype)


@dataclass
class ScalarSpec:
    """One scalar argument: its name, value and ctypes type name (:data:`SCALAR_CTYPES`)."""

    name: str
    value: int | float
    ctype: str = "int64"

    def __post_init__(self) -> None:
        if self.ctype not in SCALAR_CTYPES:
            raise ValueError(
                f"ScalarSpec {self.name!r}: ctype {self.ctype!r}; expected one of {', '.join(SCALAR_CTYPES)}"
            )


def is_spec_list(value: Any) -> bool:
    """Whether ``value`` is a list of TensorSpec / ScalarSpec (the seed's second positional argument)."""
    return (
        isinstance(value, list | tuple) and bool(value) and all(isinstance(v, TensorSpec | ScalarSpec) for v in value)
    )


def run_with_specs(
    program: Any, tensor_specs: Sequence[TensorSpec | ScalarSpec], golden: Callable[..., Any] | None, config: Any
) -> Any:
    """The seed form of :func:`pypto.runtime.run` (see the module docstring); returns the RunResult."""
    import torch

    from pypto.compile_profiling import owned_profiler, stage
    from pypto.utils.atomic import atomic_write_text

    from .build_dir import GOLDEN, read_meta
    from .golden_file import golden_text
    from .run import run
    from .runnable import Runnable, compile_for_run

    names = [s.name for s in tensor_specs]
    if len(set(names)) != len(names):
        raise ValueError(f"tensor_specs name a parameter twice: {names}")
    with owned_profiler(bool(config.compile_profiling)) as (prof, owned):
        target = program
        if not isinstance(program, Runnable):
            with stage("compile"):
                target = compile_for_run(program, config)
        expected: dict[str, Any] = {}
        out_dir = None
        with stage("golden_write"):  # the inputs, then the golden from them (upstream's golden.py)
            values = [s.create_tensor() if isinstance(s, TensorSpec) else s.value for s in tensor_specs]
            if golden is not None:
                copies = {
                    s.name: v.clone() if isinstance(v, torch.Tensor) else v
                    for s, v in zip(tensor_specs, values, strict=True)
                }
                golden(copies, {})
                expected = {s.name: copies[s.name] for s in tensor_specs if isinstance(s, TensorSpec) and s.is_output}
                out_dir = getattr(target, "output_dir", None)
                if out_dir is not None and (out_dir / "compiled_meta.json").is_file():
                    atomic_write_text(
                        out_dir / GOLDEN, golden_text(read_meta(out_dir), golden, config.rtol, config.atol)
                    )
        result = run(target, *values, config=config)
        failures = []
        for s, v in zip(tensor_specs, values, strict=True):
            if s.name in expected and not torch.allclose(
                v.float(), expected[s.name].float(), rtol=config.rtol, atol=config.atol
            ):
                diff = (v.float() - expected[s.name].float()).abs().max().item()
                failures.append(
                    f"output {s.name!r} differs from the golden (max abs diff {diff:.3e}, rtol={config.rtol}, atol={config.atol})"
                )
        result.passed = not failures
        result.error = "; ".join(failures) or None
        if prof is not None:
            result.profile = prof.to_dict()
            out = getattr(target, "output_dir", None)
            if owned and out is not None:
                prof.write_report(out / "report", result.profile)
    return result
