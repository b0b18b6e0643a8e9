"""What keeps DFX collection cheap on the host (benchmarks/dfx_overhead.py) without changing an artefact:
``args.bin`` is written from its payloads without joining them, and what several collectors read from a run is built once (``per_run``: the name
map is written once when both the swimlane and dep_gen ask for it), an atomic write creates its file with its
final mode (no ``fchmod`` under the usual umasks), a run's artefacts are written together once every
collector finished (``finish_all``, ``atomic_write_files``), ``json_text`` writes a collector's pre-formatted
(:class:`~pypto.runtime.dfx.jsonenc.Encoded`) rows as they are, and a run with every flag off has no collector."""

from __future__ import annotations

import json
import math
import os
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig
from pypto.runtime.dfx import base, deps
from pypto.runtime.dfx.base import per_run
from pypto.runtime.dfx.jsonenc import compact_encoder, round6
from pypto.utils.atomic import atomic_write_bytes

ROOT = Path(__file__).resolve().parents[2]


def test_atomic_write_of_chunks_is_their_concatenation(tmp_path: Path) -> None:
    path = tmp_path / "args.bin"
    chunks = [b"\x00\x01", b"", bytes(range(256)) * 300, b"end"]
    atomic_write_bytes(path, chunks, durable=False)
    assert path.read_bytes() == b"".join(chunks)
    atomic_write_bytes(path, [], durable=False)
    assert path.read_bytes() == b""
    with pytest.raises(TypeError):
        atomic_write_bytes(path, [b"ok", 3], durable=False)  # type: ignore[list-item]
    assert path.read_bytes() == b"" and [p.name for p in tmp_path.iterdir()] == ["args.bin"]


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077, 0o000])
def test_atomic_write_leaves_mode_0644_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    import stat

    path = tmp_path / "a.json"
    old = os.umask(umask)
    try:
        atomic_write_bytes(path, b"{}", durable=False)  # created with 0644: a fchmod only if the umask took bits
        atomic_write_bytes(path, [b"[", b"]"], durable=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 and path.read_bytes() == b"[]"


def test_write_artefact_makes_a_missing_folder_only_when_the_write_finds_it_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "dfx_outputs" / "args_dump" / "args_dump.json"
    assert base.write_artefact(path, "{}\n") == path and path.read_text() == "{}\n"  # both folders made
    looked: list[str] = []
    real_isdir = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: looked.append(str(p)) or real_isdir(p))
    base.write_artefact(path, "[]\n")  # the folder is there: nothing looks for it
    assert path.read_text() == "[]\n" and looked == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):  # a file where the folder should be: the write's own error
        base.write_artefact(tmp_path / "file" / "a.json", "{}")
    assert sorted(p.name for p in path.parent.iterdir()) == ["args_dump.json"]  # no temporary file left


