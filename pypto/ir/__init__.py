"""The PyPTO IR: programs, the pass pipeline and ``compile``."""

from .compile import BackendType, CompiledProgram, compile, lower_program
from .pass_context import PassContext
from .perf_hints import DiagnosticCheck, DiagnosticPhase, PerfHintError
from .pipeline import MemoryPlanner, OptimizationStrategy, PassManager, PipelineOptions, current_options
from .program import PassDumpLevel, Program
from .resume import resume, run_reproducer
from .verification import VerificationError, VerificationLevel

__all__ = [
    "BackendType",
    "CompiledProgram",
    "DiagnosticCheck",
    "DiagnosticPhase",
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
    "lower_program",
    "resume",
    "run_reproducer",
]
