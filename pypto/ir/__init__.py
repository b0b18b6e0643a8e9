"""The PyPTO IR API (a facade: it re-exports, it implements nothing): programs, the pass pipeline, ``compile``.

Where things live: :mod:`pypto.core` (Program, printers), :mod:`pypto.passes`,
:mod:`pypto.pipeline` (PassManager, dumps, verification, perf hints,
``lower_program``) and :mod:`pypto.driver` (``compile``, resume).
"""

from pypto.core.function import Function
from pypto.core.pass_context import PassContext
from pypto.core.program import PassDumpLevel, Program
from pypto.core.serialize import deserialize, serialize
from pypto.driver.resume import resume, run_reproducer
from pypto.pipeline.manager import MemoryPlanner, OptimizationStrategy, PassManager, PipelineOptions, current_options
from pypto.pipeline.perf_hints import DiagnosticCheck, DiagnosticPhase, PerfHintError
from pypto.pipeline.verification import VerificationError, VerificationLevel

# ``pypto.ir.compile`` is both this function and (imported first) the module of the same name.
from .compile import BackendType, CompiledProgram, compile, lower_program

__all__ = [
    "BackendType",
    "CompiledProgram",
    "DiagnosticCheck",
    "DiagnosticPhase",
    "Function",
    "MemoryPlanner",
    "OptimizationStrategy",
    "PassContext",
    "PassDumpLevel",
    "PassManager",
    "PerfHintError",
    "PipelineOptions",
    "Program",
    "VerificationError",
    "VerificationLevel",
    "compile",
    "current_options",
    "deserialize",
    "lower_program",
    "resume",
    "run_reproducer",
    "serialize",
]
