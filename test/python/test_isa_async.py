"""The async DMA session ops and ``pto.print`` on both engines (issue 18 items 2 and 6).

``build_async_session`` / ``tput_async`` / ``tget_async`` / ``wait_async_event`` / ``test_async_event``
and ``print`` run in the interpreter and as g++-built C++ (PTOAS's ``pto::comm::...`` / ``cce::printf``
call shapes against ``pto_cpu.hpp``): the GM each writes and what each prints must be the same. The model
(both engines): a put / get is one GM -> GM copy of the flat view, done when issued; its event reports
completion (true). An async op on another rank's window (``pto.comm.peer_view``) is refused by the C++
emitter, naming the op; the interpreter routes it through the rank link.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pypto.device.interpreter import run_kernel
from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto, verify_pto

GM = "#pto.address_space<gm>"
F128, I64, WS = f"memref<128xf32, {GM}>", f"memref<64xi32, {GM}>", f"memref<1024xi8, {GM}>"
SCRATCH = (
    "!pto.tile_buf<loc=vec, dtype=i8, rows=1, cols=256, v_row=1, v_col=256, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
ASYNC = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%ws: {WS}, %a: {F128}, %b: {F128}, %c: {I64}, %d: {I64}) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c5 = arith.constant 5 : index
    %c63 = arith.constant 63 : index
    %s = pto.alloc_tile : {SCRATCH}
    %ses = pto.build_async_session(%s, %ws : {SCRATCH}, {WS}) {{sync_id = 3 : i32, block_bytes = 4096 : i64}} -> !pto.async_session
    %put = pto.tput_async(%b, %a, %ses : {F128}, {F128}, !pto.async_session) -> !pto.async_event
    %get = pto.tget_async(%d, %c, %ses : {I64}, {I64}, !pto.async_session) -> !pto.async_event
    %ok = pto.wait_async_event(%put, %ses : !pto.async_event, !pto.async_session) -> i1
    %t = pto.test_async_event(%get, %ses : !pto.async_event, !pto.async_session) -> i1
    pto.print ins("put done %d\\n", %ok : i1)
    pto.print ins("get done %d\\n", %t : i1)
    %x = pto.load_scalar %b[%c5] : {F128} -> f32
    pto.print ins("b[5] = %.3f\\n", %x : f32)
    %y = pto.load_scalar %d[%c63] : {I64} -> i32
    pto.print ins("d[63] = %d\\n", %y : i32)
    pto.print ins("", %x : f32)
    return
  }}
}}
"""


def _module(text: str, synced: bool = True, ptoas_sync: bool = False):  # type: ignore[no-untyped-def]
    """The parsed, verified kernel; ``synced``: after insert-sync (ours, or with ``ptoas_sync`` the PTOAS port
    that ``ptoas --enable-insert-sync`` runs)."""
    module = parse_pto(text, "async.pto")
    verify_pto(module)
    if synced:
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=True, ptoas_sync=ptoas_sync))
    return module


BOTH_SYNCS = pytest.mark.parametrize("ptoas_sync", [False, True], ids=["pipeline-insert-sync", "ptoas-port"])


def _args() -> list[np.ndarray]:
    return [
        np.zeros(1024, np.int8),
        np.arange(128, dtype=np.float32) * 1.5,
        np.full(128, np.nan, np.float32),
        np.arange(64, dtype=np.int32) * 7 - 100,
        np.full(64, -1, np.int32),
    ]


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isa-async")


@pytest.fixture(scope="module")
def lib(build_dir: Path) -> KernelLibrary:
    return KernelLibrary(build_shared(emit_cpp(_module(ASYNC)), build_dir, name="isa_async"))


def test_async_dma_and_print_agree_on_both_engines(lib: KernelLibrary, capfd: pytest.CaptureFixture[str]) -> None:
    interp = _args()
    run = run_kernel(_module(ASYNC), "k", interp)
    assert run.races == [], run.race_messages
    np.testing.assert_array_equal(interp[2], interp[1])  # put: b <- a
    np.testing.assert_array_equal(interp[4], interp[3])  # get: d <- c
    expected = "put done 1\nget done 1\nb[5] = 7.500\nd[63] = 341\n7.500000"
    assert "".join(run.prints) == expected

    cpp = emit_cpp(_module(ASYNC))
    # PTOAS's call shapes (its test/basic/async_put_get_emitc.pto checks these)
    assert "pto::comm::BuildAsyncSession<pto::comm::DmaEngine::SDMA>(" in cpp
    assert "pto::comm::sdma::SdmaBaseConfig" in cpp and "{4096ULL, 0ULL, 1u}" in cpp
    assert "pto::comm::TPUT_ASYNC<pto::comm::DmaEngine::SDMA>(" in cpp
    assert "pto::comm::TGET_ASYNC<pto::comm::DmaEngine::SDMA>(" in cpp
    assert ".Wait(" in cpp and ".Test(" in cpp
    assert 'cce::printf("put done %d\\n", ' in cpp and 'cce::printf("%f", ' in cpp
    out = _args()
    capfd.readouterr()
    lib.call("k", *out)
    printed = capfd.readouterr().out
    for got_i, got_c in zip(interp, out, strict=True):
        np.testing.assert_array_equal(got_i.view(np.uint8), got_c.view(np.uint8))
    assert printed == expected


