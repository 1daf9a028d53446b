"""Throughput and peak memory of attention on a CUDA GPU: notebook 14's Triton kernels against SDPA.

    python3 course.py gpu-bench [--quick]    # the same, with the course's .venv and PYTHONPATH
    python3 scripts/benchmark_gpu.py         # CUDA GPU: writes data/benchmark_gpu.json (not yet run on a GPU here; counting records suggests 3-6 min on an H100)
    python3 scripts/benchmark_gpu.py --quick # any machine: tiny CPU run through Triton's interpreter,
                                             # writes build/benchmark_gpu_quick.json (never data/)
    python3 scripts/benchmark_gpu.py --n 1024 4096 --d 64 --dtype float16 --out /tmp/b.json   # a subset

(run from the repository root with PYTHONPATH there, as course.py sets it, or with the course's .venv)

Methods, each on (B=4, h=16, N, d) inputs from a fixed seed:
- naive: 08's naive_attention, the full N×N score and weight matrices (causal: the scores get -inf above
  the diagonal from a precomputed torch.triu mask before the softmax); at N = 16384 its two matrices need
  64 GiB in 16 bits: it is tried, and an out-of-memory error is recorded as such;
- chunked: 08's chunked_attention, the loop of query tiles × key blocks run op by op (float16, N <= 8192);
- sdpa_flash, sdpa_cudnn, sdpa_efficient, sdpa_math: F.scaled_dot_product_attention pinned to one backend
  with torch.nn.attention.sdpa_kernel; a backend that refuses a setting records its reason as "error";
- triton: helpers.lessons.flash_attention_gpu (generated from notebook 14): flash_forward for "forward",
  flash_attention (the autograd Function, Triton backward) for "forward_backward".
Modes: "forward" for every method; "forward_backward" (o = f(q, k, v), then o.backward(do)) for triton,
sdpa_flash and sdpa_cudnn at N = 1024, 4096, 16384 (at every N given with --n).

Before it is timed, the Triton kernel's output (and gradients) are compared with SDPA in float32; the
record keeps that max abs error ("max_error"), and a kernel that is off by more than 3 × the error of SDPA
in the same dtype (plus a small floor) is recorded as wrong, with no time: a wrong kernel is never fast.

Timing: triton.testing.do_bench (warm-up and repetition in ms, L2 cleared before each run, median).
TFLOP/s = 4·B·h·N²·d FLOPs (08's attention_flops) / time, halved when causal, × 3.5 for forward_backward
(the backward does 2.5 forwards' worth of matmuls). Peak memory: what one call adds to the allocator's
high-water mark over the inputs. The device's copy bandwidth (1 GiB copy, read + write) and the
8192×8192 torch.mm throughput per dtype are measured once as ceilings.

--quick runs the same code on the CPU: (B=1, h=2), float32 and float16, d = 16, N = 64 and 96 (backward at 64),
methods naive, chunked, sdpa_math and triton (interpreted), timed with time.perf_counter (median of 3);
no memory, bandwidth or matmul figures. It checks the script and the kernels, not the speed. On a CUDA
machine --quick runs those tiny shapes on the GPU instead (compiled kernels, every method, short do_bench),
unless TRITON_INTERPRET=1 is set; the full run refuses TRITON_INTERPRET=1 (it would time the interpreter).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import json
import math
import platform
import shlex
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import helpers  # noqa: F401  (sets TRITON_INTERPRET before anything imports triton: 1 without a CUDA GPU)
from helpers.lessons.complexity_flash import attention_flops, chunked_attention, naive_attention

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "data" / "benchmark_gpu.json"
QUICK_OUT = ROOT / "build" / "benchmark_gpu_quick.json"

GPU = {
    "batch": 4,
    "heads": 16,
    "dtypes": ["float16", "bfloat16"],
    "ds": [64, 128],
    "ns": [1024, 2048, 4096, 8192, 16384],
    "backward_ns": [1024, 4096, 16384],
    "chunked_max_n": 8192,
    "chunked_dtypes": ["float16"],
}
QUICK = {
    "batch": 1,
    "heads": 2,
    "dtypes": ["float32", "float16"],
    "ds": [16],
    "ns": [64, 96],
    "backward_ns": [64],
    "chunked_max_n": 96,
    "chunked_dtypes": ["float32", "float16"],
}
WARMUP_MS, REP_MS = 25, 100  # do_bench
CPU_REPEAT = 3
FORWARD_METHODS = ("naive", "chunked", "sdpa_flash", "sdpa_cudnn", "sdpa_efficient", "sdpa_math", "triton")
QUICK_METHODS = ("naive", "chunked", "sdpa_math", "triton")
BACKWARD_METHODS = ("triton", "sdpa_flash", "sdpa_cudnn")
SDPA_BACKENDS = {
    "sdpa_flash": "FLASH_ATTENTION",
    "sdpa_cudnn": "CUDNN_ATTENTION",
    "sdpa_efficient": "EFFICIENT_ATTENTION",
    "sdpa_math": "MATH",
}
BACKWARD_FLOP_FACTOR = 3.5  # forward 1 + backward 2.5 (five N×N matmuls against the forward's two)
CHECK_FACTOR = 3.0  # the kernel may be off by this many times SDPA's own error in the same dtype ...
CHECK_FLOOR = {"float32": 1e-4, "float16": 4e-3, "bfloat16": 4e-3}  # ... plus this (float32 runs with "ieee")
NO_CUDA = "There is no CUDA GPU on this machine; use --quick to check the script on the CPU."
NO_CUDA_BUILD = (
    "This torch ({version}) is a CPU-only build, so it cannot use a GPU: install the CUDA build of torch==2.13.0 "
    "(PyPI's wheel on Linux) in .venv, or use --quick to check the script on the CPU."
)


# --------------------------------------------------------------------------- clocks


class CudaClock:
    """do_bench times, allocator peaks, and freeing after an out-of-memory error."""

    def __init__(self, warmup_ms: int = WARMUP_MS, rep_ms: int = REP_MS):
        from triton.testing import do_bench

        self.do_bench, self.warmup_ms, self.rep_ms = do_bench, warmup_ms, rep_ms

    def describe(self) -> dict:
        return {
            "method": "triton.testing.do_bench",
            "warmup_ms": self.warmup_ms,
            "rep_ms": self.rep_ms,
            "return_mode": "median",
            "note": "do_bench clears the L2 cache before each timed run; CUDA events",
        }

    def ms(self, fn, grads=None) -> float:
        return self.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, grad_to_none=grads, return_mode="median")

    def peak_bytes(self, fn) -> int:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        baseline = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - baseline

    def release(self) -> None:
        gc.collect()
        torch.cuda.empty_cache()


class CpuClock:
    """perf_counter medians for the --quick run; no memory figures."""

    def __init__(self, repeat: int = CPU_REPEAT):
        self.repeat = repeat

    def describe(self) -> dict:
        return {
            "method": "time.perf_counter",
            "repeat": self.repeat,
            "return_mode": "median",
            "note": "no warm-up call (the interpreter compiles nothing); triton records run the check first",
        }

    def ms(self, fn, grads=None) -> float:
        times = []
        for _ in range(self.repeat):
            for g in grads or ():
                g.grad = None
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)

    def peak_bytes(self, fn) -> None:
        return None

    def release(self) -> None:
        gc.collect()


# --------------------------------------------------------------------------- methods


def naive_causal_attention(q, k, v, mask):  # mask: (N, N) bool, True above the diagonal
    """08's naive_attention with -inf above the diagonal before the softmax."""
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)  # (..., N, N)
    return torch.softmax(scores.masked_fill_(mask, -math.inf), dim=-1) @ v


