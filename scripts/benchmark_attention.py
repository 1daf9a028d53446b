"""Time and peak memory of attention against sequence length N (notebook 08).

    .venv/bin/python scripts/benchmark_attention.py            # CPU, writes data/benchmark_cpu.json
    .venv/bin/python scripts/benchmark_attention.py --quick    # tiny smoke run, writes nothing

Methods (helpers.lessons.complexity_flash, generated from notebook 08): naive softmax(QKᵀ/√d)V with the N×N matrix, chunked
online-softmax attention (helpers.attention.chunked_attention), PyTorch's
F.scaled_dot_product_attention (SDPA), window attention (w = 128) and linear attention.
Inputs are (B=1, h=1, N, d=64) float32 from a fixed seed; torch runs single-threaded.

Two peak-memory measurements per case (the second for naive, chunked and SDPA only):
- allocator peak: torch.profiler's memory events (every tensor allocation and free) summed in
  order inside this process; deterministic, tensor bytes only;
- process peak: a fresh Python process per case builds the inputs, runs a warm-up at small N,
  resets the kernel's high-water mark (writing 5 to /proc/self/clear_refs), runs the case and
  reports VmHWM − VmRSS from /proc/self/status: what the OS saw, allocator overhead included.
The naive method stops at N = 16384 (its two N×N float32 matrices take 2 GiB there).
Timings are the best of a few runs on a shared machine: expect noise of tens of percent.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

from helpers.data import cpu_name, numeric_setup, save_json
from helpers.lessons.complexity_flash import METHOD_NAMES, attention_flops, attention_method, measure

ROOT = Path(__file__).resolve().parents[1]

D = 64
NS = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
MAX_N = {"naive": 16384}
PROCESS_PEAK_METHODS = ("naive", "chunked", "sdpa")  # one fresh process per case is slow: the main three only
EXACT_METHODS = ("naive", "chunked", "sdpa")  # compute full attention: 4·N²·d FLOPs is their real work


def matmul_gflops(size: int = 1024) -> float:
    """Best float32 matmul throughput (GFLOP/s) on this thread: the ceiling for attention."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = min(_timed(torch.mm, a, b) for _ in range(5))
    return 2 * size**3 / best / 1e9


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def worker(method: str, n: int) -> None:
    """Run one case in this fresh process and print the resident-memory peak it added (bytes)."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    small = [torch.randn(1, 1, 256, D, generator=gen) for _ in range(3)]
    q, k, v = (torch.randn(1, 1, n, D, generator=gen) for _ in range(3))  # (B, h, N, d)
    fn = attention_method(method)
    with torch.no_grad():
        fn(*small)  # load kernels and code pages before the measurement
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current VmRSS
        before = _status_kib("VmRSS")
        fn(q, k, v)
        print((_status_kib("VmHWM") - before) * 1024)


def process_peak_bytes(method: str, n: int) -> int:
    out = subprocess.run([sys.executable, __file__, "--worker", method, str(n)],
                         capture_output=True, text=True, check=True, env={"OMP_NUM_THREADS": "1"})
    return int(out.stdout.strip().splitlines()[-1])


def run(ns, methods, repeat: int) -> dict:
    torch.set_num_threads(1)
    peak = matmul_gflops()
    print(f"float32 matmul peak: {peak:.1f} GFLOP/s (1 thread)", flush=True)
    records = []
    for n in ns:
        for method in methods:
            if n > MAX_N.get(method, n):
                continue
            rec = measure(method, n, D, repeat=repeat if n <= 4096 else 1)
            if method in PROCESS_PEAK_METHODS:
                rec["process_peak_bytes"] = process_peak_bytes(method, n)
            if method in EXACT_METHODS:
                rec["gflops"] = attention_flops(n, D) / rec["seconds"] / 1e9
            records.append(rec)
            print(f"N={n:6d} {method:8s} {rec['seconds'] * 1e3:10.1f} ms {rec.get('gflops', 0):6.1f} GFLOP/s  "
                  f"allocator {rec['peak_bytes'] / 2**20:9.2f} MiB  "
                  f"process {rec.get('process_peak_bytes', 0) / 2**20:9.2f} MiB", flush=True)
    ratios = {}
    for n in ns:
        by = {r["method"]: r for r in records if r["n"] == n}
        if "chunked" in by and "sdpa" in by:
            ratios[str(n)] = by["chunked"]["gflops"] / by["sdpa"]["gflops"]
    summary = {n: f"{r:.2f}" for n, r in ratios.items()}
    print(f"chunked / SDPA throughput: {summary}", flush=True)
    return {
        "machine": {
            "cpu_model": cpu_name(),
            "logical_cores": torch.multiprocessing.cpu_count(),
            "torch_version": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "env": numeric_setup()["env"],
            "note": "shared machine (2 cores, several users): timings are noisy",
        },
        "config": {"batch": 1, "heads": 1, "d": D, "dtype": "float32", "window": 128,
                   "block_size": 128, "repeat": repeat, "max_n": MAX_N,
                   "command": ".venv/bin/python scripts/benchmark_attention.py"},
        "matmul_peak_gflops": peak,
        "chunked_over_sdpa_throughput": ratios,
        "records": records,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 256, 512 only; write nothing")
    parser.add_argument("--worker", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0
    start = time.perf_counter()
    result = run([256, 512] if args.quick else NS, list(METHOD_NAMES), repeat=1 if args.quick else 5)
    result["seconds_total"] = round(time.perf_counter() - start, 1)
    if not args.quick:
        print("wrote", save_json("benchmark_cpu.json", json.loads(json.dumps(result))))
    print(f"total {result['seconds_total']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