def test_cpp_async_session_checks_fail_the_launch(lib: KernelLibrary) -> None:
    """A session built over a null workspace stops the C++ kernel with the call's name."""
    from pypto.ptoas.emitc.runner import KernelRuntimeError

    args = _args()
    with pytest.raises(KernelRuntimeError, match="BuildAsyncSession: the GM workspace is a null pointer"):
        lib.call("k", 0, *args[1:])


def _lines(module: object) -> list[str]:
    from pypto.ptoas.pto_text import print_pto

    return [ln.strip() for ln in print_pto(module).splitlines()]  # type: ignore[arg-type]


def _between(lines: list[str], first: str, then: str) -> list[str]:
    i = next(k for k, ln in enumerate(lines) if first in ln)
    j = next(k for k, ln in enumerate(lines) if then in ln and k > i)
    return lines[i:j]


@BOTH_SYNCS
def test_insert_sync_orders_scalar_reads_after_async_writes(ptoas_sync: bool) -> None:
    """tput_async (MTE3) writes %b and tget_async (MTE2) writes %d; the scalar unit's load_scalar of each
    (PIPE_S) waits for it: PTOAS's Write effect on dst, Read effect of load_scalar on its pointer."""
    lines = _lines(_module(ASYNC, ptoas_sync=ptoas_sync))
    assert any(ln.startswith("pto.wait_flag[<PIPE_MTE3>, <PIPE_S>") for ln in _between(lines, "pto.tput_async", "%b[%c5]"))
    assert any(ln.startswith("pto.wait_flag[<PIPE_MTE2>, <PIPE_S>") for ln in _between(lines, "pto.tget_async", "%d[%c63]"))


PEER = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%ws: {WS}, %win: !pto.ptr<f32>, %src: {F128}, %back: {F128}) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %s = pto.alloc_tile : {SCRATCH}
    %ses = pto.build_async_session(%s, %ws : {SCRATCH}, {WS}) -> !pto.async_session
    %tv = pto.make_tensor_view %win, shape = [%c128], strides = [%c1] : !pto.tensor_view<128xf32>
    %remote = pto.comm.peer_view %tv, %c1 : !pto.tensor_view<128xf32> -> !pto.tensor_view<128xf32>
    %put = pto.tput_async(%remote, %src, %ses : !pto.tensor_view<128xf32>, {F128}, !pto.async_session) -> !pto.async_event
    %get = pto.tget_async(%back, %remote, %ses : {F128}, !pto.tensor_view<128xf32>, !pto.async_session) -> !pto.async_event
    %ok = pto.wait_async_event(%get, %ses : !pto.async_event, !pto.async_session) -> i1
    return
  }}
}}
"""


class _Link:
    """Rank 0 of 2: the window ``%win`` of rank 1 is ``remote``; transfers are recorded, each landing 100 cycles after
    it starts (the link busy one cycle per 64 bytes)."""

    rank, nranks = 0, 2

    def __init__(self, local: np.ndarray) -> None:
        self.local, self.remote = local, np.zeros_like(local)
        self.transfers: list[tuple[str, int, int, bool]] = []

    def peer_array(self, a: np.ndarray, peer: int) -> np.ndarray:
        assert a is self.local or np.shares_memory(a, self.local)
        return self.remote if peer == 1 else self.local

    def owner(self, a: np.ndarray) -> int:
        return 1 if a is self.remote else 0

    def transfer(self, name: str, peer: int, nbytes: int, write: bool, start: int) -> int:
        self.transfers.append((name, peer, nbytes, write))
        return start + 100

    def busy(self, nbytes: int) -> int:
        return nbytes // 64

    calls: list[str]

    def fetch(self, a: np.ndarray) -> None:  # the peer's bytes are here already (one host): only recorded
        self.calls = getattr(self, "calls", []) + [f"fetch {a.size}"]

    def commit(self, a: np.ndarray) -> None:
        self.calls = getattr(self, "calls", []) + [f"commit {a.size}"]

    def update(self, a: np.ndarray, add: bool, data: np.ndarray, kind: str) -> None:
        from pypto.runtime.distributed.transport import apply

        self.calls = getattr(self, "calls", []) + [f"{'add' if add else 'set'} {a.size} {kind}"]
        apply(a, add, data, kind)


def test_async_ops_on_a_peer_window_go_over_the_rank_link() -> None:
    """The interpreter copies into / out of the peer's window and prices each transfer on the link."""
    from pypto.device.interpreter.comm_impls import rank_link

    window = np.zeros(128, np.float32)
    link = _Link(window)
    src, back = np.arange(128, dtype=np.float32) + 0.5, np.zeros(128, np.float32)
    with rank_link(link):  # type: ignore[arg-type]
        run_kernel(_module(PEER), "k", [np.zeros(1024, np.int8), window, src, back])
    np.testing.assert_array_equal(link.remote, src)  # the put landed on rank 1's window
    assert not window.any()  # not on this rank's
    np.testing.assert_array_equal(back, src)  # the get read it back
    assert link.transfers == [("tput_async -> r1", 1, 512, True), ("tget_async <- r1", 1, 512, False)]


