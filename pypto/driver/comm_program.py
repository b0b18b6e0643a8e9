"""Per-rank programs with kernel-body ``pld`` ops that do not lower to ``.pto``, run as their torch form.

The point-to-point ``pld`` ops lower into ``.pto`` (``pto.comm.*``) and such programs compile and run
on the rank's simulated chip. The in-kernel collectives, barrier and tensor-level remote store do not
(their ``NO_PTO``), so a per-rank program with one is kept as its DSL (``program.py``) and its torch form (``torch_program.py``,
:func:`pypto.debug.torch_codegen`) in ``next_levels/<name>/``; on a rank, its ``pld`` ops call
:class:`pypto.runtime.distributed.windows.KernelComm` (``_pld`` in the script).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pypto.core.program import Program
from pypto.dialects.distributed_ops import PldOp
from pypto.utils.atomic import atomic_write_text

from .output_dir import COMM_META


class DistributedBuildError(ValueError):
    """An L3 build directory is missing a file or holds a malformed one (named in the message)."""


def has_comm_ops(program: Program) -> bool:
    """Whether a per-rank program has kernel-body ``pld`` ops."""
    return any(op.name.startswith("pld.") for op in program.module.walk())


def needs_torch_form(program: Program) -> bool:
    """Whether a per-rank program has a ``pld`` op with no ``.pto`` lowering (its ``NO_PTO``: the in-kernel
    collectives it cannot expand); such a program runs as its torch form."""
    return bool(torch_form_reasons(program))


def torch_form_reasons(program: Program) -> list[str]:
    """``file:line:col: op: why`` for every ``pld`` op of the program that does not lower to ``.pto``."""
    from pypto.diagnostics import op_span

    out = []
    for op in program.module.walk():
        why = op.pto_blocker() if isinstance(op, PldOp) else None
        if why:
            out.append(f"{op_span(op) or '<unknown>'}: {op.name}: {why}")
    return out


class CommProgram:
    """A per-rank program with kernel-body ``pld`` ops (remote load/store, put/get, notify/wait, barrier).

    Those ops are not lowered through the pass pipeline into ``.pto`` yet, so such a program runs as its
    torch form (:func:`pypto.debug.torch_codegen`, the reference semantics of every op) on the rank,
    its ``pld`` ops calling the rank's window and link model (:class:`~pypto.runtime.distributed.windows.
    KernelComm`): numerics and link cycles, no simulated compute cycles. Its ``next_levels/<name>/``
    holds ``program.py`` (the DSL), ``torch_program.py`` (what runs) and ``comm_meta.json`` (its
    ``torch_form_because``: each op that does not lower, with its location and why).
    """

    KIND_FILE = COMM_META

    def __init__(self, output_dir: Path, entry: str, output_indices: list[int], source: str):
        self.output_dir = Path(output_dir)
        self.entry, self.output_indices, self.source = entry, output_indices, source
        self._fn: Any = None

    @classmethod
    def build(cls, program: Program, name: str, out: Path, why: list[str] | None = None) -> CommProgram:
        """Write ``next_levels/<name>/``; ``why`` (:func:`torch_form_reasons`, or the codegen's error) goes
        into ``comm_meta.json``."""
        from pypto.debug.torch_codegen import torch_codegen
        from pypto.dialects.enums import FunctionType, ParamDirection
        from pypto.dialects.program import function_type, param_directions

        out.mkdir(parents=True, exist_ok=True)
        entry = next((n for n, f in program.func_ops.items() if function_type(f) is FunctionType.Orchestration),
                     next(iter(program.func_ops)))
        outs = (ParamDirection.Out, ParamDirection.InOut)
        indices = [i for i, d in enumerate(param_directions(program.func_ops[entry])) if d in outs]
        source = torch_codegen(program)
        atomic_write_text(out / "program.py", program.as_python())
        atomic_write_text(out / "torch_program.py", source)
        meta = {"entry": entry, "output_indices": indices, "torch_form_because": why or []}
        atomic_write_text(out / cls.KIND_FILE, json.dumps(meta, indent=1) + "\n")
        return cls(out, entry, indices, source)

    @classmethod
    def is_build(cls, out: Path) -> bool:
        return (out / cls.KIND_FILE).is_file()

    @classmethod
    def from_dir(cls, out: Path) -> CommProgram:
        try:
            meta = json.loads((out / cls.KIND_FILE).read_text())
            source = (out / "torch_program.py").read_text()
            return cls(out, str(meta["entry"]), [int(i) for i in meta["output_indices"]], source)
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise DistributedBuildError(f"{out}: not a readable per-rank comm program ({exc})") from None

    def run(self, kernel_comm: Any, *args: Any) -> None:
        """Run on this rank with ``kernel_comm`` as ``_pld``."""
        if self._fn is None:
            scope: dict[str, Any] = {"__name__": f"pypto_rank_program_{self.entry}"}
            exec(compile_source(self.source, str(self.output_dir / "torch_program.py")), scope)  # noqa: S102
            self._fn = scope
        from pypto.runtime.distributed.deferred import DeferredTasks

        pld = self._fn["_pld"] = DeferredTasks(kernel_comm)  # pld.system.defer_wait: deferred completion
        self._fn[self.entry](*args)
        pld.finish()


def compile_source(source: str, filename: str) -> Any:
    """Python's ``compile`` (this module's ``compile`` is PyPTO's)."""
    import builtins

    return builtins.compile(source, filename, "exec")
