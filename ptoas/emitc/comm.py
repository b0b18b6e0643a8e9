"""The cross-rank ``pto.comm.*`` ops in C++: documented traps (``pto::comm_trap`` in ``pto_cpu.hpp``).

One C++ kernel process simulates one chip and has no peer ranks, window buffers or signals, so
TNOTIFY / TWAIT / TPUT / TGET and the rank queries stop the kernel with an error that names the op
and says where it runs (the interpreter, on a multi-rank launch). ``pto.comm.peer_view`` traps too and
then names the local view (the code after it still compiles)::

    pto::comm_trap("TPUT");
    const int64_t v3 = pto::comm_trap_i64("pto.comm.get_rank");
"""

from __future__ import annotations

from xdsl.ir import Operation

from pypto.ptoas.dialect import comm_ops as C

from .context import FuncContext, handles


@handles(C.TNotifyOp, C.TWaitOp, C.TPutOp, C.TGetOp)
def _comm(ctx: FuncContext, op: Operation) -> None:
    ctx.line(f'pto::comm_trap("{op.INSTR}");')  # type: ignore[attr-defined]


@handles(C.GetRankOp, C.GetNranksOp)
def _rank_query(ctx: FuncContext, op: Operation) -> None:
    name = ctx.define(op.results[0])
    ctx.line(f'const int64_t {name} = pto::comm_trap_i64("{op.name}");')


@handles(C.PeerViewOp)
def _peer_view(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, C.PeerViewOp)
    ctx.line(f'pto::comm_trap("{op.name}");')
    ctx.views[op.result] = ctx.views[op.view]