def test_cpp_emitter_refuses_async_ops_on_a_peer_window() -> None:
    """One C++ kernel library is one chip: a put to another rank's window is refused, naming the op."""
    from pypto.ptoas.emitc.errors import EmitError

    with pytest.raises(EmitError, match=r"pto\.tput_async.*another rank's window"):
        emit_cpp(_module(PEER))


def test_views_are_accepted_as_ptoas_does_and_non_1d_views_rejected() -> None:
    from pypto.ptoas.pto_text import PTOVerifyError

    bad = PEER.replace("!pto.tensor_view<128xf32>", "!pto.tensor_view<2x64xf32>").replace(
        "shape = [%c128], strides = [%c1]", "shape = [%c2, %c64], strides = [%c64, %c1]"
    ).replace("%c128 = arith.constant 128 : index", "%c2 = arith.constant 2 : index\n    %c64 = arith.constant 64 : index")
    with pytest.raises(PTOVerifyError, match="expects dst to be a static flat contiguous logical 1D GM view"):
        _module(bad, synced=False)


# ---------------------------------------------------------------- issue 18 item 6: sync insertion and races

V16 = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
ITEM6 = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%ws: {WS}, %a: {F128}, %b: {F128}, %d: {F128}, %x: !pto.ptr<f32>, %y: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %two = arith.constant 2.0 : f32
    %k = arith.constant 7 : i8
    %x_tv = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %x_pv = pto.partition_view %x_tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %y_tv = pto.make_tensor_view %y, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %y_pv = pto.partition_view %y_tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %x_t = pto.alloc_tile : {V16}
    %w = pto.alloc_tile : {V16}
    %y_t = pto.alloc_tile : {V16}
    pto.tload ins(%x_pv : !pto.partition_tensor_view<16x16xf32>) outs(%x_t : {V16})
    pto.tmuls ins(%x_t, %two : {V16}, f32) outs(%w : {V16})
    %r = arith.constant 0 : i32
    %p = pto.initialize_l2l_pipe {{dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0}}(%r : i32) -> !pto.pipe
    pto.tpush(%w, %p : {V16}, !pto.pipe) {{split = 0}}
    %t = pto.declare_tile -> {V16}
    pto.tpop(%t, %p : {V16}, !pto.pipe) {{split = 0}}
    pto.tadds ins(%t, %two : {V16}, f32) outs(%y_t : {V16})
    pto.tfree(%p : !pto.pipe) {{split = 0}}
    pto.tstore ins(%y_t : {V16}) outs(%y_pv : !pto.partition_tensor_view<16x16xf32>)
    %s1 = pto.alloc_tile : {SCRATCH}
    %s2 = pto.alloc_tile : {SCRATCH}
    %ses1 = pto.build_async_session(%s1, %ws : {SCRATCH}, {WS}) -> !pto.async_session
    %ses2 = pto.build_async_session(%s2, %ws : {SCRATCH}, {WS}) {{sync_id = 1 : i32}} -> !pto.async_session
    %put = pto.tput_async(%b, %a, %ses1 : {F128}, {F128}, !pto.async_session) -> !pto.async_event
    %get = pto.tget_async(%d, %b, %ses2 : {F128}, {F128}, !pto.async_session) -> !pto.async_event
    pto.texpands ins(%k : i8) outs(%s2 : {SCRATCH})
    %ok = pto.wait_async_event(%get, %ses2 : !pto.async_event, !pto.async_session) -> i1
    return
  }}
}}
"""


def _item6_args() -> list[np.ndarray]:
    x = np.arange(256, dtype=np.float32).reshape(16, 16) / 8
    return [np.zeros(1024, np.int8), np.arange(128, dtype=np.float32), np.zeros(128, np.float32),
            np.zeros(128, np.float32), x, np.zeros((16, 16), np.float32)]


@BOTH_SYNCS
def test_insert_sync_orders_the_pipe_and_async_ops_accesses(ptoas_sync: bool) -> None:
    """Each hazard through a pipe or async op gets its flag pair: tmuls (V) -> tpush reading %w (MTE3);
    tpop writing %t (MTE2) -> tadds (V); tput_async writing GM %b (MTE3) -> tget_async reading it (MTE2:
    distinct sessions, so only the GM orders them); tget_async staging in %s2 (MTE2) -> texpands (V)."""
    lines = _lines(_module(ITEM6, ptoas_sync=ptoas_sync))
    waits = {
        ("pto.tmuls", "pto.tpush("): "<PIPE_V>, <PIPE_MTE3>",
        ("pto.tpop(", "pto.tadds"): "<PIPE_MTE2>, <PIPE_V>",
        ("pto.tput_async", "pto.tget_async"): "<PIPE_MTE3>, <PIPE_MTE2>",
        ("pto.tget_async", "pto.texpands"): "<PIPE_MTE2>, <PIPE_V>",
    }
    for (first, then), pipes in waits.items():
        assert any(ln.startswith(f"pto.wait_flag[{pipes}") for ln in _between(lines, first, then)), (first, then)


def test_race_detector_sees_the_pipe_and_async_ops_accesses() -> None:
    """Without insert-sync the race detector reports each of those hazards (by op and kind); after it, none."""
    racy = run_kernel(_module(ITEM6, synced=False), "k", _item6_args())
    msgs = racy.race_messages
    for op, other in (("tpush", "tmuls"), ("tadds", "tpop"), ("texpands", "tget_async")):
        assert any(f"race: {op} " in m and f"by {other} " in m for m in msgs), (op, other, msgs)
    clean = run_kernel(_module(ITEM6), "k", args := _item6_args())
    assert clean.races == [], clean.race_messages
    np.testing.assert_array_equal(args[5], args[4] * 2 + 2)
    np.testing.assert_array_equal(args[3], args[1])


PEER_TILES = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%win: !pto.ptr<f32>, %x: !pto.ptr<f32>, %back: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %x_tv = pto.make_tensor_view %x, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %x_pv = pto.partition_view %x_tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %w_tv = pto.make_tensor_view %win, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %r_tv = pto.comm.peer_view %w_tv, %c1 : !pto.tensor_view<?x?xf32> -> !pto.tensor_view<?x?xf32>
    %r_pv = pto.partition_view %r_tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %b_tv = pto.make_tensor_view %back, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %b_pv = pto.partition_view %b_tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
    %t = pto.alloc_tile : {V16}
    %u = pto.alloc_tile : {V16}
    pto.tload ins(%x_pv : !pto.partition_tensor_view<16x16xf32>) outs(%t : {V16})
    pto.tstore ins(%t : {V16}) outs(%r_pv : !pto.partition_tensor_view<16x16xf32>) {{atomicType = #pto<atomic_type atomic_add>}}
    pto.tstore ins(%t : {V16}) outs(%r_pv : !pto.partition_tensor_view<16x16xf32>) {{atomicType = #pto<atomic_type atomic_add>}}
    pto.tload ins(%r_pv : !pto.partition_tensor_view<16x16xf32>) outs(%u : {V16})
    pto.tstore ins(%u : {V16}) outs(%b_pv : !pto.partition_tensor_view<16x16xf32>)
    return
  }}
}}
"""


def test_tile_moves_through_a_peer_view_fetch_and_add_at_the_owner() -> None:
    """A tload / tstore through a peer's view asks the rank link for the owner's bytes (fetch) and adds an
    atomic tstore at the owner (update, in the element type), so a region on another host stays right."""
    from pypto.device.interpreter.comm_impls import rank_link

    window = np.zeros((16, 16), np.float32)
    link = _Link(window)
    x, back = np.arange(256, dtype=np.float32).reshape(16, 16), np.zeros((16, 16), np.float32)
    with rank_link(link):  # type: ignore[arg-type]
        run_kernel(_module(PEER_TILES), "k", [window, x, back])
    np.testing.assert_array_equal(link.remote, 2 * x)  # both atomic stores landed on rank 1's window
    np.testing.assert_array_equal(back, 2 * x)
    assert not window.any()
    assert link.calls == ["add 256 fp32", "add 256 fp32", "fetch 256"]
