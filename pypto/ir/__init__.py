"""The PyPTO IR: programs, the pass pipeline and ``compile``."""

from .compile import CompiledProgram, compile, lower_program
from .pipeline import PassManager, VerificationError
from .program import PassDumpLevel, Program

__all__ = [
    "CompiledProgram",
    "PassDumpLevel",
    "PassManager",
    "Program",
    "VerificationError",
    "compile",
    "lower_program",
]
