"""Compile the add kernel into argv[1] with the Default pipeline (lit helper);
with ``boom``, a failing pass (from boom_plugin.py) runs after pass 9."""

import sys
from pathlib import Path

import pypto.language as pl
from pypto.ir import compile
from pypto.passes.pipeline_order import DEFAULT_PIPELINE
from pypto.passes.registry import get_pass

SOURCE = """import pypto.language as pl


@pl.program
class add:
    @pl.function(type=pl.FunctionType.Orchestration)
    def add(
        self,
        a: pl.Tensor[[128, 128], pl.FP32],
        b: pl.Tensor[[128, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
    ) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out
"""

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
(out / "add.py").write_text(SOURCE)
passes = None
if len(sys.argv) > 2 and sys.argv[2] == "boom":
    sys.path.insert(0, str(Path(__file__).parent))
    import boom_plugin  # noqa: F401  (registers test-boom)

    passes = [get_pass(k) for _, k in DEFAULT_PIPELINE]
    passes.insert(9, get_pass("test-boom"))
try:
    compile(pl.loads(out / "add.py"), output_dir=out / "o", passes=passes)
except RuntimeError as e:
    print(f"compile failed: {type(e).__name__}")