def attention_fn(method: str, causal: bool, mask=None):
    """f(q, k, v) -> o of one method (the SDPA backend is pinned around the call by backend())."""
    from helpers.lessons import flash_attention_gpu as fa

    if method == "naive":
        return (lambda q, k, v: naive_causal_attention(q, k, v, mask)) if causal else naive_attention
    if method == "chunked":
        return lambda q, k, v: chunked_attention(q, k, v, causal=causal)
    if method in SDPA_BACKENDS:
        return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    if method == "triton":
        return lambda q, k, v: fa.flash_attention(q, k, v, causal)
    raise ValueError(method)


def backend(method: str):
    if method not in SDPA_BACKENDS:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(getattr(SDPBackend, SDPA_BACKENDS[method]))


def short_reason(error: Exception, caught) -> str:
    """The first line of the error, with the backend's own reason (a warning) when it gave one."""
    lines = [str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__]
    for w in caught:
        text = str(w.message).strip().splitlines()
        if text and text[0] not in lines:
            lines.append(text[0])
    return "; ".join(lines)[:300]


# --------------------------------------------------------------------------- the kernel check


def sdpa_outputs(q, k, v, do, causal, grads):
    """SDPA's output (and gradients of (o * do).sum()) with the default backend choice."""
    if not grads:
        with torch.no_grad():
            return [F.scaled_dot_product_attention(q, k, v, is_causal=causal)]
    q, k, v = (x.detach().clone().requires_grad_() for x in (q, k, v))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    o.backward(do)
    return [o.detach(), q.grad, k.grad, v.grad]


