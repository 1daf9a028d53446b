"""Time and peak memory of attention against sequence length N (notebook 08).

    .venv/bin/python scripts/benchmark_attention.py            # CPU, writes data/benchmark_cpu.json (~4 min)
    .venv/bin/python scripts/benchmark_attention.py --quick    # tiny smoke run, writes nothing

Methods (helpers.lessons.complexity_flash, generated from notebook 08): naive softmax(QKᵀ/√d)V with
the N×N matrix, the notebook's chunked_attention (query tiles × key blocks, online softmax),
PyTorch's F.scaled_dot_product_attention (SDPA), window attention (w = 128) and linear attention.
Inputs are float32 from a fixed seed; torch runs single-threaded.

The machine is shared, so every timing is interleaved: for each repeat, every method runs once in
turn, and a record keeps the median. A slow spell then hits all methods alike, and the ratios
(chunked / SDPA) are steadier than the absolute times.

Three parts:
- scaling: (B=1, h=1, N, d=64) for N = 256 … 32768 (naive up to 16384: its two N×N float32
  matrices take 2 GiB there); time, allocator peak (torch.profiler's memory events summed in
  order: deterministic, tensor bytes only) and, for naive/chunked/SDPA, the process peak (a fresh
  process per case resets the kernel's high-water mark and reports VmHWM − VmRSS);
- headline: chunked_attention / SDPA throughput at N = 8192, 8 heads, d = 64;
- ablation: the same loop with the speed tricks added one at a time (N = 4096, 8 heads), each as a
  fraction of SDPA's throughput; the last step is chunked_attention itself.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from helpers.data import cpu_name, numeric_setup, save_json
from helpers.lessons.complexity_flash import (
    METHOD_NAMES,
    attention_flops,
    attention_method,
    chunked_attention,
    measure,
)

D = 64
NS = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
MAX_N = {"naive": 16384}
PROCESS_PEAK_METHODS = ("naive", "chunked", "sdpa")  # one fresh process per case is slow: the main three only
EXACT_METHODS = ("naive", "chunked", "sdpa")  # compute full attention: 4·N²·d FLOPs is their real work
HEADLINE = {"n": 8192, "heads": 8}
ABLATION = {"n": 4096, "heads": 8}


def matmul_gflops(size: int = 1024) -> float:
    """Median float32 matmul throughput (GFLOP/s) on this thread: the ceiling for attention."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    return 2 * size**3 / statistics.median(_timed(torch.mm, a, b) for _ in range(7)) / 1e9


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def interleaved_medians(fns: dict, args, repeat: int) -> dict:
    """Median seconds per function; each repeat runs every function once, in turn (after one warm-up each)."""
    with torch.no_grad():
        for fn in fns.values():
            fn(*args)
        times = {name: [] for name in fns}
        for _ in range(repeat):
            for name, fn in fns.items():
                times[name].append(_timed(fn, *args))
    return {name: statistics.median(ts) for name, ts in times.items()}


def _inputs(n: int, heads: int = 1, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(1, heads, n, D, generator=gen) for _ in range(3)]  # (B, h, N, d)


# --------------------------------------------------------------------------- ablation


def ablation_step(query, key, value, *, tiles: bool, inplace: bool, fused: bool, block_size: int = 128):
    """notebook 08's loop with some speed tricks switched off (base-e exp; exp2 is chunked_attention itself)."""
    t_q, d = query.shape[-2:]
    q = (query / math.sqrt(d)).flatten(0, -3)  # (B, T_q, d)
    k_t, v = key.flatten(0, -3).transpose(1, 2), value.flatten(0, -3)  # (B, d, T_k), (B, T_k, d_v)
    tile = 512 if tiles else t_q
    scratch = q.new_empty(q.shape[0], min(tile, t_q), block_size)
    out = q.new_empty(q.shape[0], t_q, v.shape[-1])
    for i in range(0, t_q, tile):
        q_i = q[:, i : i + tile]  # (B, n, d)
        n = q_i.shape[1]
        m = q.new_full((q.shape[0], n, 1), -math.inf)
        l, acc = q.new_zeros(q.shape[0], n, 1), q.new_zeros(q.shape[0], n, v.shape[-1])
        for j in range(0, k_t.shape[-1], block_size):
            k_j, v_j = k_t[:, :, j : j + block_size], v[:, j : j + block_size]
            s = torch.bmm(q_i, k_j, out=scratch[:, :n, : k_j.shape[-1]]) if inplace else q_i @ k_j  # (B, n, b)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            c = torch.exp(m - m_new)
            p = s.sub_(m_new).exp_() if inplace else torch.exp(s - m_new)
            l = l * c + p.sum(dim=-1, keepdim=True)
            acc = (acc * c).baddbmm_(p, v_j) if fused else acc * c + p @ v_j
            m = m_new
        out[:, i : i + n] = acc / l
    return out.view_as(query)


ABLATION_STEPS = {  # each adds one trick to the one before
    "key blocks only": dict(tiles=False, inplace=False, fused=False),
    "+ query tiles": dict(tiles=True, inplace=False, fused=False),
    "+ in-place": dict(tiles=True, inplace=True, fused=False),
    "+ baddbmm_": dict(tiles=True, inplace=True, fused=True),
}


