"""Generated from notebooks/src/08_complexity_flash.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import contextlib
import itertools
import math
import os
import sys
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

GIB = 2**30


def attention_flops(n, d, heads=1, batch=1):
    """Multiply-adds of QKᵀ and PV, 2 FLOPs each: 4·B·h·N²·d."""
    return 4 * batch * heads * n * n * d


def score_matrix_bytes(n, heads=1, batch=1, bytes_per_value=4):
    """Bytes of the (B, h, N, N) score matrix (float32: 4 bytes a value)."""
    return batch * heads * n * n * bytes_per_value


def max_n_for_budget(budget_bytes, heads=1, batch=1, bytes_per_value=4):
    """Largest N whose (B, h, N, N) score matrix fits in budget_bytes."""
    return math.isqrt(int(budget_bytes // score_matrix_bytes(1, heads, batch, bytes_per_value)))


def hbm_values(n, d, sram):
    """Values read or written in slow memory: the standard three kernels vs one fused kernel."""
    standard = 2 * n * d + n * n + n * n + n * n + (n * n + n * d) + n * d  # QK→S, S→P, PV→O
    cols = math.ceil(sram / (4 * d))  # key/value block that fits in SRAM with its query tile
    fused = 2 * n * d + math.ceil(n / cols) * (3 * n * d + 4 * n)  # K, V once; Q, O, m, ℓ per key block
    return standard, fused


@contextlib.contextmanager
def quiet_stderr():
    """The profiler's C++ side prints start/stop lines on fd 2; keep them out of notebook outputs."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def peak_memory_bytes(fn, *args, **kwargs):
    """Peak tensor bytes the CPU allocator held during fn(*args): running sum of the profiler's memory events."""
    with quiet_stderr(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                                profile_memory=True) as prof:
        fn(*args, **kwargs)
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_ns())
    return max(itertools.accumulate((e.nbytes() for e in events), initial=0))


def time_call(fn, *args, repeat=3):
    """Median of ``repeat`` wall-clock timings in seconds, after one warm-up call."""
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def attention_method(name):
    """The attention variants compared in notebook 08 and scripts/benchmark_attention.py."""
    if name == "window":  # window and linear attention are defined in section 8
        return lambda q, k, v: window_attention(q, k, v, window=128)
    if name == "linear":
        return linear_attention
    return {"naive": naive_attention, "chunked": chunked_attention, "sdpa": F.scaled_dot_product_attention}[name]


METHOD_NAMES = ("naive", "chunked", "sdpa", "window", "linear")


def measure(method, n, d=64, repeat=3, seed=0, timing=True):
    """Time and allocator peak of one method on (1, 1, N, d) float32 inputs from a fixed seed."""
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 1, n, d, generator=gen) for _ in range(3))  # (B, h, N, d)
    fn = attention_method(method)
    with torch.no_grad():
        peak = peak_memory_bytes(fn, q, k, v)
        seconds = time_call(fn, q, k, v, repeat=repeat) if timing else None
    return {"method": method, "n": n, "d": d, "seconds": seconds, "peak_bytes": peak}


def dispatched_ops(fn, *args, pattern="scaled_dot_product"):
    """Names of the ops fn(*args) runs that contain pattern, from torch.profiler."""
    with quiet_stderr(), torch.profiler.profile() as prof:
        fn(*args)
    return sorted({e.key for e in prof.key_averages() if pattern in e.key})


QUERY_TILE = 512  # queries per tile: a (B, 512, 128) score block stays in the CPU cache


