"""``import pypto.language as pl``: the PyPTO DSL (a facade: it re-exports, it implements nothing).

Decorators (``@pl.program``, ``@pl.function``, ``@pl.jit``) parse the kernel
source with :mod:`ast` into xDSL IR (docs/ir.md); kernel bodies never run.
``pl.parse`` / ``pl.loads`` read printed programs (pass dumps). The front end
is :mod:`pypto.frontend`; ``@pl.jit`` dispatch is :mod:`pypto.driver.jit`.
"""

from __future__ import annotations

from pypto.utils.gc_policy import long_lived

# Defining the IR classes allocates tens of thousands of objects that live as long as the process; with
# the collector's default thresholds they trigger a full collection of everything imported before
# (torch's objects included), a large part of a fresh process's cost; with raised ones still young
# collections that traverse them. They are made in one block without collections and then moved to the
# oldest generation (gc_policy.long_lived).
with long_lived():
    from pypto.core.program import Program
    from pypto.dialects.enums import (
        AtomicType,
        CastMode,
        ForKind,
        FunctionType,
        Level,
        MemorySpace,
        PadValue,
        ParamDirection,
        Role,
        TileLayout,
    )
    from pypto.driver.jit import JITFunction, jit
    from pypto.frontend.decorators import DSL_ONLY, function, program
    from pypto.frontend.dsl_objects import (
        DTYPES,
        ConstValue,
        DType,
        DynVar,
        InOut,
        MemRef,
        Out,
        Ptr,
        Scalar,
        ScopeMode,
        Tensor,
        TensorLayout,
        TensorView,
        Tile,
        TileView,
        Tuple,
        const,
        dynamic,
    )
    from pypto.frontend.parser import loads, parse

Mem = MemorySpace
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ

# dtypes: pl.FP32, pl.INDEX, ...
globals().update(DTYPES)
BOOL = DTYPES["BOOL"]
INT8, INT16, INT32, INT64 = DTYPES["INT8"], DTYPES["INT16"], DTYPES["INT32"], DTYPES["INT64"]
UINT8, UINT16, UINT32, UINT64 = DTYPES["UINT8"], DTYPES["UINT16"], DTYPES["UINT32"], DTYPES["UINT64"]
FP16, BF16, FP32, INDEX = DTYPES["FP16"], DTYPES["BF16"], DTYPES["FP32"], DTYPES["INDEX"]

parse_program = parse
loads_program = loads

# DSL-only functions (pl.add, pl.range, ...): meaningful inside parsed kernel bodies only.
globals().update(DSL_ONLY)

__all__ = [
    "AtomicType", "CastMode", "ConstValue", "DType", "DynVar", "ForKind", "FunctionType", "InOut", "JITFunction", "Level",
    "Mem", "MemRef", "MemorySpace", "Out", "PadValue", "ParamDirection", "Program", "Ptr", "Role", "Scalar", "ScopeMode",
    "Tensor", "TensorLayout", "TensorView", "Tile", "TileLayout", "TileView", "Tuple", "const", "dynamic", "function", "jit", "loads", "loads_program",
    "parse", "parse_program", "program",
]  # fmt: skip