def ablation(repeat: int, n: int, heads: int) -> dict:
    q, k, v = _inputs(n, heads)
    fns = {"sdpa": F.scaled_dot_product_attention}
    fns |= {name: functools.partial(ablation_step, **kw) for name, kw in ABLATION_STEPS.items()}
    fns["+ exp2 = chunked_attention"] = chunked_attention
    with torch.no_grad():
        ref = F.scaled_dot_product_attention(q, k, v)
        for name, fn in fns.items():
            assert (fn(q, k, v) - ref).abs().max() < 1e-4, name
    med = interleaved_medians(fns, (q, k, v), repeat)
    return {name: med["sdpa"] / s for name, s in med.items() if name != "sdpa"}


# --------------------------------------------------------------------------- process peak


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def worker(method: str, n: int) -> None:
    """Run one case in this fresh process and print the resident-memory peak it added (bytes)."""
    torch.set_num_threads(1)
    small = _inputs(256, seed=1)
    q, k, v = _inputs(n)
    fn = attention_method(method)
    with torch.no_grad():
        fn(*small)  # load kernels and code pages before the measurement
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current VmRSS
        before = _status_kib("VmRSS")
        fn(q, k, v)
        print((_status_kib("VmHWM") - before) * 1024)


def process_peak_bytes(method: str, n: int) -> int:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", method, str(n)],
        capture_output=True,
        text=True,
        check=True,
        env={"OMP_NUM_THREADS": "1"},
    )
    return int(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- main


def run(ns, methods, repeat: int, headline: dict, ablation_case: dict, process_peak: bool = True) -> dict:
    torch.set_num_threads(1)
    peak = matmul_gflops()
    print(f"float32 matmul peak: {peak:.1f} GFLOP/s (1 thread)", flush=True)

    records = []
    for n in ns:
        here = [m for m in methods if n <= MAX_N.get(m, n)]
        med = interleaved_medians(
            {m: attention_method(m) for m in here}, _inputs(n), repeat if n <= 4096 else max(1, repeat // 2)
        )
        for method in here:
            rec = measure(method, n, D, timing=False) | {"seconds": med[method]}
            if process_peak and method in PROCESS_PEAK_METHODS:
                rec["process_peak_bytes"] = process_peak_bytes(method, n)
            if method in EXACT_METHODS:
                rec["gflops"] = attention_flops(n, D) / rec["seconds"] / 1e9
            records.append(rec)
            print(
                f"N={n:6d} {method:8s} {rec['seconds'] * 1e3:10.1f} ms {rec.get('gflops', 0):6.1f} GFLOP/s  "
                f"allocator {rec['peak_bytes'] / 2**20:9.2f} MiB  "
                f"process {rec.get('process_peak_bytes', 0) / 2**20:9.2f} MiB",
                flush=True,
            )
    ratios = {}
    for n in ns:
        by = {r["method"]: r for r in records if r["n"] == n}
        if "chunked" in by and "sdpa" in by:
            ratios[str(n)] = by["sdpa"]["seconds"] / by["chunked"]["seconds"]
    print("chunked / SDPA throughput (h = 1):", {n: f"{r:.2f}" for n, r in ratios.items()}, flush=True)

    q, k, v = _inputs(headline["n"], headline["heads"])
    med = interleaved_medians({"chunked": chunked_attention, "sdpa": F.scaled_dot_product_attention}, (q, k, v), repeat)
    flops = attention_flops(headline["n"], D, heads=headline["heads"])
    head = headline | {
        "d": D,
        "repeat": repeat,
        "seconds": med,
        "gflops": {m: flops / s / 1e9 for m, s in med.items()},
        "chunked_over_sdpa": med["sdpa"] / med["chunked"],
    }
    print(
        f"N = {headline['n']}, {headline['heads']} heads: chunked / SDPA = {head['chunked_over_sdpa']:.2f}", flush=True
    )

    steps = ablation(repeat, ablation_case["n"], ablation_case["heads"])
    print("ablation (fraction of SDPA):", {s: f"{r:.2f}" for s, r in steps.items()}, flush=True)
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
            "note": "shared machine (2 cores, several users): methods interleaved, medians of repeats",
        },
        "config": {
            "batch": 1,
            "heads": 1,
            "d": D,
            "dtype": "float32",
            "window": 128,
            "block_size": 128,
            "repeat": repeat,
            "repeat_large_n": max(1, repeat // 2),
            "max_n": MAX_N,
            "timing": "median of interleaved repeats",
            "command": ".venv/bin/python scripts/benchmark_attention.py",
        },
        "matmul_peak_gflops": peak,
        "chunked_over_sdpa_throughput": ratios,
        "headline": head,
        "ablation": ablation_case | {"d": D, "repeat": repeat, "over_sdpa": steps},
        "records": records,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N only, no process peaks; write nothing")
    parser.add_argument("--worker", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0
    start = time.perf_counter()
    if args.quick:
        result = run([256, 512], list(METHOD_NAMES), 1, {"n": 512, "heads": 2}, {"n": 512, "heads": 2}, False)
    else:
        result = run(NS, list(METHOD_NAMES), 5, HEADLINE, ABLATION)
    result["seconds_total"] = round(time.perf_counter() - start, 1)
    if not args.quick:
        print("wrote", save_json("benchmark_cpu.json", json.loads(json.dumps(result))))
    print(f"total {result['seconds_total']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
