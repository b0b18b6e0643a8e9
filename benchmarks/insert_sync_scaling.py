"""insert-sync time against program size, inside one ``scf.for`` body and in straight-line code.

The kernel is N independent load/add/store chains on tiles all at address 0 (as MemoryReuse leaves them),
written straight in the function body (``straight``) or as the body of one ``scf.for`` (``loop``); the
benchmark times ``insert_sync_func`` alone (parsing excluded) at each N, best of ``--runs`` (the sizes run
in turn, so machine noise hits all alike; the cyclic garbage collector is off while timing, unless ``--gc``:
its full collections land at some sizes and not others, which blurs the growth), and prints its time, the
part spent placing syncs
(``SyncAnalysis.place``) and the growth per doubling of N (issue 17 goal 3: at most 2.2x). Not a timed
test: it prints ratios; ``test/python/test_ptoas_sync_scaling.py`` counts the same kernels' op steps and
placement work.

    .venv/bin/python benchmarks/insert_sync_scaling.py [--runs N] [--sizes 25,50,100,200,400]
        [--shapes loop,straight] [--clock cpu|wall] [--gc]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

from xdsl.dialects.func import FuncOp

from pypto.ptoas.passes.insert_sync import SyncAnalysis, insert_sync_func
from pypto.ptoas.pto_text import parse_pto

GOAL = 2.2
TILE = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
VIEW = "!pto.partition_tensor_view<16x16xf32>"
TENSOR = "!pto.tensor_view<?x?xf32>"


def chains(n: int) -> str:
    """A vector kernel of ``n`` load/add/store chains, every tile at address 0 (as MemoryReuse leaves them)."""
    consts = "".join(f"    %r{i} = arith.constant {16 * i} : index\n" for i in range(n))
    body = "".join(
        f"    %x{i} = pto.alloc_tile addr = %c0_i64 valid_row = %c16 valid_col = %c16 : {TILE}\n"
        f"    %a{i} = pto.partition_view %av, offsets = [%r{i}, %c0], sizes = [%c16, %c16] : {TENSOR} -> {VIEW}\n"
        f"    pto.tload ins(%a{i} : {VIEW}) outs(%x{i} : {TILE})\n"
        f"    %t{i} = pto.alloc_tile addr = %c0_i64 valid_row = %c16 valid_col = %c16 : {TILE}\n"
        f"    pto.tadd ins(%x{i}, %x{i} : {TILE}, {TILE}) outs(%t{i} : {TILE})\n"
        f"    %o{i} = pto.partition_view %ov, offsets = [%r{i}, %c0], sizes = [%c16, %c16] : {TENSOR} -> {VIEW}\n"
        f"    pto.tstore ins(%t{i} : {TILE}) outs(%o{i} : {VIEW})\n"
        for i in range(n)
    )
    views = "".join(
        f"    %{v} = pto.make_tensor_view %{arg}, shape = [%rows, %c16], strides = [%c16, %c1] "
        f"{{layout = #pto.layout<nd>}} : {TENSOR}\n"
        for v, arg in (("av", "arg0"), ("ov", "arg1"))
    )
    return (
        'module attributes {pto.target_arch = "a2a3"} {\n'
        "  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) "
        "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
        "    %c0_i64 = arith.constant 0 : i64\n    %c0 = arith.constant 0 : index\n"
        f"    %c1 = arith.constant 1 : index\n    %c16 = arith.constant 16 : index\n"
        f"    %rows = arith.constant {16 * n} : index\n{consts}{views}{body}    return\n  }}\n}}\n"
    )


def chains_in_loop(n: int) -> str:
    """``chains(n)`` with the chains as the body of one ``scf.for`` (16 trips)."""
    head, rest = chains(n).split("    %x0 = ", 1)
    body, tail = rest.rsplit("    return\n", 1)
    nested = "".join(f"  {line}\n" for line in f"    %x0 = {body}".splitlines())
    return f"{head}    scf.for %i = %c0 to %c16 step %c1 {{\n{nested}    }}\n    return\n{tail}"


SHAPES: dict[str, Callable[[int], str]] = {"loop": chains_in_loop, "straight": chains}


def function(text: str) -> FuncOp:
    """The kernel function of a module's text."""
    return next(o for o in parse_pto(text).walk() if isinstance(o, FuncOp))


def time_once(text: str, clock: Callable[[], float], collect: bool = False) -> tuple[float, float]:
    """(seconds of ``insert_sync_func``, seconds of it in ``SyncAnalysis.place``) on a fresh parse of ``text``."""
    func = function(text)
    placing = 0.0
    place = SyncAnalysis.place

    def timed(self: SyncAnalysis, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal placing
        t0 = clock()
        try:
            return place(self, *args, **kwargs)
        finally:
            placing += clock() - t0

    SyncAnalysis.place = timed  # type: ignore[method-assign]
    gc.collect()
    if not collect:
        gc.disable()
    try:
        t0 = clock()
        insert_sync_func(func, "a2a3")
        return clock() - t0, placing
    finally:
        SyncAnalysis.place = place  # type: ignore[method-assign]
        gc.enable()


def ratios(values: list[float]) -> str:
    return " ".join(f"{b / a:.2f}x" for a, b in zip(values, values[1:], strict=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="25,50,100,200,400")
    parser.add_argument("--shapes", default="loop,straight")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--gc", action="store_true", help="leave the garbage collector on while timing")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    time_once(chains_in_loop(4), clock)  # lazy imports and caches out of the way
    for shape in args.shapes.split(","):
        texts = {n: SHAPES[shape](n) for n in sizes}
        best: dict[int, tuple[float, float]] = {}
        for _ in range(args.runs):
            for n in sizes:
                got = time_once(texts[n], clock, args.gc)
                best[n] = min(best.get(n, got), got)
        total = [best[n][0] * 1000 for n in sizes]
        place = [best[n][1] * 1000 for n in sizes]
        worst = max((b / a for a, b in zip(total, total[1:], strict=False)), default=0.0)
        gc_note = "gc on" if args.gc else "gc off"
        print(f"{shape} ({args.clock}, {gc_note}, best of {args.runs}) N={'/'.join(map(str, sizes))}")
        print(f"  insert-sync {'/'.join(f'{t:.0f}' for t in total)} ms, per doubling {ratios(total)}")
        print(f"  of it place {'/'.join(f'{t:.0f}' for t in place)} ms, per doubling {ratios(place)}")
        print(f"  worst doubling {worst:.2f}x: {'meets' if worst <= GOAL else 'misses'} the {GOAL}x goal")


if __name__ == "__main__":
    main()
