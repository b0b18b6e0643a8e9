"""The compile driver (the top layer): ``compile``, ``CompiledProgram``, ``@pl.jit`` dispatch, resume.

Nothing below this package imports it; ``pypto.ir`` and ``pypto.language``
re-export its public names.
"""
