"""xDSL's ``ImplicitBuilder`` entered from two threads at once (``pypto.utils.xdsl_threads``): the parser enters it
for every ``scf.for`` it reads without a ``scf.yield``. Its swap of ``Operation.__post_init__`` is global, so two
threads inside it at once could leave a stale wrapper installed for good, and then every op an ``ImplicitBuilder``
made was inserted twice: ``test_ptoas_emitc``'s four parsing threads failed every later parse of the process
("Can't add to a block an operation already attached to a block", 39 errors in one CI run)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import xdsl.builder
from xdsl.dialects import test
from xdsl.ir import Block, Operation

import pypto.core.mlir_text  # noqa: F401  (installs the lock, as every parse of ours does)
from pypto.core.mlir_text import parse_mlir


def test_two_threads_in_implicit_builders_leave_operations_as_they_were() -> None:
    """Thread A enters, thread B tries to enter, A leaves, B leaves (the order that left A's wrapper installed):
    afterwards ``Operation.__post_init__`` is what it was, and an op made in a builder is in its block once."""
    original = Operation.__post_init__
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()

    def a() -> None:
        with xdsl.builder.ImplicitBuilder(Block()):
            a_inside.set()
            b_inside.wait(0.5)  # with the lock B cannot enter while A is inside: A leaves after the wait
        a_left.set()

    def b() -> None:
        a_inside.wait()
        with xdsl.builder.ImplicitBuilder(Block()):
            b_inside.set()
            a_left.wait(5)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Operation.__post_init__ is original
    block = Block()
    with xdsl.builder.ImplicitBuilder(block):
        op = test.TestOp()
    assert list(block.ops) == [op]


LOOP = """builtin.module {
  func.func @f(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
    }
    func.return
  }
}
"""


def test_threads_parse_loops_at_once() -> None:
    """Four threads parsing loops without their scf.yield, many times over: each parse adds its yield once."""

    def parse(_: int) -> int:
        module = parse_mlir(LOOP, "loop.mlir")
        return sum(op.name == "scf.yield" for op in module.walk())

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert set(pool.map(parse, range(400))) == {1}
