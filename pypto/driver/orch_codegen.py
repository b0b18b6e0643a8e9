"""``orchestration/host_orch.py`` of an L3 build: the plan rendered in upstream's generated-orchestration format.

Upstream compiles a host orchestrator into a Python module for its ``simpler`` runtime
(``src/codegen/distributed/distributed_codegen.cpp``): ``_alloc_intermediates(tensors, world_size)`` and
``entry(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size)``, one ``TaskArgs`` (``_ta_N``)
per dispatch filled by ``add_tensor`` / ``add_scalar``, submitted by ``_submit_chip(orch, callables[name],
_ta_N, config, rank)`` (a chip program), ``orch.submit_next_level(callables["builtin.tensor.<variant>"],
...)`` (a host-level collective) or ``orch.submit_sub(sub_ids[name], ...)`` (a HOST SubWorker). A
dispatch with window arguments, and every host-level collective, carries the **per-rank comm ordering
token** as its last tensor: ``tensors["<domain>_ord"][rank]``, one separate allocation per rank, INOUT, so
the rank's comm dispatches form one write-after-write chain in program order.

Here the same order holds by construction (each rank process runs its dispatches in plan order,
:mod:`.rank_runner`); this module writes the plan in upstream's format so the two builds read alike. The
plan itself is unrolled (one block per rank and dispatch); what runs is ``distributed_meta.json``'s plan,
not this text (``simpler`` is not a dependency). The orchestrator's own source follows it as comments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .builtin_levels import PREFIX, variant
from .host_trace import TORCH_OF, HostPlan, HostTensor, WindowView, itemsize

DOMAIN = "__comm_d0"
"""The handle of the build's one comm domain (upstream's ``HandleVarForScope`` of its first scope)."""

SIMPLER_DTYPE = {"FP16": "FLOAT16", "FP32": "FLOAT32", "BF16": "BFLOAT16", "INT8": "INT8", "INT16": "INT16",
                 "INT32": "INT32", "INT64": "INT64", "UINT8": "UINT8"}  # fmt: skip
TAG = {"In": "TensorArgType.INPUT", "Out": "TensorArgType.OUTPUT_EXISTING", "InOut": "TensorArgType.INOUT"}


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _host(a: HostTensor, names: Sequence[str]) -> str:
    name = names[a.param] if a.param < len(names) else a.name
    return f'tensors["{name}"]' + "".join(f"[{i}]" for i in a.index)


def _window(a: WindowView, rank: int) -> str:
    return (f'{DOMAIN}[{rank}].buffers["buf{a.buffer}"].tensor(shapes={_shape(a.shape)}, '
            f"dtype=DataType.{SIMPLER_DTYPE.get(a.dtype, a.dtype)})")


def _alloc_intermediates(plan: HostPlan, names: Sequence[str]) -> list[str]:
    lines = ["def _alloc_intermediates(tensors, world_size=1):"]
    for k, (shape, dtype) in enumerate(plan.locals):
        lines.append(f'    tensors["create_tensor{k}"] = torch.zeros({_shape(shape)}, dtype=torch.{TORCH_OF[dtype]}).share_memory_()')
    if plan.windows:
        lines.append(f'    tensors["{DOMAIN}_ord"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() '
                     "for _ in range(max(world_size, 1))]")
    if len(lines) == 1:
        lines.append("    pass")
    return lines


def _domain(plan: HostPlan) -> list[str]:
    sizes = [w.nbytes for w in plan.windows]
    lines = ["with (_domain_provider or orch.allocate_domain)(", f'    name="{DOMAIN.strip("_")}",',
             f"    workers={list(range(plan.world_size))},", "    window_size=" + " + ".join(f"({n})" for n in sizes)
             + ",", "    buffers=["]  # fmt: skip
    for b, w in enumerate(plan.windows):
        count = math.prod(w.shape) * itemsize(w.dtype)
        lines.append(f'        CommBufferSpec(name="buf{b}", dtype="opaque", count={count}, nbytes={w.nbytes}),')
    return [*lines, "    ],", f") as {DOMAIN}:"]


def render(plan: HostPlan, names: Sequence[str]) -> str:
    """``host_orch.py``'s generated part for ``plan`` as traced (its dispatches' Out/InOut indices known;
    ``names``: the orchestrator's parameter names, a ``pl.create_tensor`` intermediate is ``create_tensor<k>``)."""
    body: list[str] = []
    for n, d in enumerate(plan.dispatches):
        ta = f"_ta_{n}"
        body.append(f"{ta} = TaskArgs()")
        windows = False
        if d.program.startswith("@"):
            extra = next((a for a in d.args if isinstance(a, dict)), {})
            views = [a for a in d.args if isinstance(a, WindowView)]
            for a in views:
                body.append(f"{ta}.add_tensor({_window(a, d.rank)}, TensorArgType.INOUT)")
            body.append(f'{ta}.add_tensor(make_tensor_arg(orch._worker, tensors["{DOMAIN}_ord"][{d.rank}]), '
                        "TensorArgType.INOUT)")
            body += [f"{ta}.add_scalar({DOMAIN}[{d.rank}].domain_size)", f"{ta}.add_scalar({DOMAIN}[{d.rank}].device_ctx)",
                     f"{ta}_config = CallConfig()", f"{ta}_config.aicpu_thread_num = config.aicpu_thread_num",
                     f"_keep.append({ta})",
                     f'orch.submit_next_level(callables["{PREFIX}{variant(d.program[1:], views, extra)}"], {ta}, '
                     f"{ta}_config, worker={d.rank})"]  # fmt: skip
            continue
        written = d.outputs
        scalars: list[str] = []
        for i, a in enumerate(d.args):
            tag = TAG["Out"] if i in written else TAG["In"]
            if isinstance(a, WindowView):  # a window: INOUT (upstream's default for a DistributedTensor)
                windows = True
                body.append(f"{ta}.add_tensor({_window(a, d.rank)}, {TAG['InOut']})")
            elif isinstance(a, HostTensor):
                body.append(f"{ta}.add_tensor(make_tensor_arg(orch._worker, {_host(a, names)}), {tag})")
            else:
                scalars.append(f"{ta}.add_scalar({a!r})")
        if d.program.startswith("!"):
            body += [*scalars, f'orch.submit_sub(sub_ids["{d.program[1:]}"], {ta})']
            continue
        if windows:
            body.append(f'{ta}.add_tensor(make_tensor_arg(orch._worker, tensors["{DOMAIN}_ord"][{d.rank}]), '
                        "TensorArgType.INOUT)")
        body += [*scalars, f"_keep.append({ta})", f'_submit_chip(orch, callables["{d.program}"], {ta}, config, {d.rank})']
    lines = ["import torch", "from simpler.task_interface import CallConfig, CommBufferSpec, DataType, TaskArgs, "
             "TensorArgType", "from pypto.runtime.tensor_arg import make_tensor_arg",
             "from pypto.runtime.distributed_runner import _submit_chip", "", "_domain_provider = None", "", "",
             *_alloc_intermediates(plan, names), "", "",
             "def entry(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size):"]  # fmt: skip
    if plan.windows:
        lines += ["    " + s for s in _domain(plan)]
        lines += ["        " + s for s in body]
    else:
        lines += ["    " + s for s in body] or ["    pass"]
    return "\n".join([*lines, "", "", "entry._pypto_distributed_entry = True", ""])
