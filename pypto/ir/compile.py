"""``pypto.ir.compile`` kept importable (upstream's module path): re-exports :mod:`pypto.driver.compile`."""

from pypto.driver.compile import compile, resolve_target
from pypto.driver.compiled import CompiledProgram
from pypto.pipeline.backend import BackendType
from pypto.pipeline.lower import lower_program

__all__ = ["BackendType", "CompiledProgram", "compile", "lower_program", "resolve_target"]