def check_kernel(q, k, v, do, causal, grads, group=8) -> tuple[float, float]:
    """(max abs error of the Triton kernel, of SDPA in the same dtype), both against SDPA in float32.

    The kernel runs on the whole (B, h, N, d) input; the references run on `group` heads at a time, so
    even SDPA's math fallback in float32 stays a few GiB at N = 16384 (heads are independent, and so
    are their gradients under the summed loss)."""
    from helpers.lessons import flash_attention_gpu as fa

    if grads:
        qg, kg, vg = (x.detach().clone().requires_grad_() for x in (q, k, v))
        o = fa.flash_attention(qg, kg, vg, causal)
        o.backward(do)
        ours = [o.detach(), qg.grad, kg.grad, vg.grad]
    else:
        ours = [fa.flash_forward(q, k, v, causal)[0]]

    def heads(x, i):  # (1, group, N, d): four dimensions, as SDPA's fused backends want them
        return x.flatten(0, 1)[i : i + group].unsqueeze(0)

    ours_errors, same_errors = [], []
    for i in range(0, q.shape[0] * q.shape[1], group):
        part = [heads(x, i) for x in (q, k, v, do)]
        ref = sdpa_outputs(*(x.float() for x in part), causal, grads)
        same = sdpa_outputs(*part, causal, grads)
        for a, b, r in zip(ours, same, ref):
            ours_errors.append((heads(a, i).float() - r).abs().max().item())
            same_errors.append((b.float() - r).abs().max().item())
    return worst(ours_errors), worst(same_errors)


def worst(errors: list[float]) -> float:
    """The largest error, NaN if any is NaN (Python's max would skip a NaN that is not first)."""
    return math.nan if any(math.isnan(e) for e in errors) else max(errors)


# --------------------------------------------------------------------------- one record


def time_record(clock, rec: dict, tensors) -> tuple[float, int | None] | None:
    """(ms, peak extra bytes) of one record; None when the Triton kernel fails its check (rec["error"] says so)."""
    from helpers.lessons import flash_attention_gpu as fa  # needs Triton: imported once main() has checked

    q, k, v, do, mask = tensors
    method, causal, grads = rec["method"], rec["causal"], rec["mode"] == "forward_backward"
    if method == "triton":
        max_error, same_error = check_kernel(q, k, v, do, causal, grads)
        finite = math.isfinite(max_error) and math.isfinite(same_error)  # JSON has no NaN: store null then
        rec["max_error"], rec["sdpa_error"] = (max_error, same_error) if finite else (None, None)
        if not max_error <= CHECK_FACTOR * same_error + CHECK_FLOOR[rec["dtype"]]:
            rec["error"] = f"wrong result: max error {max_error:.3g} (SDPA in {rec['dtype']}: {same_error:.3g})"
            return None
    f = attention_fn(method, causal, mask)
    if grads:
        q, k, v = (x.detach().requires_grad_() for x in (q, k, v))

        def fn():  # the loss (o * do).sum(): its gradient with respect to o is do
            f(q, k, v).backward(do)

    elif method == "triton":

        def fn():
            return fa.flash_forward(q, k, v, causal)[0]

    else:

        def fn():
            return f(q, k, v)

    with backend(method), torch.set_grad_enabled(grads):
        peak = clock.peak_bytes(fn)  # the first call: a backend that refuses the setting raises here
        for x in (q, k, v) if grads else ():
            x.grad = None
        return clock.ms(fn, [q, k, v] if grads else None), peak


