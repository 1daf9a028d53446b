"""Generated from notebooks/src/14_flash_attention_gpu.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import json
import math
import os
import statistics

import matplotlib.pyplot as plt
import torch
import triton
import triton.language as tl
from matplotlib import patheffects
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.ticker import MultipleLocator


def loop_hbm_bytes(n, d, tile=512, block=128, bytes_per_value=2):
    """HBM bytes of 08's chunked_attention run op by op on a GPU (one head): per key block the score
    block is written by bmm, read by amax, sum and baddbmm_, read and rewritten by sub_ and exp2_; acc twice."""
    steps = math.ceil(n / tile) * math.ceil(n / block)
    score_block, acc = tile * block, tile * d
    per_step = 8 * score_block + 4 * acc + 2 * block * d + acc  # S 8 passes; acc r/w twice; K, V; the q tile
    return steps * per_step * bytes_per_value


def fused_hbm_bytes(n, d, tile=128, bytes_per_value=2):
    """HBM bytes of one fused forward kernel (one head): every query tile reads all of K and V once."""
    return (math.ceil(n / tile) * 2 * n * d + 2 * n * d) * bytes_per_value + 4 * n  # + Q, O; + L (float32)


INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"  # `import helpers` chose it: 1 without a CUDA GPU


LOG2E = math.log2(math.e)  # e^x = 2^(x·log2 e), as in 08


def tile_config(d, dtype, device):
    """Fixed tiles (no autotune): (BLOCK_M queries, BLOCK_N keys, warps, pipeline stages) of the forward."""
    if device.type != "cuda":  # the interpreter: warps and stages are ignored, small tiles show the edges
        return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 1}
    if dtype == torch.float32:  # 4-byte tiles: half the size, so they fit in shared memory
        return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2}
    return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4 if d <= 64 else 8, "num_stages": 3}


@triton.jit
def flash_forward_kernel(Q, K, V, O, L, n, qk_scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_m, head = tl.program_id(0) * BLOCK_M, tl.program_id(1).to(tl.int64)  # a query tile, a head
    Q, K, V, O = Q + head * n * D, K + head * n * D, V + head * n * D, O + head * n * D
    rows, dims = start_m + tl.arange(0, BLOCK_M), tl.arange(0, D)  # (BLOCK_M,), (D,)
    in_q = rows[:, None] < n  # (BLOCK_M, 1): rows past N are neither read nor written
    q = tl.load(Q + rows[:, None] * D + dims[None, :], mask=in_q, other=0.0)  # (BLOCK_M, D)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running max, log2 units
    l = tl.zeros([BLOCK_M], tl.float32)  # running sum of 2^(s - m)
    acc = tl.zeros([BLOCK_M, D], tl.float32)  # running weighted sum of values
    end = tl.minimum(start_m + BLOCK_M, n) if CAUSAL else n  # causal: stop at the diagonal
    for start_n in range(0, end, BLOCK_N):
        keys = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,)
        in_k = keys < n  # the last block may run past N
        k_t = tl.load(K + keys[None, :] * D + dims[:, None], mask=in_k[None, :], other=0.0)
        s = tl.dot(q, k_t, input_precision=PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N), log2
        keep = in_k[None, :] & (keys[None, :] <= rows[:, None]) if CAUSAL else in_k[None, :]
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))  # (BLOCK_M,)
        c = tl.exp2(m - m_new)  # <= 1: rescales the old sums
        p = tl.exp2(s - m_new[:, None])  # (BLOCK_M, BLOCK_N)
        l = l * c + tl.sum(p, axis=1)
        v = tl.load(V + keys[:, None] * D + dims[None, :], mask=in_k[:, None], other=0.0)
        acc = acc * c[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)  # (BLOCK_M, D)
        m = m_new
    o = (acc / l[:, None]).to(O.dtype.element_ty)
    tl.store(O + rows[:, None] * D + dims[None, :], o, mask=in_q)
    tl.store(L + head * n + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < n)  # ·ln 2


def flash_forward(q, k, v, causal=False):  # (B, h, N, d) each, contiguous
    """Run the forward kernel: O (B, h, N, d) and the row log-sum-exp L (B, h, N), float32."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # addresses are row·d + column
    b, h, n, d = q.shape
    o, lse = torch.empty_like(q), torch.empty(b, h, n, device=q.device, dtype=torch.float32)
    cfg = tile_config(d, q.dtype, q.device)
    grid = (triton.cdiv(n, cfg["BLOCK_M"]), b * h)  # one program per (query tile, head)
    flash_forward_kernel[grid](q, k, v, o, lse, n, LOG2E / math.sqrt(d), D=d, CAUSAL=causal,
                               PRECISION="ieee" if q.dtype == torch.float32 else "tf32", **cfg)
    return o, lse


