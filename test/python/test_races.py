"""The sync-race detector on a derived corpus: every flag pair deleted in turn from insert-sync'ed kernels.

For each corpus / upstream kernel (every function with a body), insert-sync
gives the synchronised kernel, which must run race-free. Then each
``set_flag``/``wait_flag`` pair is deleted in turn; the variant is kept when
the pair protected a real cross-pipe hazard: ptoas's own static checker
(``uncovered_hazards``) reports one *and* the deleted ``set_flag`` was
executed by at least one of the scalar-argument configurations tried (a pair
on a branch the inputs never take cannot be observed at run time). Every kept
variant must be reported: 100%.
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.dialects.func import FuncOp

from pypto.device.interpreter import example_args, run_kernel
from pypto.ptoas.dialect.sync_ops import SetFlagOp, WaitFlagOp
from pypto.ptoas.dialect.types import PtrType
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline, uncovered_hazards
from pypto.ptoas.pto_text import parse_pto, parse_pto_with_source_map, print_pto

CORPUS = Path("/work/shared/corpus/pto")
UPSTREAM = Path("/work/shared/reference/upstream-builds")
pytestmark = pytest.mark.skipif(not CORPUS.is_dir() or not UPSTREAM.is_dir(), reason="shared corpus not available")

SCALARS: dict[str, list[list[int | float]]] = {
    "ffn_act.pto": [[32, 32], [16, 8]],
    "qwen3_decode_incore_5.pto": [[0, 4, 0, 0]],
    "issue428_cube_sync_regression.pto": [[3]],
    "qwen3_decode_incore_9.pto": [[0, 0]],
    "qwen3_decode_incore_10.pto": [[0, 0]],
}
"""Kernel-specific scalar arguments (in order); others try 1 and 0 for ints and every i1 combination."""

MESSAGE = re.compile(
    r"^race: [\w.]+ on PIPE_\w+ (reads|writes) (vec|mat|left|right|acc|bias|scaling)\[\d+:\d+\] "
    r"(written|read) by [\w.]+ on PIPE_\w+ with no flag between( \(\S+:\d+(:\d+)?\))?$"
)


def _files() -> list[Path]:
    return sorted(CORPUS.glob("*.pto")) + sorted(UPSTREAM.glob("*/kernels/*/*.pto"))


def _scalar_configs(name: str, func: FuncOp) -> list[list[int | float]]:
    if name in SCALARS:
        return SCALARS[name]
    kinds = [t for t in func.function_type.inputs.data if not isinstance(t, PtrType)]
    bools = [i for i, t in enumerate(kinds) if isinstance(t, IntegerType) and t.width.data == 1]
    configs: list[list[int | float]] = []
    for base in (1, 0):
        for combo in itertools.product((0, 1), repeat=min(len(bools), 3)):
            cfg: list[int | float] = [base if isinstance(t, IntegerType) or t.name == "index" else 0.5 for t in kinds]
            for i, v in zip(bools, combo, strict=False):
                cfg[i] = v
            if cfg not in configs:
                configs.append(cfg)
    return configs


def _args(module: ModuleOp, func: FuncOp, scalars: list[int | float]) -> list:  # type: ignore[type-arg]
    args = example_args(module, func.sym_name.data)
    it = iter(scalars)
    return [a if isinstance(a, np.ndarray) else next(it) for a in args]


def _funcs(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.walk() if isinstance(op, FuncOp) and op.body.blocks]


def _pairs(module: ModuleOp) -> list[tuple[SetFlagOp, WaitFlagOp]]:
    """Each set_flag with the next wait_flag of the same (src, dst, event)."""
    ops = [op for op in module.walk() if isinstance(op, SetFlagOp | WaitFlagOp)]
    out = []
    for i, op in enumerate(ops):
        if isinstance(op, SetFlagOp):
            key = (op.src_pipe, op.dst_pipe, op.event_id)
            wait = next(
                w for w in ops[i + 1 :] if isinstance(w, WaitFlagOp) and (w.src_pipe, w.dst_pipe, w.event_id) == key
            )
            out.append((op, wait))
    return out


@cache
def synced_kernels(ptoas_sync: bool = False) -> list[tuple[str, str, str, list[list[int | float]]]]:
    """(file name, synced text, function, working scalar configs) of every runnable kernel
    (``ptoas_sync``: synced by PTOAS's insert-sync, what ``ptoas --enable-insert-sync`` runs)."""
    found = []
    for path in _files():
        try:
            module = parse_pto(path.read_text(), path.name)
            run_ptoas_pipeline(module, PtoasOptions(insert_sync=True, ptoas_sync=ptoas_sync))
        except Exception:  # noqa: BLE001 -- the verifier-rejection samples
            continue
        text = print_pto(module)
        for func in _funcs(module):
            ok = []
            for cfg in _scalar_configs(path.name, func):
                try:
                    run_kernel(module, func.sym_name.data, _args(module, func, cfg))
                except Exception:  # noqa: BLE001 -- e.g. a valid shape larger than the tile for these scalars
                    continue
                ok.append(cfg)
            if ok:
                found.append((path.name, text, func.sym_name.data, ok))
    return found


def test_enough_kernels_run() -> None:
    names = {k[0] for k in synced_kernels()}
    assert len(names) >= 30, sorted(names)
    assert {"add_incore_0.pto", "softmax_rows_incore_0.pto", "k_blocked.pto", "matmul.pto"} <= names


@pytest.mark.parametrize("ptoas_sync", [False, True], ids=["insert-sync", "ptoas-insert-sync"])
def test_insert_sync_kernels_never_race(ptoas_sync: bool) -> None:
    for name, text, func, configs in synced_kernels(ptoas_sync):
        module, source_map = parse_pto_with_source_map(text, name)
        for cfg in configs:
            f = next(f for f in _funcs(module) if f.sym_name.data == func)
            run = run_kernel(module, func, _args(module, f, cfg), positions=source_map.positions)
            assert run.races == [], (name, func, cfg, run.race_messages)


def test_deleted_flag_pairs_are_all_caught() -> None:
    kept = caught = 0
    missed: list[str] = []
    for name, text, func, configs in synced_kernels():
        base, source_map = parse_pto_with_source_map(text, name)
        f = next(f for f in _funcs(base) if f.sym_name.data == func)
        pairs = [p for p in _pairs(base) if p[0].parent_op() is not None and _inside(p[0], f)]
        # which set_flags each config executes (by their position in the synced text)
        executed: dict[int, list[list[int | float]]] = {}
        for cfg in configs:
            run = run_kernel(base, func, _args(base, f, cfg), positions=source_map.positions, pto_file=name)
            locs = {r.pto_loc for r in run.records if r.instr == "SET_FLAG"}
            for k, (s, _) in enumerate(pairs):
                line, col = source_map.positions[s]
                if f"{name}:{line}:{col}" in locs:
                    executed.setdefault(k, []).append(cfg)
        for k in range(len(pairs)):
            variant = parse_pto(text, name)
            vf = next(x for x in _funcs(variant) if x.sym_name.data == func)
            s, w = [p for p in _pairs(variant) if _inside(p[0], vf)][k]
            for op in (s, w):
                op.detach()
                op.erase()
            if not uncovered_hazards(variant) or k not in executed:
                continue
            kept += 1
            messages = []
            for cfg in executed[k]:
                messages += run_kernel(variant, func, _args(variant, vf, cfg)).race_messages
            if messages:
                caught += 1
                assert all(MESSAGE.match(m) for m in messages), messages
            else:
                missed.append(f"{name}@{func} pair {k}")
    assert kept >= 80, kept
    assert caught == kept, f"missed {len(missed)} of {kept}: {missed}"


def _inside(op: SetFlagOp, func: FuncOp) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not func:
        parent = parent.parent_op()
    return parent is func


def test_message_names_ops_pipes_bytes_and_dsl_line() -> None:
    path = UPSTREAM / "add/kernels/aiv/add_incore_0.pto"
    a, b, out = (np.ones((128, 128), np.float32) for _ in range(3))
    run = run_kernel(path, None, [a, b, out])
    assert (
        "race: tadd on PIPE_V reads vec[0:65536] written by tload on PIPE_MTE2 with no flag between (kernels.py:32)"
        in run.race_messages
    )
    assert any(
        m.startswith("race: tstore on PIPE_MTE3 reads vec[0:65536] written by tadd on PIPE_V")
        for m in run.race_messages
    )
    assert all(MESSAGE.match(m) for m in run.race_messages)


def test_war_is_reported_as_writes_read_by() -> None:
    """Deleting the loop-carried MTE3->MTE2 pair of softmax_rows: the next tload overwrites the tile tstore reads (WAR)
    and trowexpanddiv wrote (WAW)."""
    module = parse_pto((UPSTREAM / "softmax_rows/kernels/aiv/softmax_rows_incore_0.pto").read_text(), "s.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    for s, w in _pairs(module):
        if s.src_pipe.data.value == "PIPE_MTE3" and s.dst_pipe.data.value == "PIPE_MTE2":
            for op in (s, w):
                op.detach()
                op.erase()
    x, out = np.ones((64, 128), np.float32), np.zeros((64, 128), np.float32)
    run = run_kernel(module, None, [x, out])
    msgs = run.race_messages
    assert any(m.startswith("race: tload on PIPE_MTE2 writes vec[0:8192] read by tstore on PIPE_MTE3") for m in msgs), (
        msgs
    )
    assert any(
        m.startswith("race: tload on PIPE_MTE2 writes vec[0:8192] written by trowexpanddiv on PIPE_V") for m in msgs
    ), msgs