def chunked_attention(query, key, value, *, block_size=128, causal=False):  # (..., T, d) each
    """softmax(QKᵀ/√d)V, query tile by key block (online softmax); causal: keys j <= i."""
    (t_q, d), (t_k, d_v) = query.shape[-2:], value.shape[-2:]
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    scale = math.log2(math.e) / math.sqrt(d)  # e^x = 2^(x·log2 e): exponents become exp2
    q = (query * scale).expand(*lead, t_q, d).reshape(-1, t_q, d)  # (B, T_q, d), scaled once
    k_t = key.expand(*lead, t_k, d).reshape(-1, t_k, d).transpose(1, 2)  # (B, d, T_k)
    v = value.expand(*lead, t_k, d_v).reshape(-1, t_k, d_v)  # (B, T_k, d_v)
    grad = torch.is_grad_enabled() and any(x.requires_grad for x in (query, key, value))
    scratch = None if grad else q.new_empty(len(q), min(QUERY_TILE, t_q), block_size)
    pos, out = torch.arange(max(t_q, t_k), device=q.device), q.new_empty(len(q), t_q, d_v)
    for i in range(0, t_q, QUERY_TILE):
        q_i = q[:, i : i + QUERY_TILE]  # (B, n, d)
        n = q_i.shape[1]
        m = q.new_full((len(q), n, 1), -math.inf)  # (B, n, 1) running max
        l, acc = q.new_zeros(len(q), n, 1), q.new_zeros(len(q), n, d_v)  # sum, weighted sum
        for j in range(0, min(t_k, i + n) if causal else t_k, block_size):
            b = min(block_size, t_k - j)
            s = torch.bmm(q_i, k_t[:, :, j : j + b], out=None if grad else scratch[:, :n, :b])
            if causal and j + b > i + 1:  # the block crosses the diagonal
                s.masked_fill_(pos[j : j + b] > pos[i : i + n, None], -math.inf)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            c, m = torch.exp2(m - m_new), m_new  # c <= 1 rescales the old sums
            p = torch.exp2(s - m) if grad else s.sub_(m).exp2_()  # (B, n, b), in place
            l = (l * c).add_(p.sum(dim=-1, keepdim=True))
            acc = (acc * c).baddbmm_(p, v[:, j : j + b])  # c·acc + p @ v_j in one call
        out[:, i : i + n] = acc / l
    return out.reshape(*lead, t_q, d_v)  # (..., T_q, d_v)


def naive_attention(q, k, v):  # (..., N, d) each
    """softmax(QKᵀ/√d)V that builds the full (..., N, N) score and weight matrices."""
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)  # (..., N, N)
    return torch.softmax(scores, dim=-1) @ v  # (..., N, d_v)


def chunked_extra_bytes(n, d, block_size=128, heads=1, batch=1, bytes_per_value=4):
    """Memory chunked_attention allocates: scaled Q and O, the score block, two accumulators, row vectors,
    and the N int64 positions of the causal mask."""
    tile = min(QUERY_TILE, n)
    return batch * heads * (2 * n * d + tile * block_size + 2 * tile * d + 4 * tile) * bytes_per_value + 8 * n


METHOD_LABELS = {"naive": "단순 구현 (N×N)", "chunked": "청크 (온라인 소프트맥스)", "sdpa": "PyTorch SDPA",
                 "window": "윈도 (w=128)", "linear": "선형 어텐션"}
METHOD_COLORS = {"naive": "tab:red", "chunked": "tab:blue", "sdpa": "tab:green",
                 "window": "tab:purple", "linear": "tab:orange"}


def loglog_slope(ns, ys):
    """Least-squares slope of log(y) against log(N): y ∝ N^slope."""
    return float(np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(ys, float)), 1)[0])


def draw_scaling(records, quantity, ax, methods, fit_min_n=4096, fit_max_n=None):
    """Log-log plot of 'seconds' or 'peak_bytes' against N per method; returns the exponents fitted on
    fit_min_n <= N <= fit_max_n (every N from fit_min_n when fit_max_n is None)."""
    slopes = {}
    for method in methods:
        rows = sorted((r for r in records if r["method"] == method and r.get(quantity)), key=lambda r: r["n"])
        ns = np.array([r["n"] for r in rows], dtype=float)
        ys = np.array([r[quantity] for r in rows], dtype=float) * (1e3 if quantity == "seconds" else 1 / 2**20)
        fit = (ns >= fit_min_n) & (ns <= (fit_max_n or np.inf))
        slopes[method] = loglog_slope(ns[fit], ys[fit])
        ax.loglog(ns, ys, "o-", color=METHOD_COLORS[method], base=2,
                  label=f"{METHOD_LABELS[method]}: 지수 {slopes[method]:.2f}")
    ax.set_xlabel("시퀀스 길이 N")
    ax.set_ylabel("시간 (ms)" if quantity == "seconds" else "최대 메모리 (MiB)")
    ax.legend(fontsize=8)
    return slopes


MEMORY_GRID = np.unique(np.round(np.logspace(4, 24, 81, base=2)).astype(int))
BUDGETS_GIB = (8, 16, 80)


