"""The pld dialect (pypto.language.distributed ops): parsed from the DSL, verified, printed in both text
forms and read back."""

from __future__ import annotations

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.core.mlir_text import parse_mlir, print_mlir
from pypto.dialects.distributed_ops import AllreduceOp, SystemNotifyOp, SystemWaitOp
from pypto.errors import ParserError

SRC = """
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.InOut[pl.Tensor[[1, 256], pl.FP32]],
             sig: pl.InOut[pl.Tensor[[2, 1], pl.INT32]], rows: pl.InOut[pl.Tensor[[2, 256], pl.FP32]],
             rows2: pl.InOut[pl.Tensor[[2, 256], pl.FP32]]) -> pl.Tensor[[1, 256], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            sig = pld.system.notify(sig, 1, [0, 0], value=1, op=pld.NotifyOp.Set)
            sig = pld.system.wait(sig, [1, 0], expected=2, cmp=pld.WaitCmp.Eq)
            sig = pld.tensor.barrier(sig)
            data = pld.tensor.broadcast(data, sig, root=1)
            data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, mode=pld.AllreduceMode.MODE, core_num=CORES)
            rows = pld.tensor.allgather(data, rows, sig)
            rows = pld.tensor.reduce_scatter(rows, sig, op=pld.ReduceOp.Min)
            rows2 = pld.tensor.all_to_all(rows, rows2, sig)
        return data
"""


def program(mode: str = "mesh", cores: int = 4, src: str = SRC) -> pl.Program:
    return pl.parse(src.replace("MODE", mode).replace("CORES", str(cores)), filename="kernel.py")


def test_the_ops_parse_and_carry_their_attributes() -> None:
    prog = program()
    ops = list(prog.module.walk())
    ar = next(o for o in ops if isinstance(o, AllreduceOp))
    assert ar.arg_view().attr("op") == pld.ReduceOp.Max and ar.arg_view().attr("core_num") == 4
    assert next(o for o in ops if isinstance(o, SystemNotifyOp)).arg_view().attr("op") == pld.NotifyOp.Set
    assert next(o for o in ops if isinstance(o, SystemWaitOp)).arg_view().attr("cmp") == pld.WaitCmp.Eq
    assert {"pld.tensor.allgather", "pld.tensor.reduce_scatter", "pld.tensor.all_to_all"} <= {o.name for o in ops}


def test_both_text_forms_round_trip() -> None:
    prog = program()
    text = prog.as_python()
    assert "import pypto.language.distributed as pld" in text
    assert "pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, core_num=4)" in text
    assert "pld.system.wait(sig, [1, 0], expected=pl.const(2, pl.INT32), cmp=pld.WaitCmp.Eq)" in text  # a value
    assert "pld.tensor.reduce_scatter(rows, sig, op=pld.ReduceOp.Min)" in text
    assert pl.parse(text).as_python() == text
    for generic in (False, True):
        mlir = prog.as_mlir(generic=generic)
        assert "pld.tensor.broadcast" in mlir and "#pld<reduce_op Max>" in mlir
        assert print_mlir(parse_mlir(mlir), generic=generic) == mlir


