"""PTOAS's rules on FIFO pipe inits over reserved buffers (``pypto.ptoas.passes.fifo_rules``)."""

from __future__ import annotations

import pytest

from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import PTOVerifyError, parse_pto

RESERVE = '%r = pto.reserve_buffer {name = "c2v", size = 4096, location = #pto.address_space<mat>, auto = true} -> i32'
IMPORT = '%r = pto.import_reserved_buffer {name = "c2v", peer_func = @cube} -> i32'
INIT = "%p = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8{extra}}}(%r : i32) -> !pto.pipe"


def _module(cube: list[str], vector: list[str]) -> str:
    def func(name: str, kind: str, lines: list[str]) -> str:
        body = "".join(f"    {ln}\n" for ln in lines)
        return f"  func.func @{name}() attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{\n{body}    return\n  }}\n"

    return (
        'module attributes {pto.target_arch = "a5"} {\n'
        + func("cube", "cube", cube)
        + func("vector", "vector", vector)
        + "}\n"
    )


@pytest.mark.parametrize(
    ("cube", "vector", "error"),
    [
        ([RESERVE, INIT.format(extra="")], [IMPORT, INIT.format(extra="")], None),
        ([RESERVE, INIT.format(extra="")], [IMPORT], "requires a complete peer init pair"),
        (
            ["%r = arith.constant 0 : i32", INIT.format(extra="")],
            [],
            "requires local_addr to come from pto.reserve_buffer",
        ),
        (["%r = arith.constant 0 : i32", INIT.format(extra=", flag_base = 0")], [], None),
    ],
)
def test_peer_init_rules(cube: list[str], vector: list[str], error: str | None) -> None:
    module = parse_pto(_module(cube, vector), "k.pto")
    if error is None:
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=False))
        return
    with pytest.raises(PTOVerifyError, match=f"'pto.initialize_l2l_pipe' op {error}"):
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=False))