def test_atomic_write_names_its_temporary_file_with_the_writers_pid(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from pypto.utils import atomic\n"
        "seen = []\n"
        "real = os.open\n"
        "os.open = lambda p, *a: seen.append(p) or real(p, *a)\n"
        "pid = os.fork()\n"
        "atomic.atomic_write_bytes(sys.argv[1] + ('/child' if pid == 0 else '/parent'), b'x', durable=False)\n"
        "os.write(1, f'{os.getpid()} {seen[-1]}\\n'.encode())\n"  # one write a line: the two never interleave
        "os._exit(0) if pid == 0 else os.waitpid(pid, 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    lines = [line.split() for line in out.stdout.splitlines()]
    assert len(lines) == 2 and len({pid for pid, _ in lines}) == 2
    for pid, temp in lines:  # a forked child names its temporary files with its own pid, not its parent's
        assert Path(temp).name.split(".")[-3] == pid


def test_json_text_writes_encoded_outer_items_as_they_are() -> None:
    from pypto.runtime.dfx.jsonenc import Encoded

    doc = {"rows": [Encoded('{"a":1}'), {"b": [2]}], "one": Encoded("[3,4]"), "deep": {"x": [Encoded("s")]}}
    assert base.json_text(doc).splitlines() == [
        "{", ' "rows": [', '  {"a":1},', '  {"b":[2]}', " ],", ' "one": [3,4],', ' "deep": {', '  "x": ["s"]', " }", "}",
    ]  # fmt: skip


@pytest.mark.parametrize("payload", [
    {"b": [1, -2, 2**63 - 1, True, None, 0.5, 1e300, -0.0], "a": {"z": "", "y": "é</script>&\u2028\u2029\x01\n\\"}},
    {"ints as keys": {3: "x", 10: "y"}},  # orjson takes string keys only: json's spelling (keys sorted as ints)
    {"big": 2**70, "np": np.float64(0.25)},  # beyond orjson: json
    [],
])  # fmt: skip
def test_embed_json_is_json_dumps_with_script_escapes(payload: Any) -> None:
    """A report page's data through orjson (``pypto.reports.embed_json_bytes``) is json's sorted compact text
    with the ``<script>`` escapes, whichever encoder took it."""
    from pypto.reports import embed_json_bytes

    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, esc)
    assert embed_json_bytes(payload) == text.encode("utf-8")


@pytest.mark.parametrize("value", [
    {"kind": "dispatch", "start_cycles": 277, "end_cycles": 314, "loop_iter": 1, "shared_at_start": [1, 0, 0]},
    [0, 4294967296, 1, 1000, 1600, 20], [], {}, [True, False, None, -(2**63), 2**64 - 1, "a\"b\\c\n"],
    {1: [2]}, [2**70],  # beyond orjson: json
])  # fmt: skip
def test_plain_json_is_json_dumps_for_records(value: Any) -> None:
    """The swimlane rows and scheduler phases through orjson (``jsonenc.plain_json``): json.dumps's text."""
    from pypto.runtime.dfx.jsonenc import plain_json

    assert plain_json(value) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize("extra", [{}, {"beyond orjson": 2**70}])
def test_embed_json_spells_small_floats_without_exponent_and_nan_as_null(extra: dict[str, Any]) -> None:
    """Where orjson's text differs from json's: the same value to a JSON reader, never a NaN literal, on the
    orjson path and on json's (a value orjson does not take) alike."""
    from pypto.reports import embed_json_bytes

    assert json.loads(embed_json_bytes([1e-05, 3.5e-05])) == [1e-05, 3.5e-05]
    text = embed_json_bytes({"x": float("nan"), "y": [float("inf")], **extra})
    assert json.loads(text) == {"x": None, "y": [None], **extra}


