"""``next_levels/builtin.tensor.<variant>/`` of an L3 build: one folder per host-level collective variant.

Upstream lowers a host orchestrator's ``pld.tensor.<op>(...)`` to a compiler-generated chip kernel,
one per variant, named as its codegen mangles it (``allreduce__sum__fp32``,
``allreduce_ring__max__fp16``, ``broadcast__root0__fp32``, ``barrier__fp32``, ``allgather__fp32``,
``reduce_scatter__sum__fp32``, ``all_to_all__fp32``), in ``next_levels/builtin.tensor.<variant>/`` with
its ``kernel_config.py``. Here the collective runs in the rank process between the dispatches
(:func:`pypto.driver.rank_runner.host_collective`), so the folder's ``kernel_config.py`` records the
variant (op, options, dtype) and has no kernels to load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pypto.utils.atomic import atomic_write_text

from .host_trace import HostPlan, WindowView

PREFIX = "builtin.tensor."


def variant(name: str, views: list[WindowView], extra: dict[str, Any]) -> str:
    """Upstream's variant name of ``pld.tensor.<name>`` on ``views`` (its options in ``extra``)."""
    opts, nums = extra.get("options", {}), extra.get("numbers", [])
    dtype = (views[0].dtype if views and name != "barrier" else "FP32").lower()
    if name == "allreduce":
        op = str(opts.get("op", "Sum")).lower()
        kind = "allreduce_ring" if str(opts.get("mode", "mesh")) == "ring" else "allreduce"
        return f"{kind}__{op}__{dtype}"
    if name == "reduce_scatter":
        return f"reduce_scatter__{str(opts.get('op', 'Sum')).lower()}__{dtype}"
    if name == "broadcast":
        return f"broadcast__root{int(opts.get('root', nums[0] if nums else 0))}__{dtype}"
    return f"{name}__{dtype}"


def write_builtin_levels(out: Path, plan: HostPlan) -> list[str]:
    """Write ``next_levels/builtin.tensor.<variant>/kernel_config.py`` for each host collective of ``plan``
    (rank 0's steps: every rank runs the same); returns the folder names."""
    seen: dict[str, dict[str, Any]] = {}
    for d in plan.dispatches:
        if d.rank != 0 or not d.program.startswith("@"):
            continue
        extra = next((a for a in d.args if isinstance(a, dict)), {})
        views = [a for a in d.args if isinstance(a, WindowView)]
        folder = PREFIX + variant(d.program[1:], views, extra)
        seen.setdefault(folder, {"op": f"pld.tensor.{d.program[1:]}", "options": extra.get("options", {}),
                                 "dtype": views[0].dtype if views else None,
                                 "windows": [{"buffer": v.buffer, "shape": list(v.shape), "dtype": v.dtype}
                                             for v in views]})  # fmt: skip
    for folder, info in seen.items():
        text = (f"# {folder}: a host-level collective of this L3 build. It runs on every rank between the\n"
                "# dispatches, in the rank process (pypto.driver.rank_runner.host_collective), not as a\n"
                "# compiled chip kernel: there are no kernels to load here.\n"
                f"BUILTIN = {info!r}\n"
                "KERNELS = []\n")  # fmt: skip
        (out / "next_levels" / folder).mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "next_levels" / folder / "kernel_config.py", text)
    return sorted(seen)
