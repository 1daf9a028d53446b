"""scripts/benchmark_gpu.py on the CPU: the --quick run through Triton's interpreter writes the JSON that
notebook 14's helpers (helpers.lessons.flash_attention_gpu) read, plot and turn into ratios; a kernel that
fails its check against SDPA gets no time; without a GPU and without --quick the script says so."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch

pytest.importorskip("triton")

from helpers.lessons import flash_attention_gpu as fa  # noqa: E402  (after the skip: it imports triton)

pytestmark = pytest.mark.notebook("14")  # `python3 course.py test 14` runs this module

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "benchmark_gpu.py"
TOP_KEYS = {
    "device",
    "versions",
    "timing",
    "shape",
    "bandwidth_gbps",
    "matmul_tflops",
    "records",
    "command",
    "created",
    "quick",
}
RECORD_KEYS = {"method", "mode", "dtype", "d", "causal", "n", "batch", "heads", "ms", "tflops", "peak_bytes", "error"}


def run_script(*args, timeout=120):
    # TRITON_INTERPRET=1: the CPU path through the interpreter, also where a CUDA GPU would take --quick
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRITON_INTERPRET": "1"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "q.json"
    proc = run_script("--quick", "--out", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return fa.load_gpu_benchmark(out), proc.stdout


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("benchmark_gpu", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_run_writes_the_schema(quick):
    result, stdout = quick
    assert TOP_KEYS <= set(result)
    assert result["quick"] is True and result["device"] == "cpu (Triton interpreter)"
    assert result["bandwidth_gbps"] is None and result["matmul_tflops"] is None
    assert result["timing"]["method"] == "time.perf_counter"
    assert {"torch", "triton", "numpy", "python"} <= set(result["versions"])
    for rec in result["records"]:
        assert RECORD_KEYS <= set(rec), rec
        assert rec["mode"] in ("forward", "forward_backward")
        assert rec["peak_bytes"] is None
    assert len(stdout.strip().splitlines()) == len(result["records"]) + 1  # one line per record, then "wrote"
    methods = {(r["method"], r["mode"]) for r in result["records"]}
    assert methods == {
        ("naive", "forward"),
        ("chunked", "forward"),
        ("sdpa_math", "forward"),
        ("triton", "forward"),
        ("triton", "forward_backward"),
    }
    assert all(r["error"] is None and r["tflops"] > 0 for r in result["records"])


def test_quick_triton_records_are_checked_and_timed(quick):
    result, _ = quick
    for mode in ("forward", "forward_backward"):
        recs = [r for r in result["records"] if r["method"] == "triton" and r["mode"] == mode]
        assert {(r["dtype"], r["causal"]) for r in recs} == {
            (dt, c) for dt in ("float32", "float16") for c in (False, True)
        }
        for r in recs:
            assert math.isfinite(r["ms"]) and math.isfinite(r["tflops"]) and r["ms"] > 0
            assert math.isfinite(r["max_error"])
            if r["dtype"] == "float32":
                assert r["max_error"] < 1e-3, r


def test_quick_result_feeds_the_notebook_helpers(quick):
    result, _ = quick
    series = fa.benchmark_series(result, "tflops", dtype="float32", d=16, causal=False)
    assert set(series) == {"naive", "chunked", "sdpa_math", "triton"}
    assert series["triton"][0] == [64, 96]
    backward = fa.benchmark_series(result, "tflops", dtype="float16", d=16, causal=True, mode="forward_backward")
    assert list(backward) == ["triton"]
    fig, axes = plt.subplots(1, 2)
    try:
        fa.draw_gpu_benchmark(result, axes, dtype="float16", d=16)
        assert len(axes[0].get_lines()) == 4
        assert not axes[1].get_lines()  # no memory figures on the CPU
    finally:
        plt.close(fig)


def synthetic_result():
    """ours ÷ FlashAttention-2 = 0.8 and ÷ cuDNN = 0.5 at N >= 4096 (and something else below it)."""
    tflops = {
        "triton": {2048: 100.0, 4096: 200.0, 8192: 240.0},
        "sdpa_flash": {2048: 100.0, 4096: 250.0, 8192: 300.0},
        "sdpa_cudnn": {2048: 50.0, 4096: 400.0, 8192: 480.0},
    }
    records = []
    for method, by_n in tflops.items():
        for n, t in by_n.items():
            for mode in ("forward", "forward_backward"):
                rec = {"method": method, "mode": mode, "dtype": "float16", "d": 64, "causal": False, "n": n}
                rec |= {"batch": 4, "heads": 16, "ms": 1.0, "tflops": t, "peak_bytes": n * 1024, "error": None}
                records.append(rec)
    records.append(records[0] | {"method": "naive", "n": 16384, "tflops": None, "peak_bytes": None, "error": "oom"})
    return {"device": "synthetic GPU", "records": records}


def test_benchmark_ratios_on_a_synthetic_result():
    table = fa.benchmark_ratios(synthetic_result())
    assert set(table) == {
        (64, mode, False, o) for mode in ("forward", "forward_backward") for o in ("sdpa_flash", "sdpa_cudnn")
    }
    for (_, _, _, other), ratio in table.items():
        assert ratio == pytest.approx({"sdpa_flash": 0.8, "sdpa_cudnn": 0.5}[other])
    assert fa.benchmark_ratios(synthetic_result(), min_n=16384) == {}


def test_draw_gpu_benchmark_draws_both_axes():
    fig, axes = plt.subplots(1, 2)
    try:
        fa.draw_gpu_benchmark(synthetic_result(), axes)
        assert len(axes[0].get_lines()) == 3 and len(axes[1].get_lines()) == 3
        assert list(axes[1].get_lines()[0].get_xdata()) == [2048, 4096, 8192]
    finally:
        plt.close(fig)


def test_a_wrong_kernel_gets_no_time(script, monkeypatch):
    monkeypatch.setattr(fa, "flash_forward", lambda q, k, v, causal=False: (q.clone(), None))
    gen = torch.Generator().manual_seed(0)
    tensors = [torch.randn(1, 2, 32, 16, generator=gen) for _ in range(4)] + [None]
    rec = script.measure(script.CpuClock(), "triton", "forward", {"dtype": "float32", "causal": False}, tensors)
    assert rec["error"].startswith("wrong result") and rec["max_error"] > 0.1
    assert rec["ms"] is None and rec["tflops"] is None
    monkeypatch.setattr(fa, "flash_forward", lambda q, k, v, causal=False: (q * math.nan, None))
    rec = script.measure(script.CpuClock(), "triton", "forward", {"dtype": "float32", "causal": False}, tensors)
    assert rec["error"].startswith("wrong result") and rec["max_error"] is None  # NaN is not JSON: null


def test_refusals_and_out_of_memory_become_errors(script, monkeypatch):
    gen = torch.Generator().manual_seed(0)
    tensors = [torch.randn(1, 2, 32, 16, generator=gen) for _ in range(4)] + [None]
    setting = {"dtype": "float32", "causal": False}
    rec = script.measure(script.CpuClock(), "sdpa_cudnn", "forward", setting, tensors)  # no cuDNN on the CPU
    assert rec["error"] and rec["tflops"] is None

    def out_of_memory(q, k, v):
        raise torch.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(script, "naive_attention", out_of_memory)
    rec = script.measure(script.CpuClock(), "naive", "forward", setting, tensors)
    assert rec["error"] == "out of memory" and rec["ms"] is None


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_without_cuda_it_asks_for_quick(script, capsys):
    """In-process (the script's main, as `python3 scripts/benchmark_gpu.py` calls it): a subprocess only paid
    torch's import again."""
    assert script.main([]) == 2
    out = capsys.readouterr()
    assert "--quick" in out.err and "CUDA" in out.err
    assert not out.out.strip()