def test_a_trace_of_ids_beyond_64_bits_is_a_located_input_error() -> None:
    """A records file whose task id orjson cannot spell gives the converter's input error, not a TypeError."""
    from pypto.runtime.dfx.trace import TraceInputError, chrome_trace_text

    records = {
        "metadata": {"clock_freq_hz": 1.5e9, "core_types": ["aic"], "core_to_thread": [0]},
        "aicore_tasks": [[0, 1, 5, 100, 200]], "aicpu_tasks": [[0, 1, 90, 210]], "aicpu_scheduler_phases": [],
        "aicpu_orchestrator_phases": [[{"submit_idx": 0, "task_id": 2**65, "start_cycles": 10, "end_cycles": 20}]],
    }  # fmt: skip
    with pytest.raises(TraceInputError, match="below 2\\*\\*64"):
        chrome_trace_text(records)
    records["aicpu_orchestrator_phases"][0][0]["task_id"] = 1
    assert json.loads(chrome_trace_text(records))["traceEvents"]


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def test_round6_is_round_to_6_digits() -> None:
    """``jsonenc.round6`` (the merged trace's µs, the run report's ratios) is ``round(x, 6)``, bit for bit: ties,
    signed zeros, huge and non-finite values included."""
    rnd = random.Random(17)
    edge = [0.0, -0.0, 1e-7, -1e-7, 5e-7, -5e-7, 0.0078125, -0.0078125, 2.5e-6, 1.0000005, 12.5, 1e300, -1e300,
            float("inf"), float("-inf"), 2**40 / 1e6, 2**41 / 1e6, 0.1, 0.3, 123456.7890125]  # fmt: skip
    values = edge + [rnd.uniform(-1e4, 1e4) for _ in range(20000)]
    values += [rnd.randint(-(10**9), 10**9) * 0.02 for _ in range(20000)]  # a2a3 cycles in µs
    values += [rnd.randint(-(10**8), 10**8) / 2 ** rnd.randint(0, 30) for _ in range(20000)]  # exact binary ties
    values += [round(rnd.randint(0, 10**6) / 50, 6) - round(rnd.randint(0, 10**6) / 1850, 6) for _ in range(20000)]
    values += [
        (round(rnd.randint(0, 10**9) / 1850, 6) + round(rnd.randint(0, 10**9) / 1850, 6)) / 2 for _ in range(20000)
    ]  # midpoints: an exact decimal tie when the two are an odd count apart
    values += [(rnd.randint(-(2**40), 2**40) + eps) / 1e6 for eps in (0.4999, 0.49995, 0.5001, 0.50005, 0.49999)
               for _ in range(4000)]  # either side of round6's band, up to its 2**40 limit  # fmt: skip
    assert [_bits(round6(x)) for x in values] == [_bits(round(x, 6)) for x in values]
    assert math.isnan(round6(float("nan")))


def test_a_compact_encoder_is_built_once_and_forgets_a_failed_call() -> None:
    encode = compact_encoder(False)
    assert compact_encoder(False) is encode and compact_encoder(True) is not encode
    doc = [[1.0], [float("nan")]]
    with pytest.raises(ValueError, match="Out of range"):
        encode(doc)  # fails inside ``doc``
    doc[1] = [2.0]
    assert encode(doc) == "[[1.0],[2.0]]"  # not a "circular reference" left from the failed call


def test_a_run_with_every_flag_off_has_no_collector() -> None:
    from pypto.runtime.config import DFX_FLAGS

    cfg = RunConfig(**dict.fromkeys(DFX_FLAGS, 0))
    assert base.collectors_for(cfg, Path("build")) == []
    assert base.finish_all([], _Result()) == {}


class _Result:
    """A stand-in run result (per_run keeps its memo on the result object)."""


def test_per_run_builds_once_while_collectors_finish() -> None:
    built: list[str] = []

    class Twice(base.Collector):
        FLAG = "test_twice"

        def finish(self, result: Any) -> list[Path]:
            first = per_run(result, "k", lambda: built.append("x") or ["value"])
            assert per_run(result, "k", lambda: built.append("y") or ["other"]) is first
            return []

    result = _Result()
    base.finish_all([Twice(1, Path(".")), Twice(1, Path("."))], result)
    assert built == ["x"]  # two collectors, two calls each: built once
    assert not hasattr(result, "_dfx_memo")  # dropped when the run's collectors are done
    per_run(result, "k", lambda: built.append("z"))
    per_run(result, "k", lambda: built.append("z"))
    assert built == ["x", "z", "z"]  # outside finish_all nothing is kept


