"""The two interpreter engines: the compiled one (default) and xDSL's walker agree on every kernel.

The compiled engine (pypto.device.interpreter.compiled) runs the same op
implementations as the xDSL interpreter; these tests hold it to that: equal
outputs bit for bit, equal per-instruction records, races and problems on
every runnable corpus and upstream kernel; recompilation after an in-place
edit; and errors located at the failing op.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_races import CORPUS, UPSTREAM, _args, _funcs, _pairs, synced_kernels

from pypto.device.interpreter import DeviceError, run_kernel
from pypto.device.interpreter.compiled import KERNELS, Unsupported
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto_with_source_map
from pypto.utils import ir_fingerprint

pytestmark = pytest.mark.skipif(not CORPUS.is_dir() or not UPSTREAM.is_dir(), reason="shared corpus not available")


def _copy(args: list) -> list:  # type: ignore[type-arg]
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def test_engines_agree_on_every_runnable_kernel() -> None:
    compared = 0
    for name, text, func, configs in synced_kernels():
        module, source_map = parse_pto_with_source_map(text, name)
        f = next(f for f in _funcs(module) if f.sym_name.data == func)
        for cfg in configs:
            args = _args(module, f, cfg)
            runs, outs = [], []
            for engine in ("compiled", "xdsl"):
                mine = _copy(args)
                runs.append(run_kernel(module, func, mine, positions=source_map.positions, pto_file=name, engine=engine))
                outs.append(mine)
            fast, slow = runs
            for a, b in zip(*outs, strict=True):
                if isinstance(a, np.ndarray):
                    assert a.tobytes() == b.tobytes(), (name, func, cfg)
            assert [r.to_json() for r in fast.records] == [r.to_json() for r in slow.records], (name, func, cfg)
            assert fast.race_messages == slow.race_messages
            assert fast.problems == slow.problems
            assert (fast.cycles, fast.per_pipe_busy) == (slow.cycles, slow.per_pipe_busy)
            compared += 1
    assert compared >= 40, compared


def test_every_runnable_kernel_compiles() -> None:
    """No silent fallback: the compiled engine takes every kernel the corpus has."""
    unsupported = []
    for name, text, func, _ in synced_kernels():
        module, _ = parse_pto_with_source_map(text, name)
        f = next(f for f in _funcs(module) if f.sym_name.data == func)
        try:
            KERNELS.get(f)
        except Unsupported as e:
            unsupported.append(f"{name}@{func}: {e}")
    assert unsupported == []


def _exp_kernel() -> tuple:  # type: ignore[type-arg]
    tile = (
        "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, "
        "slayout=none_box, fractal=512, pad=0>"
    )
    pv = "!pto.partition_tensor_view<16x16xf32>"
    text = f"""module {{
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %n: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %xv = pto.make_tensor_view %x, shape = [%c64, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %yv = pto.make_tensor_view %y, shape = [%c64, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %t = pto.alloc_tile : {tile}
    scf.for %i = %c0 to %n step %c1 {{
      %r = arith.muli %i, %c16 : index
      %xp = pto.partition_view %xv, offsets = [%r, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> {pv}
      pto.tload ins(%xp : {pv}) outs(%t : {tile})
      pto.texp ins(%t : {tile}) outs(%t : {tile})
      %yp = pto.partition_view %yv, offsets = [%r, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> {pv}
      pto.tstore ins(%t : {tile}) outs(%yp : {pv})
    }}
    return
  }}
}}
"""
    module, source_map = parse_pto_with_source_map(text, "k.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    return module, source_map.positions


def test_in_place_edit_recompiles() -> None:
    """Deleting a flag pair from an already-run module: the next run sees the edit (and races)."""
    module, positions = _exp_kernel()
    x = np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32)
    y = np.zeros_like(x)
    assert run_kernel(module, "k", [x, y, 4], positions=positions).races == []
    before = KERNELS.plan(module)
    s, w = next(p for p in _pairs(module) if p[0].dst_pipe.data.value == "PIPE_V")
    for op in (s, w):
        op.detach()
        op.erase()
    assert KERNELS.plan(module) is not before
    run = run_kernel(module, "k", [x, y, 4], positions=positions)
    assert any("texp on PIPE_V reads vec" in m for m in run.race_messages), run.race_messages


def test_a_sealed_module_is_not_fingerprinted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealed after a run: the next run checks it once more, later runs find the plan by identity alone."""
    from pypto.device.interpreter import compiled

    walks: list[object] = []

    def counted(op: object) -> list[object]:
        walks.append(op)
        return ir_fingerprint.fingerprint(op)  # type: ignore[arg-type]

    monkeypatch.setattr(compiled, "fingerprint", counted)
    module, positions = _exp_kernel()
    x = np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32)
    y = np.zeros_like(x)
    run_kernel(module, "k", [x, y, 4], positions=positions)
    run_kernel(module, "k", [x, y, 4], positions=positions)
    assert len(walks) == 2, "an unsealed module is fingerprinted on every run"
    plan = KERNELS.plan(module)
    ir_fingerprint.seal(module)
    assert ir_fingerprint.is_sealed(module)
    assert KERNELS.plan(module) is plan and len(walks) == 4
    walks.clear()
    first = y.copy()
    for _ in range(3):
        y[:] = 0
        assert run_kernel(module, "k", [x, y, 4], positions=positions).races == []
    assert walks == [] and KERNELS.plan(module) is plan
    assert np.array_equal(y, first)


def test_error_names_the_op_and_its_pto_line() -> None:
    """A window past the end of GM: the error names the tload and its .pto position (no xDSL wrapping)."""
    module, positions = _exp_kernel()
    x = np.zeros((64, 16), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(DeviceError, match=r"^k\.pto:\d+:\d+: pto\.tload: GM window offset 1024 .* outside the argument"):
        run_kernel(module, "k", [x, y, 5], positions=positions, pto_file="k.pto")
    # the xDSL engine raises for the same op
    with pytest.raises(Exception, match="outside the argument"):
        run_kernel(module, "k", [x, y, 5], positions=positions, engine="xdsl")


def test_unknown_engine_is_an_error() -> None:
    module, positions = _exp_kernel()
    x = np.zeros((64, 16), np.float32)
    with pytest.raises(DeviceError, match="unknown engine 'fast'.*compiled, xdsl"):
        run_kernel(module, "k", [x, x.copy(), 1], engine="fast")


def test_operand_edit_recompiles() -> None:
    """Replacing one operand (no op added or erased) is seen too: the row offset becomes i * 0."""
    from xdsl.dialects import arith

    module, positions = _exp_kernel()
    x = np.random.default_rng(1).standard_normal((64, 16)).astype(np.float32)
    y = np.zeros_like(x)
    run_kernel(module, "k", [x, y, 4], positions=positions)
    assert np.all(y[16:] != 0)
    muli = next(op for op in module.walk() if isinstance(op, arith.MuliOp))
    zero = next(op for op in module.walk() if isinstance(op, arith.ConstantOp) and op.value.value.data == 0)
    muli.operands[1] = zero.result
    y = np.zeros_like(x)
    run_kernel(module, "k", [x, y, 4], positions=positions)
    assert np.all(y[16:] == 0) and np.all(y[:16] != 0)


def test_run_modules_are_garbage_collected() -> None:
    """The compiled plan lives on its module: dropping the module frees both."""
    import gc
    import weakref

    refs = []
    for _ in range(3):
        module, positions = _exp_kernel()
        x = np.zeros((64, 16), np.float32)
        run_kernel(module, "k", [x, x.copy(), 2], positions=positions)
        refs.append(weakref.ref(module))
        del module, positions
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_attribute_edit_recompiles() -> None:
    """Ops are prepared once with their attributes resolved (pipes, event ids): an attribute edited in place
    is seen too. Moving one set_flag to another event id leaves its wait_flag without a signal."""
    from pypto.ptoas.dialect.attrs import Event, EventAttr

    module, positions = _exp_kernel()
    x = np.zeros((64, 16), np.float32)
    assert run_kernel(module, "k", [x, x.copy(), 2], positions=positions).problems == []
    s, _ = _pairs(module)[0]
    s.properties["event_id"] = EventAttr(Event.EVENT_ID7)
    problems = run_kernel(module, "k", [x, x.copy(), 2], positions=positions).problems
    assert any("has no set_flag before it" in p for p in problems), problems


_TILE = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=32, v_row=16, v_col=32, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
_PV = "!pto.partition_tensor_view<16x32xf32>"
_HANDSHAKES = f"""module {{
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %xv = pto.make_tensor_view %x, shape = [%c32, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %yv = pto.make_tensor_view %y, shape = [%c32, %c32], strides = [%c32, %c1] : !pto.tensor_view<?x?xf32>
    %t = pto.alloc_tile : {_TILE}
    %u = pto.alloc_tile : {_TILE}
    %e = pto.alloc_tile : {_TILE}
    %x0 = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> {_PV}
    %x1 = pto.partition_view %xv, offsets = [%c16, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> {_PV}
    %y0 = pto.partition_view %yv, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<?x?xf32> -> {_PV}
    pto.tload ins(%x0 : {_PV}) outs(%t : {_TILE})
    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.tload ins(%x1 : {_PV}) outs(%u : {_TILE})
    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.texp ins(%t : {_TILE}) outs(%e : {_TILE})
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.tadd ins(%e, %u : {_TILE}, {_TILE}) outs(%e : {_TILE})
    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.tstore ins(%e : {_TILE}) outs(%y0 : {_PV})
    return
  }}
}}
"""


def test_handshake_steps_match_the_flag_queue() -> None:
    """A set_flag directly followed by the wait_flag of the same flag runs as one step; when an older signal
    of that flag is pending (the first handshake here), the wait still consumes the oldest one: records,
    flag pairs, cycles and outputs equal the xDSL engine's, which runs every sync op on its own."""
    module, source_map = parse_pto_with_source_map(_HANDSHAKES, "h.pto")
    steps = KERNELS.get(next(f for f in _funcs(module) if f.sym_name.data == "k")).body.steps
    assert sum("flag_pair_step" in s.__qualname__ for s in steps) == 2
    x = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    runs, outs = [], []
    for engine in ("compiled", "xdsl"):
        y = np.zeros_like(x)
        runs.append(run_kernel(module, "k", [x, y], positions=source_map.positions, engine=engine))
        outs.append(y)
    fast, slow = runs
    assert outs[0].tobytes() == outs[1].tobytes()
    assert [r.to_json() for r in fast.records] == [r.to_json() for r in slow.records]
    assert fast.timeline.flag_pairs == slow.timeline.flag_pairs
    rows = [(r.instr, r.index) for r in fast.records]
    sets = [i for instr, i in rows if instr == "SET_FLAG"]
    waits = [i for instr, i in rows if instr == "WAIT_FLAG"]
    assert fast.timeline.flag_pairs[:2] == [(sets[0], waits[0]), (sets[1], waits[1])]  # oldest signal first
    assert fast.races == slow.races == [] and fast.problems == [] and fast.cycles == slow.cycles
    np.testing.assert_array_equal(outs[0][:16], (np.exp(x[:16].astype(np.float64)).astype(np.float32) + x[16:]))
