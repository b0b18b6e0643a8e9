"""``pypto.ir.distributed_compiled_program``: upstream's module of the L3 config and program (a facade).

``DistributedConfig`` (:mod:`pypto.runtime.distributed.config`) and ``DistributedCompiledProgram``
(:mod:`pypto.driver.distributed`).
"""

from __future__ import annotations

from pypto.driver.distributed import DistributedCompiledProgram
from pypto.runtime.distributed.config import DistributedConfig

__all__ = ["DistributedCompiledProgram", "DistributedConfig"]