def test_finish_all_writes_every_artefact_once_every_collector_finished(tmp_path: Path) -> None:
    order: list[str] = []

    class Writes(base.Collector):
        FLAG = "test_writes"

        def finish(self, result: Any) -> list[Path]:
            path = base.write_artefact(self.out_dir / "a" / "first.bin", [b"ab", b"cd"])
            assert not path.exists()  # waits for the other collectors
            base.when_written(lambda: order.append("released" if path.exists() else "too early"))
            return [path]

    class Fails(base.Collector):
        FLAG = "test_fails"

        def finish(self, result: Any) -> list[Path]:
            base.write_artefact(self.out_dir / "second.json", "{}")
            raise RuntimeError("collector failed")

    out = base.finish_all([Writes(1, tmp_path), base.Collector(1, tmp_path)], _Result())
    assert out["test_writes"] == [tmp_path / "a" / "first.bin"] and order == ["released"]
    assert (tmp_path / "a" / "first.bin").read_bytes() == b"abcd"  # its missing folder made on the way
    (tmp_path / "a" / "first.bin").unlink()
    with pytest.raises(RuntimeError, match="collector failed"):  # what the others finished is still written
        base.finish_all([Writes(1, tmp_path), Fails(1, tmp_path)], _Result())
    assert (tmp_path / "a" / "first.bin").exists() and (tmp_path / "second.json").read_text() == "{}"
    assert order == ["released", "released"]
    base.write_artefact(tmp_path / "now.json", "[]")  # outside finish_all: written at once
    assert (tmp_path / "now.json").read_text() == "[]"


def test_a_run_calls_the_task_hooks_of_the_collectors_that_watch_tasks_only() -> None:
    class Watches(base.Collector):
        FLAG = "test_watches"

        def before_task(self, task: Any, part: Any) -> None:
            pass

    watching, reading = Watches(1, Path(".")), base.Collector(1, Path("."))
    before, after = base.task_hooks([reading, watching])
    assert before == [watching.before_task] and after == []  # the base class's no-op hooks are not called
    from pypto.runtime.dfx.args_dump import ArgsDumpCollector
    from pypto.runtime.dfx.pmu import PmuCollector

    args, pmu_ = ArgsDumpCollector(2, Path(".")), PmuCollector(2, Path("."))
    assert base.task_hooks([pmu_, args]) == ([args.before_task], [args.after_task])


def test_atomic_write_files_failing_while_writing_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    from pypto.utils.atomic import atomic_write_files

    (tmp_path / "old.json").write_text("old")
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):  # the second file's folder is a file
        atomic_write_files([(tmp_path / "old.json", b"new"), (tmp_path / "file" / "b.json", b"{}")], make_folders=True)
    assert (tmp_path / "old.json").read_text() == "old"  # not replaced: the first temporary file is gone too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "old.json"]
    with pytest.raises(FileNotFoundError):  # without make_folders a missing folder is the write's error
        atomic_write_files([(tmp_path / "new" / "c.json", b"{}")])
    atomic_write_files([(tmp_path / "old.json", [b"n", b"ew"]), (tmp_path / "new" / "c.json", b"{}")], make_folders=True)
    assert (tmp_path / "old.json").read_text() == "new" and (tmp_path / "new" / "c.json").read_text() == "{}"


@pl.jit
def _two_stages(a: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
        y[:] = pl.mul(x, a)
    return x, y


@pytest.mark.usefixtures("own_dfx_flags")
def test_name_map_written_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    real = deps.write_artefact

    def counting(path: Path, data: Any) -> Path:
        written.append(path.name)
        return real(path, data)

    monkeypatch.setattr(deps, "write_artefact", counting)
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    flags = {"enable_chip_swimlane": 4, "enable_dep_gen": True}
    _two_stages(a, x, y, config=RunConfig(save_kernels_dir=str(tmp_path / "build"), **flags))
    maps = [n for n in written if n.startswith("name_map_")]
    assert maps == ["name_map_build.json"] and "deps.json" in written
    name_map = json.loads((tmp_path / "build" / "dfx_outputs" / "name_map_build.json").read_text())
    assert sorted(name_map["callable_id_to_name"].values()) == ["first", "second"]


def test_benchmark_runs_and_keeps_cycles(tmp_path: Path) -> None:
    """benchmarks/dfx_overhead.py on a small example: both configurations ran, the same simulated cycles
    (the script asserts it), a ratio printed."""
    example = ROOT / "examples" / "intermediate" / "07_task_graph.py"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "dfx_overhead.py"), "--repeat", "1", "--clock", "cpu",
           "--example", str(example)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    on = next(line for line in lines if line.startswith("every flag at its highest level"))
    off = next(line for line in lines if line.startswith("every flag off"))
    assert on.split("simulated cycles")[1] == off.split("simulated cycles")[1]
    assert "ms CPU" in on and any(line.startswith("ratio: ") for line in lines)


