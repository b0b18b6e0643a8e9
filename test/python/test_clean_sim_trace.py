"""``python -m pypto.tools.clean_sim_trace``: a ``visualize_data.bin`` built here from upstream's documented block
format (docs/en/dev/04-simulator-trace-cleaning.md), an ``OPPROF_*`` folder, and a build directory run on the
device model."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from run_report_kernels import rr_diamond
from test_dfx_trace import check_event_format

from pypto.runtime import RunConfig
from pypto.tools.clean_sim_trace import main

pytestmark = pytest.mark.usefixtures("own_dfx_flags")


def block(kind: int, payload: bytes, version: int = 0) -> bytes:
    """One block: ``contentSize`` u64 LE (payload + padding), type, paddingLength, instrVersion, 0x5a."""
    pad = -len(payload) % 4
    return struct.pack("<QBBBB", len(payload) + pad, kind, pad, version, 0x5A) + payload + b"\0" * pad


def x(name: str, pid: str, tid: str, ts: float, dur: float) -> dict[str, Any]:
    return {"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": {"addr": f"0x{int(ts):x}"}}


def flag(name: str, pid: str, tid: str, ts: float, end: float, detail: str) -> list[dict[str, Any]]:
    return [{"name": name, "ph": "B", "pid": pid, "tid": tid, "ts": ts, "args": {"detail": detail}},
            {"name": name, "ph": "E", "pid": pid, "tid": tid, "ts": end}]  # fmt: skip


RAW_TRACE = {
    "schemaVersion": 1,
    "traceEvents": [
        x("MOV_IMM", "core0.veccore0", "SCALAR", 0.0, 0.5),
        x("copy_gm_to_ubuf", "core0.veccore0", "MTE2", 1.0, 4.0),
        x("copy_gm_to_ubuf", "core0.veccore0", "MTE2", 3.0, 4.0),  # overlaps the first: a sub-lane
        *flag("SET_FLAG", "core0.veccore0", "MTE2", 5.0, 5.1, "PIPE:MTE2,TRIGGERPIPE:VEC,FLAGID:0,"),
        *flag("WAIT_FLAG", "core0.veccore0", "VECTOR", 2.0, 7.1, "PIPE:MTE2,TRIGGERPIPE:VEC,FLAGID:0,"),
        x("vadd", "core0.veccore0", "VECTOR", 7.5, 2.0),
        x("vmul", "core0.veccore0", "VECTOR", 9.5, 1.0),
        *flag("SET_FLAG", "core0.veccore0", "VECTOR", 10.5, 10.6, "PIPE:VEC,TRIGGERPIPE:MTE3,FLAGID:1,"),
        *flag("WAIT_FLAG", "core0.veccore0", "MTE3", 8.0, 10.7, "PIPE:VEC,TRIGGERPIPE:MTE3,FLAGID:1,"),
        x("copy_ubuf_to_gm", "core0.veccore0", "MTE3", 11.0, 3.0),
        x("miss", "core0.veccore0", "CACHEMISS", 1.0, 1.0),
        x("SET_FLAG", "core0.veccore0", "MTE2", 5.0, 0.1),
        x("mmad", "core0.cubecore0", "CUBE", 2.0, 6.0),
    ],
}
API = {"Cores": ["core0.veccore0", "core0.cubecore0"],
       "Instructions": [{"Address": "0x10", "Pipe": "VECTOR", "Cycles": [12, 0], "Vector Utilization Percentage": [50.0, 0.0]}],
       "Instructions Dtype": {"Address": "str", "Cycles": "int"}}  # fmt: skip


def dump_bytes() -> bytes:
    source = b"/path/to/kernel.cpp".ljust(4096, b"\0") + b"int main() {}"
    return (block(1, source) + block(2, json.dumps(RAW_TRACE).encode()) + block(4, json.dumps(API).encode(), 1)
            + block(7, b'{"other": 1}'))  # fmt: skip


def test_a_dump_is_rebuilt_by_the_documented_rules(tmp_path: Path) -> None:
    sim = tmp_path / "OPPROF_1" / "simulator"
    sim.mkdir(parents=True)
    (sim / "visualize_data.bin").write_bytes(dump_bytes())
    assert main([str(tmp_path / "OPPROF_1")]) == 0  # the folder: its simulator/visualize_data.bin
    trace = json.loads((sim / "trace.clean.json").read_text())
    check_event_format(trace)
    ev = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    assert sorted(procs.values()) == ["core0.cubecore0", "core0.veccore0"]  # one process per core
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    xs = [e for e in ev if e["ph"] == "X"]
    assert sorted(e["name"] for e in xs) == [
        "copy_gm_to_ubuf",
        "copy_gm_to_ubuf",
        "copy_ubuf_to_gm",
        "mmad",
        "vadd",
        "vmul",
    ]
    lane_of = {(e["name"], e["ts"]): lanes[(e["pid"], e["tid"])] for e in xs}
    assert lane_of[("copy_gm_to_ubuf", 1.0)].startswith("MTE2 ") and lane_of[("copy_gm_to_ubuf", 3.0)] == "MTE2#1"
    vec = next(p for p, n in procs.items() if n == "core0.veccore0")
    order = [lanes[k].split(" ")[0] for k in sorted(k for k in lanes if k[0] == vec)]
    assert order == ["MTE2", "MTE2#1", "VECTOR", "MTE3"]  # dataflow order, no SCALAR / CACHEMISS
    assert next(e for e in xs if e["name"] == "vadd")["ts"] == 7.5  # timestamps kept
    s = sorted((e for e in ev if e["ph"] == "s"), key=lambda e: e["id"])
    f = sorted((e for e in ev if e["ph"] == "f"), key=lambda e: e["id"])
    assert [e["name"] for e in s] == ["MTE2->VEC flag0", "VEC->MTE3 flag1"]
    # flag 0: from the last MTE2 load started by the set_flag (on its sub-lane) to the first vector op after the wait
    assert (lanes[(vec, s[0]["tid"])], s[0]["ts"], lanes[(vec, f[0]["tid"])], f[0]["ts"]) == (
        "MTE2#1",
        3.0,
        "VECTOR (compute)",
        7.5,
    )
    assert (s[1]["ts"], f[1]["ts"]) == (9.5, 11.0) and all(a["ts"] <= b["ts"] for a, b in zip(s, f, strict=True))
    metrics = json.loads((sim / "instr_metrics.json").read_text())
    assert metrics["cores"] == API["Cores"] and metrics["column_types"] == API["Instructions Dtype"]
    assert metrics["instructions"]["core0.veccore0"] == [
        {"address": "0x10", "pipe": "VECTOR", "cycles": 12, "vector_utilization_percentage": 50.0}
    ]


def test_keep_scalar_raw_metrics_and_output_dir(tmp_path: Path) -> None:
    dump = tmp_path / "visualize_data.bin"
    dump.write_bytes(dump_bytes())
    out = tmp_path / "out"
    assert main([str(dump), "-o", str(out), "--keep-scalar", "--raw-metrics"]) == 0
    trace = json.loads((out / "trace.clean.json").read_text())
    assert "SCALAR (setup)" in {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert json.loads((out / "instr_metrics.json").read_text()) == API
    assert not (tmp_path / "trace.clean.json").exists()


@pytest.mark.parametrize(
    "data, message",
    [(b"not a dump at all", "reserve byte"), (block(2, b"{bad json"), "TRACE block is not JSON"),
     (struct.pack("<QBBBB", 999, 2, 0, 0, 0x5A) + b"{}", "runs past the end"), (block(4, b"{}"), "no TRACE block")],
)  # fmt: skip
def test_a_bad_dump_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, message: str
) -> None:
    dump = tmp_path / "visualize_data.bin"
    dump.write_bytes(data)
    assert main([str(dump)]) == 1
    err = capsys.readouterr().err
    assert message in err and str(dump) in err and "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "trace.clean.json").exists()


def test_a_build_directory_runs_each_kernel_on_the_device_model(tmp_path: Path) -> None:
    a = torch.randn(32, 64)
    build = tmp_path / "build"
    rr_diamond(a, torch.zeros(32, 64), torch.zeros(32, 64), torch.zeros(32, 64),
               config=RunConfig(save_kernels_dir=str(build), enable_incore_trace=True))  # fmt: skip
    from_run = {p.name: json.loads((p / "instr_metrics.json").read_text())
                for p in (build / "dfx_outputs" / "incore").iterdir()}  # fmt: skip
    out = tmp_path / "cli"
    done = subprocess.run([sys.executable, "-m", "pypto.tools.clean_sim_trace", str(build), "-o", str(out)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "bottleneck of rr_first" in done.stdout
    got = {p.name: json.loads((p / "instr_metrics.json").read_text()) for p in out.iterdir()}
    assert sorted(got) == ["0_rr_first", "1_rr_second", "2_rr_third"]
    for name, m in got.items():
        run = next(v for k, v in from_run.items() if k.endswith(name.split("_", 1)[1]))
        assert [(r["op"], r["pipe"], r["cycles"]) for r in m["instructions"]] == [
            (r["op"], r["pipe"], r["cycles"]) for r in run["instructions"]
        ]  # same kernel, same cycles
        check_event_format(json.loads((out / name / "trace.clean.json").read_text()))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([str(empty)]) == 1
