"""The compile driver (the top layer): ``compile``, ``CompiledProgram``, ``@pl.jit`` dispatch, resume.

Nothing below this package imports it; ``pypto.ir`` and ``pypto.language``
re-export its public names.
"""

from pypto.core.compiler_hook import register_compiler

from .compile import compile as _compile

register_compiler(_compile)  # runtime.run(program=..., tensor_specs=...) compiles through it