@pytest.mark.usefixtures("own_dfx_flags")
@pytest.mark.parametrize("check_inputs", [None, False])
def test_args_dump_copies_a_state_only_before_it_changes(tmp_path: Path, check_inputs: bool | None) -> None:
    """A captured buffer state stays a view of the buffer until a part is about to write it (then it is
    copied): the payloads are still each state at its capture, with or without the run's input check
    (without it, In buffers are copied before each part too), and the same bytes."""
    from test_dfx_args import _dump_me, _payload, dump_me

    m, blob, t = _dump_me(tmp_path / str(check_inputs), dump_me, enable_dump_args=2, check_inputs=check_inputs)
    by = {(int(x["task_id"], 16), x["stage"], x["arg_index"]): _payload(x, blob)
          for x in m["args"] if x["kind"] == "tensor"}  # fmt: skip
    a, acc0, acc, out = (t[k].numpy() for k in ("a", "acc0", "acc", "out"))
    half = np.zeros_like(out)
    half[:32] = 2 * a[:32]
    assert np.array_equal(by[0, "after_completion", 2], half)  # copied when task 1 wrote `out`
    assert np.array_equal(by[2, "before_dispatch", 0], acc0)  # copied before task 2 wrote `acc` in place
    assert np.array_equal(by[2, "after_completion", 0], acc)  # the last state: read from the buffer
    m2, blob2, _ = _dump_me(tmp_path / "again", dump_me, enable_dump_args=2)  # reuses the blocks copied above
    assert blob2 == blob and {**m2, "run_dir": None} == {**m, "run_dir": None}


