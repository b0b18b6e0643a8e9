"""Shared scaffolding for the example programs.

Every example module defines one or more :class:`Case` objects in a ``CASES``
list: the ``@pl.jit`` kernel, a function building its torch arguments and a
``reference`` computing the expected outputs with torch. ``main()`` in each
example calls :func:`run_cases`, which compiles every kernel with pass dumps,
evaluates the reference and (``run=True``, the default of the examples'
``main()``) runs the compiled program on the simulated chip
(``CompiledProgram.__call__`` -> ``pypto.runtime.run``), checking every
output against the reference and that no kernel has a sync race.

Examples are run as scripts (``python examples/beginner/02_elementwise.py``),
so they import this module after putting ``examples/`` on ``sys.path``.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from pypto.ir import compile as ir_compile
from pypto.language import JITFunction

Inputs = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Case:
    """One kernel of an example.

    ``make_inputs()`` returns the kernel's arguments in parameter order (Out
    buffers included, zero-filled); ``reference(*inputs)`` takes the
    kernel's input (non-Out) arguments in order and returns the expected
    value of each output named in ``outputs`` (a dict name -> tensor).
    """

    name: str
    kernel: JITFunction
    make_inputs: Callable[[], Inputs]
    reference: Callable[..., dict[str, torch.Tensor]]
    outputs: tuple[str, ...]
    rtol: float = 1e-5
    atol: float = 1e-5
    notes: dict[str, str] = field(default_factory=dict)

    def inputs(self) -> Inputs:
        torch.manual_seed(0)
        return self.make_inputs()

    @property
    def param_names(self) -> list[str]:
        return list(inspect.signature(self.kernel.fn).parameters)

    def expected(self, args: Inputs) -> dict[str, torch.Tensor]:
        """``reference`` applied to the input (non-Out) arguments of ``args``."""
        ins = [a for n, a in zip(self.param_names, args, strict=True) if n not in self.outputs]
        return self.reference(*ins)


@dataclass
class CaseResult:
    case: Case
    output_dir: Path
    expected: dict[str, torch.Tensor]
    ran: bool = False
    run: Any = None
    """The ``pypto.runtime.RunResult`` of the device run (None when not run)."""


def compile_case(
    case: Case,
    output_dir: str | os.PathLike[str] | None = None,
    *,
    verification_level: Any = None,
    dump_passes: Any = True,
    inputs: Inputs | None = None,
) -> Any:
    """Specialise ``case.kernel`` on its inputs and run ``pypto.ir.compile`` (the case's reference
    becomes the build's ``golden.py``).

    ``verification_level`` is forwarded only when given (and accepted by
    ``pypto.ir.compile``)."""
    args = inputs if inputs is not None else case.inputs()
    program = case.kernel.specialize(*args)
    options: dict[str, Any] = {"output_dir": output_dir, "dump_passes": dump_passes}
    # golden.py in the build: `python <build>/debug/run.py` re-runs and checks it without this file
    options |= {"golden": case.reference, "golden_rtol": case.rtol, "golden_atol": case.atol}
    if verification_level is not None:
        if "verification_level" not in inspect.signature(ir_compile).parameters:
            raise TypeError("pypto.ir.compile does not accept verification_level yet")
        options["verification_level"] = verification_level
    return ir_compile(program, **options)


def run_case(case: Case, output_dir: str | os.PathLike[str] | None = None, *, run: bool = False) -> CaseResult:
    """Compile ``case`` (with dumps) and compute its torch reference.

    With ``run=True`` the compiled program runs on the simulated chip on the
    arguments; every output is checked against the reference (``rtol``/``atol``
    of the case) and the run must report no sync race."""
    args = case.inputs()
    expected = case.expected(args)
    compiled = compile_case(case, output_dir, inputs=args)
    result = CaseResult(case, Path(compiled.output_dir), expected)
    if run:
        compiled(*args)
        result.run = compiled.last_run
        races = result.run.race_messages if result.run is not None else []
        if races:
            raise AssertionError(f"{case.name}: sync races on the device:\n  " + "\n  ".join(races))
        for out_name, want in expected.items():
            got = args[case.param_names.index(out_name)]
            if not torch.allclose(got, want, rtol=case.rtol, atol=case.atol):
                diff = (got - want).abs().max().item()
                raise AssertionError(f"{case.name}: output '{out_name}' differs from torch (max abs diff {diff:.3e})")
        result.ran = True
    return result


def run_cases(
    cases: Sequence[Case], output_root: str | os.PathLike[str] | None = None, *, run: bool = True
) -> list[CaseResult]:
    """``main()`` of an example: compile (and, with ``run``, run on the simulated
    chip and check) every case; one line each."""
    results = []
    for case in cases:
        out = Path(output_root) / case.name if output_root is not None else None
        r = run_case(case, out, run=run)
        if r.ran and r.run is not None:
            status = f"ran on {r.run.target_name}sim in {r.run.total_cycles} cycles, matches torch"
        else:
            status = "compiled (not run; reference computed)"
        print(f"{case.name}: {status} -> {r.output_dir}")
        results.append(r)
    return results
