"""``import pypto.language.distributed as pld``: the multi-chip DSL surface (a facade, issue 19).

What exists so far:

- the enums ``pld.ReduceOp``, ``pld.NotifyOp``, ``pld.WaitCmp``, ``pld.AllreduceMode`` (and
  ``pld.AtomicType``, the same as ``pl.AtomicType``);
- the ops ``pld.tensor.allreduce / broadcast / barrier / allgather / reduce_scatter / all_to_all`` and
  ``pld.system.notify / wait``, parsed
  in kernel bodies (``@pl.program`` / ``@pl.function``) into the ``pld`` dialect
  (:mod:`pypto.dialects.distributed_ops`), verified and printed in both text forms;
- :class:`DistributedConfig` and :func:`launch` (one simulated chip per rank on
  ``torch.distributed``; :mod:`pypto.runtime.distributed`).

Not yet: ``pld.DistributedTensor`` annotations and window buffers in the DSL, ``pld.tile.*`` RMA,
``@pl.jit.host`` orchestrators and ``DistributedCompiledProgram`` (docs/distributed.md).
"""

from __future__ import annotations

from pypto.dialects.distributed_enums import AllreduceMode, NotifyOp, ReduceOp, WaitCmp
from pypto.dialects.enums import AtomicType
from pypto.frontend.dsl_objects import _DSLOnly
from pypto.runtime.distributed import DistributedConfig, launch

# DSL-only namespaces: pld.tensor.allreduce(...) explains itself when called outside a kernel body.
tensor = _DSLOnly("pld.tensor")
system = _DSLOnly("pld.system")

__all__ = [
    "AllreduceMode", "AtomicType", "DistributedConfig", "NotifyOp", "ReduceOp", "WaitCmp", "launch", "system",
    "tensor",
]  # fmt: skip