@pytest.mark.usefixtures("own_dfx_flags")
@pytest.mark.parametrize("incore", [False, True])
def test_a_flagged_run_leaves_no_reference_cycles(tmp_path: Path, incore: bool) -> None:
    """What a flagged run builds is freed by reference counting: cyclic garbage (a recursive closure was some)
    survives into the oldest generation and makes the collector sweep the whole heap, compiled IR and all, every
    hundred or so runs."""
    import gc

    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    flags = {"enable_chip_swimlane": 4, "enable_dump_args": 2, "enable_pmu": 2, "enable_dep_gen": True,
             "enable_scope_stats": True, "enable_incore_trace": incore}  # fmt: skip
    config = RunConfig(save_kernels_dir=str(tmp_path / "build"), **flags)
    _two_stages(a, x, y, config=config)  # compiled (the IR's cycles are the compile's), one run
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        _two_stages(a, x, y, config=config)
        gc.collect()
        garbage = [type(o).__qualname__ + (f" {o.__qualname__}" if callable(o) else "") for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert (tmp_path / "build" / "dfx_outputs" / "run_report.html").is_file()
    assert garbage == []


def test_kept_files_skip_a_write_only_of_the_same_bytes_to_an_untouched_file(tmp_path: Path) -> None:
    """``atomic_write_files(kept=)``: the same bytes again to a file nobody touched leave it as it is (its inode
    and time stamp), also from a reused buffer; other bytes, a file edited, replaced or removed since, a file too
    large to keep or one the memory dropped, are written."""
    from pypto.utils.atomic import KeptFiles, atomic_write_files

    kept = KeptFiles(max_files=2)
    a, b = tmp_path / "a.json", tmp_path / "b.html"

    def stamp(p: Path) -> tuple[int, int]:
        st = p.stat()
        return st.st_ino, st.st_mtime_ns

    atomic_write_files([(a, b"{}"), (b, [b"<p>", b"x"])], kept=kept)
    first = stamp(a), stamp(b)
    atomic_write_files([(a, b"{}"), (b, [b"<p>", b"x"])], kept=kept)
    assert (stamp(a), stamp(b)) == first  # nothing written
    atomic_write_files([(b, [b"<p>", b"y"])], kept=kept)
    assert b.read_bytes() == b"<p>y" and stamp(b) != first[1]
    for change in (lambda: os.utime(a, ns=(1, 1)), lambda: a.write_bytes(b"[]"), a.unlink):
        change()  # edited in place (the same size), its time stamp changed, or removed: written again
        atomic_write_files([(a, b"{}")], kept=kept)
        assert a.read_bytes() == b"{}"
        again = stamp(a)
        atomic_write_files([(a, b"{}")], kept=kept)
        assert stamp(a) == again
    buffer = bytearray(b"12")
    c = tmp_path / "c.bin"
    atomic_write_files([(c, [memoryview(buffer), b"3"])], kept=kept)  # kept as a copy: the buffer may be reused
    before = stamp(c)
    atomic_write_files([(c, [memoryview(buffer), b"3"])], kept=kept)
    assert stamp(c) == before
    buffer[0] = ord("9")
    atomic_write_files([(c, [memoryview(buffer), b"3"])], kept=kept)
    assert c.read_bytes() == b"923" and stamp(c) != before
    small = KeptFiles(max_bytes=16)  # a file of more than 4 bytes is not kept
    for _ in range(2):
        before = stamp(c)
        atomic_write_files([(c, b"12345")], kept=small)
        assert stamp(c) != before
    again = stamp(a)
    atomic_write_files([(tmp_path / "d.json", b"1"), (tmp_path / "e.json", b"2")], kept=kept)  # a dropped (2 files)
    atomic_write_files([(a, b"{}")], kept=kept)
    assert stamp(a) != again


def test_kept_files_compare_buffers_where_they_lie(tmp_path: Path) -> None:
    """A write of buffers (``args.bin``'s views of a run's tensors) is compared with the kept bytes chunk by chunk,
    whatever the chunks' boundaries: the same bytes are skipped, one byte changed anywhere, or a longer or shorter
    payload, is written."""
    import numpy as np

    from pypto.utils.atomic import KeptFiles, atomic_write_files

    kept = KeptFiles()
    path = tmp_path / "args.bin"
    tensor = np.arange(12, dtype=np.float32).reshape(3, 4)

    def write(*chunks: object) -> bool:
        """Write ``chunks``; whether the file was written (its inode changed)."""
        before = path.stat().st_ino if path.exists() else None
        atomic_write_files([(path, list(chunks))], kept=kept)
        return path.stat().st_ino != before

    view = memoryview(tensor.reshape(-1).view(np.uint8))
    assert write(b"head", view)
    assert not write(b"head", view)
    assert not write(b"he", bytearray(b"ad") + tensor.tobytes())  # other boundaries, the same bytes
    tensor[2, 3] = -1.0  # the last byte of the view changed
    assert write(b"head", view)
    assert path.read_bytes() == b"head" + tensor.tobytes()
    assert write(b"head", view, b"!") and write(b"head", view)  # longer, then shorter again


def test_across_runs_builds_again_for_another_key_only() -> None:
    """``across_runs``: an equal key gives the value built before; another key, ``keep=False`` or a slot used
    least recently beyond the last :data:`ACROSS_RUNS_SLOTS` builds again."""
    built: list[int] = []

    def build(n: int) -> Any:
        built.append(n)
        return [n]

    slot = ("test", object())
    first = base.across_runs(slot, {"rows": [[1, 2]]}, lambda: build(1))
    assert base.across_runs(slot, {"rows": [[1, 2]]}, lambda: build(2)) is first and built == [1]
    assert base.across_runs(slot, {"rows": [[1, 3]]}, lambda: build(3)) == [3]
    assert base.across_runs(("other", slot), {"rows": [[1, 3]]}, lambda: build(4)) == [4]  # slots are apart
    base.across_runs(slot, "big", lambda: build(5), keep=False)
    assert base.across_runs(slot, "big", lambda: build(6)) == [6]
    for i in range(base.ACROSS_RUNS_SLOTS):
        base.across_runs(("fill", i), i, lambda: build(-1))
    assert base.across_runs(slot, "big", lambda: build(7)) == [7] and built[-1] == 7
    base.forget_earlier_runs()


@pytest.mark.usefixtures("own_dfx_flags")
def test_a_run_again_writes_what_a_fresh_process_would(tmp_path: Path) -> None:
    """Run again with the same timing, a program's artefacts are the texts an earlier run built (and their files
    are left as they are), and they are the texts built afresh: what :func:`across_runs` keeps is all they
    depend on. Another level or another program in the same folder writes its own."""
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    dfx = build / "dfx_outputs"
    flags = {"enable_chip_swimlane": 4, "enable_pmu": 2, "enable_dep_gen": True, "enable_scope_stats": True,
             "enable_dump_args": 2}  # fmt: skip

    def texts() -> dict[str, bytes]:
        return {p.relative_to(dfx).as_posix(): p.read_bytes() for p in sorted(dfx.rglob("*")) if p.is_file()}

    base.forget_earlier_runs()
    _two_stages(a, x, y, config=RunConfig(save_kernels_dir=str(build), **flags))
    first = texts()
    inodes = {p: p.stat().st_ino for p in dfx.rglob("*.*")}
    _two_stages(a, x, y, config=RunConfig(save_kernels_dir=str(build), **flags))
    second = texts()
    assert {k: v for k, v in second.items() if not k.startswith("merged_")} == {
        k: v for k, v in first.items() if not k.startswith("merged_")
    }
    assert {p: p.stat().st_ino for p in dfx.rglob("*.*") if p in inodes and not p.name.startswith("merged_")} == {
        p: i for p, i in inodes.items() if not p.name.startswith("merged_")
    }  # the same files
    import gc

    gc.collect()  # what is kept across runs is nothing the cyclic collector tracks (no promotion each run)
    assert base._ACROSS_RUNS and not any(gc.is_tracked(x) for kept in base._ACROSS_RUNS.values() for x in kept)
    base.forget_earlier_runs()
    _two_stages(a, x, y, config=RunConfig(save_kernels_dir=str(build), **flags))
    fresh = texts()
    assert [v for k, v in fresh.items() if k.startswith("merged_")] == [
        v for k, v in second.items() if k.startswith("merged_")
    ]
    assert {k: v for k, v in fresh.items() if not k.startswith("merged_")} == {
        k: v for k, v in second.items() if not k.startswith("merged_")
    }
    _two_stages(a * 2, x, y, config=RunConfig(save_kernels_dir=str(build), **flags))  # other data, same timing
    other = texts()
    assert other["args_dump/args.bin"] != second["args_dump/args.bin"]
    assert other["run_report.html"] == second["run_report.html"]
    _two_stages(a, x, y, config=RunConfig(save_kernels_dir=str(build), **{**flags, "enable_chip_swimlane": 3}))
    level3 = texts()
    records = json.loads(level3["chip_swimlane_records.json"])
    assert records["chip_swimlane_level"] == 3 and "aicpu_orchestrator_phases" not in records
    (merged,) = [v for k, v in level3.items() if k.startswith("merged_")]
    (second_merged,) = [v for k, v in second.items() if k.startswith("merged_")]  # level 4: the orchestrator's lane
    assert b'"tid":4000' in second_merged and b'"tid":4000' not in merged and level3["run_report.html"] != second["run_report.html"]