def test_a_program_without_pld_ops_prints_no_pld_import() -> None:
    plain = SRC.replace("import pypto.language.distributed as pld\n", "")
    body = plain.split("with pl.at")[0] + "return data\n"
    assert "pld" not in pl.parse(body.replace("MODE", "mesh")).as_python()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("MODE", "ring"), "mode=ring requires core_num == 1, got 4"),
        (("CORES", "0"), "core_num must be at least 1, got 0"),
        (("[0, 0], value", "[0], value"), "'offsets' has 1 indices, expected 2 (the signal's rank)"),
        (("pl.Tensor[[2, 1], pl.INT32]", "pl.Tensor[[2, 1], pl.FP32]"), "must be an INT32 signal tensor"),
        (("root=1", "root=-1"), "root must be a rank (>= 0), got -1"),
        (("all_to_all(rows, rows2, sig)", "all_to_all(rows, rows, sig)"), "'input' must be a different buffer"),
        (("rows: pl.InOut[pl.Tensor[[2, 256]", "rows: pl.InOut[pl.Tensor[[2, 128]"), "must be one row of 'target'"),
        (("rows: pl.InOut[pl.Tensor[[2, 256], pl.FP32]", "rows: pl.InOut[pl.Tensor[[2, 256], pl.FP16]"),
         "operands 'local_data' (pl.FP32) and 'target' (pl.FP16) must have one dtype"),
    ],
)
def test_the_verifiers_name_the_line_and_the_rule(edit: tuple[str, str], message: str) -> None:
    src = SRC.replace(*edit)
    with pytest.raises(ParserError) as err:
        program(src=src, cores=0 if edit[0] == "CORES" else 4)
    text = str(err.value)
    assert message in text
    assert "kernel.py:" in text


def test_pld_calls_outside_a_kernel_explain_themselves() -> None:
    with pytest.raises(RuntimeError, match=r"pld\.tensor\.allreduce\(\.\.\.\) can only be used inside"):
        pld.tensor.allreduce(None)


RMA = """
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Rma:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 64], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
          data: pld.DistributedTensor[[1, 64], pl.FP32], box: pld.DistributedTensor[[1, 64], pl.FP32],
          sig: pld.DistributedTensor[[2, 1], pl.INT32]) -> pl.Tensor[[1, 64], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        peer = (me + 1) % pld.nranks(ctx)
        t = pl.load(x, [0, 0], [1, 64])
        data = pld.tile.remote_store(t, data, peer, [0, 0])
        box = pld.tensor.put(box, peer, data, atomic=pld.AtomicType.Add)
        box = pld.tensor.get(box, peer, data)
        sig = pld.tensor.barrier(sig)
        got = pld.tile.remote_load(data, peer, [0, 0], shape=SHAPE)
        y = pl.store(got, [0, 0], y)
        return y
"""


def rma(edit: tuple[str, str] = ("", "")) -> pl.Program:
    return pl.parse(RMA.replace(*edit).replace("SHAPE", "[1, 64]"), filename="rma.py")


def test_the_rma_ops_round_trip_in_both_text_forms() -> None:
    prog = rma()
    text = prog.as_python()
    for call in ("pld.get_comm_ctx(data)", "pld.rank(ctx)", "pld.tile.remote_store(t, data, ",
                 "pld.tensor.put(box, ", "atomic=pl.AtomicType.Add", "pld.tensor.get(box, ",
                 "pld.tile.remote_load(data, "):
        assert call in text, call
    assert pl.parse(text).as_python() == text
    for generic in (False, True):
        mlir = prog.as_mlir(generic=generic)
        assert "pld.tile.remote_load" in mlir and "pld.nranks" in mlir
        assert print_mlir(parse_mlir(mlir), generic=generic) == mlir
    # the window parameters are InOut tensors (written in place, visible to the peers)
    assert "data: pl.InOut[pl.Tensor[[1, 64], pl.FP32]]" in text


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("shape=SHAPE", "shape=[1, 128]"), "shape [1, 128] must have the rank of 'target' [1, 64] and fit in it"),
        (("box: pld.DistributedTensor[[1, 64], pl.FP32]", "box: pld.DistributedTensor[[1, 64], pl.FP16]"),
         "operands 'dst' (pl.FP16) and 'src' (pl.FP32) must have one dtype"),
        (("remote_store(t, data, peer, [0, 0])", "remote_store(t, data, peer, [0])"),
         "'offsets' has 1 indices, expected 2 (the rank of 'target')"),
    ],
)
def test_the_rma_verifiers_name_the_line_and_the_rule(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(ParserError) as err:
        rma(edit)
    assert message in str(err.value) and "rma.py:" in str(err.value)