def measure(clock, method, mode, setting, tensors) -> dict:
    """One record: time, TFLOP/s and peak extra memory of one method, or the reason it did not run."""
    batch, heads, n, d = tensors[0].shape
    rec = {
        "method": method,
        "mode": mode,
        "dtype": setting["dtype"],
        "d": d,
        "causal": setting["causal"],
        "n": n,
        "batch": batch,
        "heads": heads,
        "ms": None,
        "tflops": None,
        "peak_bytes": None,
        "error": None,
    }
    timed = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # SDPA explains a refusal in warnings: keep them for the record
        try:
            timed = time_record(clock, rec, tensors)
        except torch.OutOfMemoryError:
            rec["error"] = "out of memory"
        except Exception as error:  # a backend that refuses the setting, a kernel that does not compile, ...
            rec["error"] = short_reason(error, caught)
    if rec["error"] == "out of memory":
        clock.release()  # the exception, and the frames holding the big tensors, are gone by now
    if timed is not None and rec["error"] is None:
        ms, peak = timed
        flops = attention_flops(n, d, heads, batch) * (0.5 if setting["causal"] else 1)
        flops *= BACKWARD_FLOP_FACTOR if mode == "forward_backward" else 1
        rec.update(ms=ms, tflops=flops / (ms / 1e3) / 1e12, peak_bytes=peak)
    return rec


def show(rec: dict) -> None:
    head = (
        f"{rec['dtype']:8s} d={rec['d']:<3d} {'causal' if rec['causal'] else 'full':6s} N={rec['n']:<5d} "
        f"{rec['method']:14s} {rec['mode']:16s}"
    )
    if rec["error"]:
        print(f"{head} error: {rec['error']}", flush=True)
        return
    peak = "" if rec["peak_bytes"] is None else f" {rec['peak_bytes'] / 2**20:10.1f} MiB"
    check = f"  max error {rec['max_error']:.2e}" if rec.get("max_error") is not None else ""
    print(f"{head} {rec['ms']:9.3f} ms {rec['tflops']:8.4g} TFLOP/s{peak}{check}", flush=True)


# --------------------------------------------------------------------------- the run


def copy_bandwidth(device, size: int = 2**30) -> float:
    """GB/s of dst.copy_(src) for 1 GiB: each byte is read once and written once."""
    from triton.testing import do_bench

    src = torch.empty(size, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=WARMUP_MS, rep=REP_MS, return_mode="median")
    return 2 * size / (ms / 1e3) / 1e9


def matmul_tflops(device, dtype, size: int = 8192) -> float:
    """TFLOP/s of one size×size torch.mm: the ceiling for attention's matmuls."""
    from triton.testing import do_bench

    a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))
    ms = do_bench(lambda: torch.mm(a, b), warmup=WARMUP_MS, rep=REP_MS, return_mode="median")
    return 2 * size**3 / (ms / 1e3) / 1e12


def ceilings(device) -> tuple[float, dict]:
    """HBM copy bandwidth (GB/s) and 8192×8192 torch.mm TFLOP/s per 16-bit dtype."""
    bandwidth = copy_bandwidth(device)
    torch.cuda.empty_cache()
    matmul = {name: matmul_tflops(device, getattr(torch, name)) for name in ("float16", "bfloat16")}
    torch.cuda.empty_cache()
    return bandwidth, matmul


def run(config: dict, clock, device, methods) -> list[dict]:
    records = []
    batch, heads = config["batch"], config["heads"]
    for dtype_name in config["dtypes"]:
        dtype = getattr(torch, dtype_name)
        for d in config["ds"]:
            for causal in (False, True):
                for n in config["ns"]:
                    gen = torch.Generator(device=device).manual_seed(n * 1000 + d)
                    q, k, v, do = (
                        torch.randn(batch, heads, n, d, generator=gen, device=device, dtype=dtype) for _ in range(4)
                    )
                    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=device), diagonal=1) if causal else None
                    setting = {"dtype": dtype_name, "causal": causal}
                    todo = [(m, "forward") for m in methods]
                    if n in config["backward_ns"]:
                        todo += [(m, "forward_backward") for m in BACKWARD_METHODS if m in methods]
                    for method, mode in todo:
                        if method == "chunked" and (
                            n > config["chunked_max_n"] or dtype_name not in config["chunked_dtypes"]
                        ):
                            continue
                        rec = measure(clock, method, mode, setting, (q, k, v, do, mask))
                        records.append(rec)
                        show(rec)
                    del q, k, v, do, mask
                    clock.release()
    return records


