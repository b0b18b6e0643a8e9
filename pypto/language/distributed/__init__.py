"""``import pypto.language.distributed as pld``: the multi-chip DSL surface (a facade, issue 19).

- the enums ``pld.ReduceOp``, ``pld.NotifyOp``, ``pld.WaitCmp``, ``pld.AllreduceMode`` (and
  ``pld.AtomicType``, the same as ``pl.AtomicType``);
- ``pld.DistributedTensor[[...], dtype]``: a window view parameter of a per-rank kernel (an InOut
  tensor of the rank's own window);
- in a ``@pl.jit.host`` orchestrator (run on the host, :mod:`pypto.driver.host_trace`):
  ``pld.world_size()``, ``pld.alloc_window_buffer(shape, dtype=)``, ``pld.window(buf, shape, dtype=)``
  (also spelled ``pld.system.world_size``, ``pld.tensor.alloc_window_buffer``, ``pld.tensor.window``, as
  upstream's full paths) and dispatches ``per_rank(x[r], ..., device=r)``;
- the kernel-body ops ``pld.tensor.allreduce / broadcast / barrier / allgather / reduce_scatter /
  all_to_all / all_to_all_v / put / get / remote_store``, ``pld.tile.remote_load / remote_store / put / get``
  (the tile forms of put / get take an explicit Vec staging tile), ``pld.CommCtx`` (annotation),
  ``pld.system.notify / wait / defer_wait``, ``pld.get_comm_ctx / rank / nranks`` (or ``pld.system.get_comm_ctx / rank / nranks``) and the short forms
  ``pld.remote_load / remote_store``, parsed into the ``pld`` dialect
  (:mod:`pypto.dialects.distributed_ops`), verified and printed in both text forms; the point-to-point
  ones lower into ``.pto`` (``pto.comm.*``) and run on the rank's simulated chip;
- :class:`DistributedConfig` and :func:`launch` (one simulated chip per rank on
  ``torch.distributed``; :mod:`pypto.runtime.distributed`).
"""

from __future__ import annotations

from pypto.dialects.distributed_enums import AllreduceMode, NotifyOp, ReduceOp, WaitCmp
from pypto.dialects.enums import AtomicType
from pypto.driver.host_trace import alloc_window_buffer, window, world_size
from pypto.frontend.dsl_objects import _DSLOnly, _Marker
from pypto.runtime.distributed import DistributedConfig, launch

# DSL-only namespaces: pld.tensor.allreduce(...) explains itself when called outside a kernel body.
tensor = _DSLOnly("pld.tensor")
system = _DSLOnly("pld.system")
tile = _DSLOnly("pld.tile")
get_comm_ctx = _DSLOnly("pld.get_comm_ctx")
remote_load = _DSLOnly("pld.remote_load")
remote_store = _DSLOnly("pld.remote_store")
rank = _DSLOnly("pld.rank")
nranks = _DSLOnly("pld.nranks")

CommCtx = _Marker("CommCtx")
"""``ctx: pld.CommCtx = pld.get_comm_ctx(window)``: the communication-context handle (an annotation of an
assignment or a parameter; the value is an ``index``, the context being implicit in the ``pto.comm`` ops)."""
DistributedTensor = _Marker("DistributedTensor")
"""``pld.DistributedTensor[[rows, cols], dtype]``: a kernel parameter viewing the rank's window."""


__all__ = [
    "AllreduceMode", "AtomicType", "CommCtx", "DistributedConfig", "DistributedTensor", "NotifyOp", "ReduceOp", "WaitCmp",
    "alloc_window_buffer", "get_comm_ctx", "launch", "nranks", "rank", "remote_load", "remote_store", "system",
    "tensor", "tile", "window", "world_size",
]  # fmt: skip