@triton.jit
def flash_backward_dkdv_kernel(Q, K, V, dO, L, Delta, dK, dV, n, qk_scale, sm_scale,
                               D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                               CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_n, head = tl.program_id(0) * BLOCK_N, tl.program_id(1).to(tl.int64)  # a key block, a head
    Q, K, V, dO = Q + head * n * D, K + head * n * D, V + head * n * D, dO + head * n * D
    L, Delta = L + head * n, Delta + head * n
    keys, dims = start_n + tl.arange(0, BLOCK_N), tl.arange(0, D)  # (BLOCK_N,), (D,)
    kv, in_k = keys[:, None] * D + dims[None, :], keys[:, None] < n  # (BLOCK_N, D) offsets
    k, v = tl.load(K + kv, mask=in_k, other=0.0), tl.load(V + kv, mask=in_k, other=0.0)
    dk, dv = tl.zeros([BLOCK_N, D], tl.float32), tl.zeros([BLOCK_N, D], tl.float32)
    begin = (start_n // BLOCK_M) * BLOCK_M if CAUSAL else 0  # earlier queries never see it
    for start_m in range(begin, n, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,)
        in_q = rows < n
        q_t = tl.load(Q + rows[None, :] * D + dims[:, None], mask=in_q[None, :], other=0.0)
        do = tl.load(dO + rows[:, None] * D + dims[None, :], mask=in_q[:, None], other=0.0)
        lse = tl.load(L + rows, mask=in_q, other=0.0) * 1.4426950408889634  # log2 units
        delta = tl.load(Delta + rows, mask=in_q, other=0.0)  # (BLOCK_M,)
        keep = in_q[None, :] & (keys[:, None] <= rows[None, :]) if CAUSAL else in_q[None, :]
        s_t = tl.dot(k, q_t, input_precision=PRECISION) * qk_scale  # (BLOCK_N, BLOCK_M) = Sᵀ
        p_t = tl.exp2(tl.where(keep, s_t - lse[None, :], float("-inf")))  # Pᵀ, recomputed from L
        dv += tl.dot(p_t.to(do.dtype), do, input_precision=PRECISION)  # dV = Pᵀ dO
        dp_t = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # dPᵀ = (dO Vᵀ)ᵀ
        ds_t = p_t * (dp_t - delta[None, :])  # dSᵀ = Pᵀ ∘ (dPᵀ − D)
        dk += tl.dot(ds_t.to(q_t.dtype), tl.trans(q_t), input_precision=PRECISION)  # dSᵀ Q
    tl.store(dK + head * n * D + kv, (dk * sm_scale).to(dK.dtype.element_ty), mask=in_k)
    tl.store(dV + head * n * D + kv, dv.to(dV.dtype.element_ty), mask=in_k)


@triton.jit
def flash_backward_dq_kernel(Q, K, V, dO, L, Delta, dQ, n, qk_scale, sm_scale,
                             D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_m, head = tl.program_id(0) * BLOCK_M, tl.program_id(1).to(tl.int64)  # a query tile, a head
    Q, K, V, dO = Q + head * n * D, K + head * n * D, V + head * n * D, dO + head * n * D
    rows, dims = start_m + tl.arange(0, BLOCK_M), tl.arange(0, D)  # (BLOCK_M,), (D,)
    qo, in_q = rows[:, None] * D + dims[None, :], rows[:, None] < n  # (BLOCK_M, D) offsets
    q, do = tl.load(Q + qo, mask=in_q, other=0.0), tl.load(dO + qo, mask=in_q, other=0.0)
    lse = tl.load(L + head * n + rows, mask=rows < n, other=0.0) * 1.4426950408889634  # log2
    delta = tl.load(Delta + head * n + rows, mask=rows < n, other=0.0)  # (BLOCK_M,)
    dq = tl.zeros([BLOCK_M, D], tl.float32)
    end = tl.minimum(start_m + BLOCK_M, n) if CAUSAL else n  # causal: stop at the diagonal
    for start_n in range(0, end, BLOCK_N):
        keys = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,)
        in_k = keys[None, :] < n
        k_t = tl.load(K + keys[None, :] * D + dims[:, None], mask=in_k, other=0.0)  # (D, BLOCK_N)
        v_t = tl.load(V + keys[None, :] * D + dims[:, None], mask=in_k, other=0.0)  # (D, BLOCK_N)
        keep = in_k & (keys[None, :] <= rows[:, None]) if CAUSAL else in_k
        s = tl.dot(q, k_t, input_precision=PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N)
        p = tl.exp2(tl.where(keep, s - lse[:, None], float("-inf")))  # P, recomputed from L
        dp = tl.dot(do, v_t, input_precision=PRECISION)  # dP = dO Vᵀ
        ds = p * (dp - delta[:, None])  # dS = P ∘ (dP − D)
        dq += tl.dot(ds.to(k_t.dtype), tl.trans(k_t), input_precision=PRECISION)  # dQ = dS K
    tl.store(dQ + head * n * D + qo, (dq * sm_scale).to(dQ.dtype.element_ty), mask=in_q)


class FlashAttention(torch.autograd.Function):
    """softmax(QKᵀ/√d)V with the Triton kernels above: forward saves O and L, backward recomputes P."""

    @staticmethod
    def forward(ctx, q, k, v, causal):  # (B, h, N, d) each
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # the backward kernels need them too
        o, lse = flash_forward(q, k, v, causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    @torch.autograd.function.once_differentiable  # the kernels have no backward of their own
    def backward(ctx, d_o):
        q, k, v, o, lse = ctx.saved_tensors
        (b, h, n, d), d_o, gpu = q.shape, d_o.contiguous(), q.device.type == "cuda"
        delta = (d_o.float() * o.float()).sum(dim=-1)  # (B, h, N): D = rowsum(dO ∘ O)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        small, big = (32, 128 if d <= 64 else 64) if gpu else (32, 64)  # the fixed side accumulates
        args = (q, k, v, d_o, lse, delta)
        opts = {"D": d, "CAUSAL": ctx.causal, "PRECISION": "ieee" if q.dtype == torch.float32 else "tf32",
                "num_warps": 4 if d <= 64 else 8, "num_stages": 2 if gpu else 1}
        grid, scales = (triton.cdiv(n, big), b * h), (n, LOG2E / math.sqrt(d), 1 / math.sqrt(d))
        flash_backward_dkdv_kernel[grid](*args, dk, dv, *scales, BLOCK_M=small, BLOCK_N=big, **opts)
        flash_backward_dq_kernel[grid](*args, dq, *scales, BLOCK_M=big, BLOCK_N=small, **opts)
        return dq, dk, dv, None


def flash_attention(q, k, v, causal=False):  # (B, h, N, d) each
    """FlashAttention forward and backward in Triton (compiled on a GPU, interpreted on a CPU)."""
    return FlashAttention.apply(q, k, v, causal)


def tile_map(n, block_m, block_n, causal):
    """(query tiles, key blocks) grid of the forward kernel: 0 skipped, 1 computed and all kept,
    2 computed with some scores thrown away (the diagonal, keys past N, or query rows past N)."""
    tiles, blocks = math.ceil(n / block_m), math.ceil(n / block_n)
    grid = torch.zeros(tiles, blocks, dtype=torch.int64)
    for i in range(tiles):
        end = min((i + 1) * block_m, n) if causal else n  # the kernel's loop bound
        for j in range(math.ceil(end / block_n)):
            last_key, first_row = min((j + 1) * block_n, n) - 1, i * block_m
            partial = (j + 1) * block_n > n or (i + 1) * block_m > n or (causal and last_key > first_row)
            grid[i, j] = 2 if partial else 1
    return grid


TILE_COLORS = ListedColormap(["#d0d0d0", "#4c72b0", "#dd8452"])
TILE_SHAPES = {"32×32": (32, 32), "64×32": (64, 32), "128×64": (128, 64)}


def tile_map_view(ax, max_n=None):
    """Draw tile_map on ax in token positions, white lines on the query-tile and key-block edges and a dashed
    line at N; update(n, causal, tiles) redraws it in place and returns the counts. With max_n the axes stay at
    0..max_n (rounded up to whole tiles) for every N and tile shape, so no control changes them and each move
    redraws only the map, the lines and the texts; without it they fit the tiles of each N."""
    image = ax.imshow(tile_map(256, 64, 32, False).numpy(), cmap=TILE_COLORS, vmin=0, vmax=2, aspect="auto",
                      interpolation="nearest")
    edges = ax.add_collection(LineCollection([], colors="white", linewidths=0.8), autolim=False)
    (end,) = ax.plot([], [], color="black", linestyle="--", linewidth=1)  # the sequence's end: past it, out-of-range rows
    end_label = ax.text(0, 0, "N ", ha="right", va="top", fontsize=9,
                        path_effects=[patheffects.withStroke(linewidth=2, foreground="white")])  # readable on any cell
    ax.set_xlabel("키 위치 (토큰), 세로 선 사이 = 키 블록")
    ax.set_ylabel("쿼리 위치 (토큰)\n가로 선 사이 = 쿼리 타일 = 프로그램")
    ax.xaxis.set_major_locator(MultipleLocator(128))
    ax.yaxis.set_major_locator(MultipleLocator(128))
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=TILE_COLORS(i), edgecolor="none") for i in range(3)]  # paints once
    ax.legend(handles, ["건너뜀", "모두 사용", "계산하고 일부 버림"], fontsize=8, loc="upper right",
              bbox_to_anchor=(1.0, -0.14), ncol=3, frameon=False)
    if max_n:  # the largest padded extent over the tile shapes: set once, so no move changes the axes
        size = max(math.ceil(max_n / b) * b for shape in TILE_SHAPES.values() for b in shape)
        ax.set(xlim=(0, size), ylim=(size, 0))

    def update(n, causal, tiles):
        block_m, block_n = TILE_SHAPES[tiles]
        grid = tile_map(n, block_m, block_n, causal)  # (query tiles, key blocks)
        height, width = grid.shape[0] * block_m, grid.shape[1] * block_n  # tokens, padded to whole tiles
        image.set_data(grid.numpy())
        image.set_extent((0, width, height, 0))
        edges.set_segments([[(x, 0), (x, height)] for x in range(block_n, width, block_n)]
                           + [[(0, y), (width, y)] for y in range(block_m, height, block_m)])
        end.set_data([n, n, 0], [0, n, n])  # x = N down to the corner, then y = N back to the left edge
        end_label.set_position((n, 0))
        if not max_n:
            ax.set(xlim=(0, width), ylim=(height, 0))
        visited = int((grid > 0).sum())
        useful = n * (n + 1) // 2 if causal else n * n
        view = {"visited": visited, "total": grid.numel(), "used": useful / (visited * block_m * block_n)}
        ax.set_title(f"N = {n}, 타일×블록 {tiles}, {'인과' if causal else '비인과'}\n블록 {visited}/{grid.numel()} 방문, "
                     f"계산한 점수 중 {view['used']:.0%} 사용", fontsize=9)
        return view

    return update


def tile_explorer():
    """Sliders for N, causal and the tile shape over one tile_map_view figure."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=80)
    fig.subplots_adjust(left=0.14, right=0.97, top=0.87, bottom=0.22)
    controls = {"n": widgets.IntSlider(value=512, min=64, max=512, step=64, description="N"),
                "causal": widgets.Checkbox(value=True, description="인과 마스크"),
                "tiles": widgets.Dropdown(options=list(TILE_SHAPES), value="64×32", description="타일×블록")}
    return Explorer(fig, tile_map_view(ax, max_n=controls["n"].max), controls)


GPU_METHOD_LABELS = {"triton": "이 노트북의 커널", "triton_full": "이 노트북의 커널(비인과)", "sdpa_flash": "SDPA FlashAttention-2", "sdpa_cudnn": "SDPA cuDNN",
                 "sdpa_efficient": "SDPA 메모리 효율", "sdpa_math": "SDPA math", "naive": "단순 구현",
                 "chunked": "08번 반복문"}


def load_gpu_benchmark(path):
    """The stored benchmark (scripts/benchmark_gpu.py), or None when no GPU run was stored."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def benchmark_series(result, metric, *, dtype, d, causal, mode="forward"):
    """{method: ([N ...], [value ...])} of one setting; metric is "tflops" or "peak_bytes"."""
    series = {}
    for r in result["records"]:
        if (r["dtype"], r["d"], r["causal"], r["mode"]) == (dtype, d, causal, mode) and r.get(metric) is not None:
            xs, ys = series.setdefault(r["method"], ([], []))
            xs.append(r["n"])
            ys.append(r[metric])
    return series


def draw_gpu_benchmark(result, axes, *, dtype="float16", d=64, causal=False):
    """TFLOP/s and peak extra memory vs N of every method, on two axes."""
    for ax, metric in zip(axes, ("tflops", "peak_bytes")):
        for method, (xs, ys) in benchmark_series(result, metric, dtype=dtype, d=d, causal=causal).items():
            scale = 1 if metric == "tflops" else 2**-20
            ax.plot(xs, [y * scale for y in ys], "o-", label=GPU_METHOD_LABELS.get(method, method), lw=2.5 if method == "triton" else 1.2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("시퀀스 길이 N")
        if metric == "peak_bytes":
            ax.set_yscale("log")
    axes[0].set_ylabel("TFLOP/s")
    axes[1].set_ylabel("최대 추가 메모리 (MiB)")
    axes[0].legend(fontsize=7)
    axes[0].set_title(f"{result['device']}: {dtype}, d = {d}, {'인과' if causal else '비인과'}", fontsize=9)


def benchmark_ratios(result, *, dtype="float16", min_n=4096):
    """Medians over N >= min_n: ours ÷ SDPA's FlashAttention-2 and cuDNN backends, per (d, mode, causal);
    and ours causal ÷ ours non-causal (TFLOP/s counted on the unmasked half), per (d, mode)."""
    table = {}
    for d in sorted({r["d"] for r in result["records"]}):
        for mode in ("forward", "forward_backward"):
            ours = {}
            for causal in (False, True):
                series = benchmark_series(result, "tflops", dtype=dtype, d=d, causal=causal, mode=mode)
                ours[causal] = dict(zip(*series.get("triton", ([], []))))
                for other in ("sdpa_flash", "sdpa_cudnn"):
                    theirs = dict(zip(*series.get(other, ([], []))))
                    ratios = [ours[causal][n] / theirs[n] for n in ours[causal] if n >= min_n and n in theirs]
                    if ratios:
                        table[(d, mode, causal, other)] = statistics.median(ratios)
            same = [ours[True][n] / ours[False][n] for n in ours[True] if n >= min_n and n in ours[False]]
            if same:
                table[(d, mode, True, "triton_full")] = statistics.median(same)
    return table