def versions() -> dict:
    import triton

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "cudnn": cudnn,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny CPU run through Triton's interpreter")
    parser.add_argument("--out", type=Path, help="output JSON (default data/benchmark_gpu.json; --quick: build/)")
    parser.add_argument("--n", type=int, nargs="+", help="sequence lengths (forward_backward then runs at each)")
    parser.add_argument("--d", type=int, nargs="+", help="head dimensions")
    parser.add_argument("--dtype", nargs="+", choices=["float16", "bfloat16", "float32"], help="input dtypes")
    args = parser.parse_args(argv)

    if not args.quick and torch.version.cuda is None:
        print(NO_CUDA_BUILD.format(version=torch.__version__), file=sys.stderr)
        return 2
    if not args.quick and not torch.cuda.is_available():
        print(NO_CUDA, file=sys.stderr)
        return 2
    try:
        import triton  # noqa: F401
    except ImportError:
        from helpers.kernels import triton_missing_message

        print(triton_missing_message(), file=sys.stderr)
        return 2
    import helpers.lessons.flash_attention_gpu as fa

    cuda = torch.cuda.is_available() and not fa.INTERPRET  # --quick on a CUDA machine: tiny shapes on the GPU
    if not args.quick and not cuda:
        print("TRITON_INTERPRET=1 is set: unset it to time the compiled kernels on the GPU.", file=sys.stderr)
        return 2
    if not cuda and not fa.INTERPRET:
        print("No CUDA GPU and TRITON_INTERPRET is not 1: set TRITON_INTERPRET=1 for --quick.", file=sys.stderr)
        return 2

    config = dict(QUICK if args.quick else GPU)
    if args.n:
        config["ns"] = config["backward_ns"] = sorted(args.n)
    if args.d:
        config["ds"] = args.d
    if args.dtype:
        config["dtypes"] = args.dtype
    out = args.out or (QUICK_OUT if args.quick else DEFAULT_OUT)

    start = time.perf_counter()
    if cuda:
        device, methods = torch.device("cuda"), FORWARD_METHODS
        clock = CudaClock(5, 20) if args.quick else CudaClock()
        name = torch.cuda.get_device_name()
        bandwidth, matmul = (None, None) if args.quick else ceilings(device)
        if bandwidth is not None:
            mm = ", ".join(f"{k} {v:.0f}" for k, v in matmul.items())
            print(f"{name}: copy {bandwidth:.0f} GB/s, torch.mm {mm} TFLOP/s", flush=True)
    else:
        device, clock, methods = torch.device("cpu"), CpuClock(), QUICK_METHODS
        name, bandwidth, matmul = "cpu (Triton interpreter)", None, None
        torch.set_num_threads(1)
    records = run(config, clock, device, methods)
    wrong = [r for r in records if (r["error"] or "").startswith("wrong result")]

    result = {
        "device": name,
        "versions": versions(),
        "timing": clock.describe(),
        "shape": {
            "batch": config["batch"],
            "heads": config["heads"],
            "layout": "(B, h, N, d) contiguous",
            "dtypes": config["dtypes"],
            "ds": config["ds"],
            "ns": config["ns"],
            "causal": [False, True],
            "forward_backward_ns": config["backward_ns"],
            "forward_backward_methods": [m for m in BACKWARD_METHODS if m in methods],
            "chunked": {"max_n": config["chunked_max_n"], "dtypes": config["chunked_dtypes"]},
        },
        "flops": "4·B·h·N²·d (08's attention_flops); × 0.5 when causal; × 3.5 for forward_backward",
        "methods": {
            "naive": "08's naive_attention; causal: scores.masked_fill_(torch.triu(ones(N, N), 1), -inf) before softmax",
            "chunked": "08's chunked_attention(causal=...) run op by op",
            "sdpa_*": "F.scaled_dot_product_attention(is_causal=...) under torch.nn.attention.sdpa_kernel(backend)",
            "triton": "flash_forward (forward), flash_attention = forward + Triton backward (forward_backward)",
            "peak_bytes": "max_memory_allocated() during one call minus memory_allocated() before it",
            "max_error": "triton records: max abs error of O (and dQ, dK, dV) against SDPA in float32; sdpa_error: "
            "SDPA in the record's dtype against the same reference",
        },
        "tile_config": {
            dt: {d: fa.tile_config(d, getattr(torch, dt), device) for d in config["ds"]} for dt in config["dtypes"]
        },
        "bandwidth_gbps": bandwidth,
        "matmul_tflops": matmul,
        "records": records,
        "command": shlex.join(["python3", "scripts/benchmark_gpu.py", *argv]),
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": args.quick,
        "seconds_total": round(time.perf_counter() - start, 1),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(records)} records, {result['seconds_total']} s)")
    if wrong:
        print(
            f"{len(wrong)} Triton record(s) failed the check against SDPA: no times stored for them.", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