def memory_view(ax, d=64):
    """Build the memory-vs-N plot once on ax; return update(log2_n, heads, batch) that moves its artists."""
    matrix_line, = ax.loglog(MEMORY_GRID, MEMORY_GRID * 0.0 + 1, color="tab:red", base=2, label="N×N 점수 행렬 (float32)")
    chunk_line, = ax.loglog(MEMORY_GRID, MEMORY_GRID * 0.0 + 1, color="tab:blue", base=2, label="청크 어텐션 작업 메모리")
    dots, = ax.plot([], [], "ko", ms=5)
    here_line = ax.axvline(1, color="gray", lw=0.8, ls=":")
    labels = []
    for i, budget in enumerate(BUDGETS_GIB):
        ax.axhline(budget, color="gray", lw=0.8, ls="--")
        labels.append(ax.text(MEMORY_GRID[0], budget / 1.3 if i == 0 else budget * 1.3, "", fontsize=7,
                              color="dimgray", va="top" if i == 0 else "bottom"))
    ax.set(xlabel="시퀀스 길이 N", ylabel="메모리", xlim=(2**4, 2**24), ylim=(2**-21, 2**17))
    ax.set_xticks([2**k for k in (4, 8, 12, 16, 20, 24)], ["16", "256", "4,096", "65,536", "1M", "16M"])
    ax.set_yticks([2**-20, 2**-10, 1, 2**10], ["1 KiB", "1 MiB", "1 GiB", "1 TiB"])  # plain labels: fast redraw
    ax.minorticks_off()
    ax.legend(fontsize=8, loc="lower right")

    def update(log2_n, heads, batch):
        n = int(round(2**log2_n))
        matrix_line.set_ydata([score_matrix_bytes(int(m), heads, batch) / GIB for m in MEMORY_GRID])
        chunk_line.set_ydata([chunked_extra_bytes(int(m), d, heads=heads, batch=batch) / GIB for m in MEMORY_GRID])
        view = {"n": n, "matrix_bytes": score_matrix_bytes(n, heads, batch),
                "chunked_bytes": chunked_extra_bytes(n, d, heads=heads, batch=batch)}
        dots.set_data([n, n], [view["chunked_bytes"] / GIB, view["matrix_bytes"] / GIB])
        here_line.set_xdata([n, n])
        for text, budget in zip(labels, BUDGETS_GIB):
            text.set_text(f"{budget} GiB: N ≤ {max_n_for_budget(budget * GIB, heads, batch):,}")
        view["fits"] = {budget: view["matrix_bytes"] <= budget * GIB for budget in BUDGETS_GIB}
        ax.set_title(f"N = {n:,} (B={batch}, h={heads}): 점수 {view['matrix_bytes'] / 2**20:,.1f} MiB, "
                     f"청크 {view['chunked_bytes'] / 2**20:,.2f} MiB", fontsize=9)
        return view

    return update


def memory_explorer(d=64):
    """Sliders for log2 N, heads and batch over one memory_view figure (the site plays every combination
    of N = 2^8..2^20, h in 1/8/12/32 and B in 1/8/32/64)."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=80)
    controls = {"log2_n": widgets.FloatSlider(value=14, min=8, max=20, step=0.5, description="log₂ N"),
                "heads": widgets.IntSlider(value=1, min=1, max=32, description="헤드 h"),
                "batch": widgets.IntSlider(value=1, min=1, max=64, description="배치 B")}
    frames = {"log2_n": [float(k) for k in range(8, 21)], "heads": [1, 8, 12, 32], "batch": [1, 8, 32, 64]}
    return Explorer(fig, memory_view(ax, d), controls, frames=frames)


def window_attention(q, k, v, window, block_size=128):  # (..., N, d) each, self-attention
    """Query i sees only keys j with |i − j| <= window; one query block at a time, O(N·window)."""
    n = q.shape[-2]
    out = q.new_empty(q.shape[:-1] + (v.shape[-1],))  # (..., N, d_v)
    pos = torch.arange(n)
    for q0 in range(0, n, block_size):
        q1 = min(q0 + block_size, n)
        k0, k1 = max(0, q0 - window), min(n, q1 + window)  # the only keys this block can see
        s = q[..., q0:q1, :] @ k[..., k0:k1, :].transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., b, keys)
        far = (pos[q0:q1, None] - pos[None, k0:k1]).abs() > window
        out[..., q0:q1, :] = torch.softmax(s.masked_fill(far, -math.inf), dim=-1) @ v[..., k0:k1, :]
    return out


def linear_attention(q, k, v):  # (..., N, d) each
    """φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1) with φ = elu + 1: O(N·d²), no N×N matrix."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1  # positive features
    kv = phi_k.transpose(-2, -1) @ v  # (..., d, d_v): the whole sequence in one d×d_v state
    return (phi_q @ kv) / (phi_q @ phi_k.sum(dim=-2).unsqueeze(-1))  # (..., N, d_v)


def linear_attention_weights(q, k):
    """The (..., N, N) weights linear attention uses implicitly: φ(q)·φ(k), rows normalised."""
    w = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)
    return w / w.sum(dim=-1, keepdim=True)


def window_weight_outside(q, k, window):
    """Per query, the share of full softmax weight on keys farther than window."""
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)  # (..., N, N)
    far = (torch.arange(q.shape[-2])[:, None] - torch.arange(k.shape[-2])[None, :]).abs() > window
    return (weights * far).sum(dim=-1)  # (..., N)
