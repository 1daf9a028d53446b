"""Notebook 08: the O(N²) cost of attention, measured; chunked, window and linear attention.

Holds the attention variants being compared, the time and peak-memory measurements (also used
by ``scripts/benchmark_attention.py``), the memory slider's drawing function and the checkers
of exercises 08-1 .. 08-3.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import numbers
import os
import sys
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from .attention import chunked_attention
from .exercises import Wrong, _call, exercise

__all__ = [
    "GIB",
    "naive_attention",
    "window_attention",
    "linear_attention",
    "linear_attention_weights",
    "window_weight_outside",
    "METHODS",
    "attention_flops",
    "score_matrix_bytes",
    "chunked_extra_bytes",
    "max_n_for_budget",
    "peak_memory_bytes",
    "time_call",
    "loglog_slope",
    "measure",
    "draw_scaling",
    "draw_memory_vs_n",
    "memory_explorer",
]

GIB = 2**30
QUERY_TILE_ROWS = 1024  # the query tile of helpers.attention.chunked_attention (for its memory formula)


# --------------------------------------------------------------------------- checks


def _check_qkv(query, key, value) -> None:
    for name, x in (("query", query), ("key", key), ("value", value)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if not x.is_floating_point() or x.dim() < 2:
            raise ValueError(f"{name} must be a floating-point tensor (..., T, d), got {x.dtype} {tuple(x.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(
            "expected query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v), got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )


def _check_positive_int(name: str, x, minimum: int = 1) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    return int(x)


# --------------------------------------------------------------------------- attention variants


def naive_attention(query, key, value, *, causal: bool = False) -> torch.Tensor:
    """softmax(QKᵀ/√d)V that materialises the full (..., T_q, T_k) score and weight matrices."""
    _check_qkv(query, key, value)
    scores = (query * (1.0 / math.sqrt(query.shape[-1]))) @ key.transpose(-2, -1)  # (..., T_q, T_k)
    if causal:
        t_q, t_k = scores.shape[-2:]
        future = torch.ones(t_q, t_k, dtype=torch.bool, device=scores.device).triu_(1)
        scores = scores.masked_fill_(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ value  # (..., T_q, d_v)


def window_attention(query, key, value, *, window: int, block_size: int = 128) -> torch.Tensor:
    """Local self-attention: query i sees only keys j with |i − j| <= window; O(N·window) cost."""
    _check_qkv(query, key, value)
    window = _check_positive_int("window", window, minimum=0)
    block_size = _check_positive_int("block_size", block_size)
    t = query.shape[-2]
    if key.shape[-2] != t:
        raise ValueError(f"window attention is self-attention: T_q must equal T_k, got {t} and {key.shape[-2]}")
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    out = query.new_empty(batch + (t, value.shape[-1]))  # (..., T, d_v)
    q = query * (1.0 / math.sqrt(query.shape[-1]))
    pos = torch.arange(t, device=query.device)
    for q0 in range(0, t, block_size):
        q1 = min(q0 + block_size, t)
        k0, k1 = max(0, q0 - window), min(t, q1 + window)  # the only keys this block can see
        s = q[..., q0:q1, :] @ key[..., k0:k1, :].transpose(-2, -1)  # (..., n_q, n_k)
        far = (pos[q0:q1, None] - pos[None, k0:k1]).abs() > window  # (n_q, n_k)
        out[..., q0:q1, :] = torch.softmax(s.masked_fill_(far, float("-inf")), dim=-1) @ value[..., k0:k1, :]
    return out


def _feature_map(x: torch.Tensor) -> torch.Tensor:
    return F.elu(x) + 1.0  # positive, so every weight φ(q)·φ(k) is > 0


def linear_attention(query, key, value) -> torch.Tensor:
    """Linear attention with φ = elu + 1: φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1); O(N·d²), no N×N matrix."""
    _check_qkv(query, key, value)
    phi_q, phi_k = _feature_map(query), _feature_map(key)  # (..., T_q, d), (..., T_k, d)
    kv = phi_k.transpose(-2, -1) @ value  # (..., d, d_v): the whole sequence in a d×d_v state
    norm = phi_q @ phi_k.sum(dim=-2).unsqueeze(-1)  # (..., T_q, 1)
    return (phi_q @ kv) / norm  # (..., T_q, d_v)


def linear_attention_weights(query, key) -> torch.Tensor:
    """The (..., T_q, T_k) weights linear attention uses implicitly: φ(q)·φ(k), rows normalised."""
    if not (isinstance(query, torch.Tensor) and isinstance(key, torch.Tensor)):
        raise TypeError(f"query and key must be tensors, got {type(query).__name__} and {type(key).__name__}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key need the same last dimension, got {tuple(query.shape)} and {tuple(key.shape)}")
    w = _feature_map(query) @ _feature_map(key).transpose(-2, -1)  # (..., T_q, T_k)
    return w / w.sum(dim=-1, keepdim=True)


def window_weight_outside(query, key, window: int) -> torch.Tensor:
    """Per query, the share of full softmax attention weight on keys farther than ``window``."""
    if not (isinstance(query, torch.Tensor) and isinstance(key, torch.Tensor)):
        raise TypeError(f"query and key must be tensors, got {type(query).__name__} and {type(key).__name__}")
    window = _check_positive_int("window", window, minimum=0)
    t_q, t_k = query.shape[-2], key.shape[-2]
    weights = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)  # (..., T_q, T_k)
    far = (torch.arange(t_q)[:, None] - torch.arange(t_k)[None, :]).abs() > window  # (T_q, T_k)
    return (weights * far).sum(dim=-1)  # (..., T_q)


METHODS = {
    "naive": naive_attention,
    "chunked": chunked_attention,
    "sdpa": F.scaled_dot_product_attention,
    "window": lambda q, k, v: window_attention(q, k, v, window=128),
    "linear": linear_attention,
}
METHOD_LABELS = {
    "naive": "단순 구현 (N×N)",
    "chunked": "청크 (온라인 소프트맥스)",
    "sdpa": "PyTorch SDPA",
    "window": "윈도 (w=128)",
    "linear": "선형 어텐션",
}
METHOD_COLORS = {"naive": "tab:red", "chunked": "tab:blue", "sdpa": "tab:green",
                 "window": "tab:purple", "linear": "tab:orange"}


# --------------------------------------------------------------------------- cost formulas


def attention_flops(n: int, d: int, *, heads: int = 1, batch: int = 1) -> int:
    """Multiply-adds of QKᵀ and PV counted as 2 FLOPs each: 4·B·h·N²·d."""
    n, d = _check_positive_int("n", n), _check_positive_int("d", d)
    return 4 * _check_positive_int("batch", batch) * _check_positive_int("heads", heads) * n * n * d


def score_matrix_bytes(n: int, *, heads: int = 1, batch: int = 1, bytes_per_value: int = 4) -> int:
    """Bytes of the (B, h, N, N) score matrix: B·h·N²·bytes (float32: 4 bytes per entry)."""
    n = _check_positive_int("n", n)
    return _check_positive_int("batch", batch) * _check_positive_int("heads", heads) * n * n * _check_positive_int(
        "bytes_per_value", bytes_per_value)


def chunked_extra_bytes(n: int, d: int, *, block_size: int = 128, heads: int = 1, batch: int = 1,
                        bytes_per_value: int = 4) -> int:
    """Memory chunked_attention allocates for N queries and keys: scaled Q and the output (2·N·d),
    two score tiles (the next is computed while the last is still referenced), the tile accumulator
    and a few per-row vectors (per batch·head)."""
    n, d = _check_positive_int("n", n), _check_positive_int("d", d)
    block = min(_check_positive_int("block_size", block_size), n)
    tile = min(block * max(1, QUERY_TILE_ROWS // block), n)
    per_head = 2 * n * d + 2 * tile * block + tile * d + 4 * tile
    return _check_positive_int("batch", batch) * _check_positive_int("heads", heads) * per_head * bytes_per_value


def max_n_for_budget(budget_bytes: float, *, heads: int = 1, batch: int = 1, bytes_per_value: int = 4) -> int:
    """Largest N whose (B, h, N, N) score matrix fits in ``budget_bytes``."""
    if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, numbers.Real) or budget_bytes <= 0:
        raise ValueError(f"budget_bytes must be a positive number, got {budget_bytes!r}")
    per_entry = score_matrix_bytes(1, heads=heads, batch=batch, bytes_per_value=bytes_per_value)
    n = math.isqrt(int(budget_bytes // per_entry))
    return n


# --------------------------------------------------------------------------- measurement


@contextlib.contextmanager
def _quiet_stderr():
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


def peak_memory_bytes(fn, *args, **kwargs) -> int:
    """Peak bytes the PyTorch CPU allocator held during ``fn(*args, **kwargs)``, beyond what existed before.

    Uses torch.profiler's memory events (every tensor allocation and free, in order) and takes
    the maximum of their running sum. Deterministic; counts tensor memory only.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    activities = [torch.profiler.ProfilerActivity.CPU]
    with _quiet_stderr(), torch.profiler.profile(activities=activities, profile_memory=True) as prof:
        fn(*args, **kwargs)
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    return max(itertools.accumulate((e.nbytes() for e in events), initial=0))


def time_call(fn, *args, repeat: int = 3, **kwargs) -> float:
    """Best of ``repeat`` wall-clock timings in seconds, after one warm-up call."""
    repeat = _check_positive_int("repeat", repeat)
    fn(*args, **kwargs)
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best


def loglog_slope(ns, ys) -> float:
    """Least-squares slope of log(y) against log(N): y ∝ N^slope."""
    x, y = np.asarray(ns, dtype=float), np.asarray(ys, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError(f"need two 1-D sequences of equal length >= 2, got shapes {x.shape} and {y.shape}")
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("log-log fit needs positive N and positive values")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def measure(method: str, n: int, d: int = 64, *, repeat: int = 3, seed: int = 0, timing: bool = True) -> dict:
    """Time and allocator peak of one attention method on (1, 1, N, d) random inputs."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    n, d = _check_positive_int("n", n), _check_positive_int("d", d)
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 1, n, d, generator=gen) for _ in range(3))  # (B, h, N, d)
    fn = METHODS[method]
    with torch.no_grad():
        peak = peak_memory_bytes(fn, q, k, v)
        seconds = time_call(fn, q, k, v, repeat=repeat) if timing else None
    return {"method": method, "n": n, "d": d, "seconds": seconds, "peak_bytes": peak}


# --------------------------------------------------------------------------- pictures


def draw_scaling(records, quantity: str, *, ax=None, fit_min_n: int = 1, methods=None) -> dict:
    """Log-log plot of ``quantity`` ('seconds' or 'peak_bytes') against N per method; returns fitted slopes."""
    if quantity not in ("seconds", "peak_bytes"):
        raise ValueError(f"quantity must be 'seconds' or 'peak_bytes', got {quantity!r}")
    methods = methods or [m for m in METHODS if any(r["method"] == m for r in records)]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    slopes = {}
    for method in methods:
        rows = sorted((r for r in records if r["method"] == method and r.get(quantity)), key=lambda r: r["n"])
        if not rows:
            continue
        ns = np.array([r["n"] for r in rows], dtype=float)
        ys = np.array([r[quantity] for r in rows], dtype=float) * (1e3 if quantity == "seconds" else 1 / 2**20)
        fit = ns >= fit_min_n
        slopes[method] = loglog_slope(ns[fit], ys[fit]) if fit.sum() >= 2 else float("nan")
        ax.loglog(ns, ys, "o-", color=METHOD_COLORS[method], base=2,
                  label=f"{METHOD_LABELS[method]}: 기울기 {slopes[method]:.2f}")
    ax.set_xlabel("시퀀스 길이 N")
    ax.set_ylabel("시간 (ms)" if quantity == "seconds" else "최대 메모리 (MiB)")
    ax.set_title("시간" if quantity == "seconds" else "최대 메모리")
    ax.legend(fontsize=8)
    return slopes


def _fmt_bytes(b: float) -> str:
    for unit, size in (("GiB", GIB), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def draw_memory_vs_n(log2_n: float, *, heads: int = 1, batch: int = 1, d: int = 64,
                     budgets_gib=(8, 16, 80), ax=None) -> dict:
    """Memory of the N×N scores vs chunked attention's working set for N = 2**log2_n (float32)."""
    if isinstance(log2_n, bool) or not isinstance(log2_n, numbers.Real) or not 4 <= log2_n <= 24:
        raise ValueError(f"log2_n must be a number in [4, 24], got {log2_n!r}")
    n = int(round(2**log2_n))
    grid = np.unique(np.round(np.logspace(4, 24, 81, base=2)).astype(int))
    matrix = np.array([score_matrix_bytes(int(m), heads=heads, batch=batch) for m in grid]) / GIB
    chunked = np.array([chunked_extra_bytes(int(m), d, heads=heads, batch=batch) for m in grid]) / GIB
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.loglog(grid, matrix, color="tab:red", base=2, label="N×N 점수 행렬")
    ax.loglog(grid, chunked, color="tab:blue", base=2, label="청크 어텐션 작업 메모리")
    here = {"n": n, "matrix_bytes": score_matrix_bytes(n, heads=heads, batch=batch),
            "chunked_bytes": chunked_extra_bytes(n, d, heads=heads, batch=batch)}
    ax.plot([n, n], [here["chunked_bytes"] / GIB, here["matrix_bytes"] / GIB], "ko", ms=5)
    ax.axvline(n, color="gray", lw=0.8, ls=":")
    here["fits"] = {}
    for i, budget in enumerate(sorted(budgets_gib)):
        n_max = max_n_for_budget(budget * GIB, heads=heads, batch=batch)
        here["fits"][budget] = here["matrix_bytes"] <= budget * GIB
        ax.axhline(budget, color="gray", lw=0.8, ls="--")
        below = i == 0  # the lowest label goes under its line so that close budgets do not overlap
        ax.text(grid[0], budget / 1.3 if below else budget * 1.3, f"{budget} GiB: N ≤ {n_max:,}", fontsize=7,
                color="dimgray", va="top" if below else "bottom")
    ax.set_xlabel("시퀀스 길이 N")
    ax.set_ylabel("메모리 (GiB)")
    ax.set_ylim(1e-6, 1e5)
    ax.set_title(f"N = {n:,} (B={batch}, h={heads}): 점수 {_fmt_bytes(here['matrix_bytes'])}, "
                 f"청크 {_fmt_bytes(here['chunked_bytes'])}", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    return here


def memory_explorer(*, d: int = 64):
    """Sliders for log2 N, heads and batch; redraws draw_memory_vs_n."""
    import ipywidgets as widgets

    controls = {
        "log2_n": widgets.FloatSlider(value=14, min=8, max=20, step=0.5, description="log₂ N",
                                      continuous_update=False),
        "heads": widgets.IntSlider(value=1, min=1, max=32, description="헤드 h", continuous_update=False),
        "batch": widgets.IntSlider(value=1, min=1, max=64, description="배치 B", continuous_update=False),
    }

    def redraw(log2_n, heads, batch):
        draw_memory_vs_n(log2_n, heads=heads, batch=batch, d=d)
        plt.show()

    out = widgets.interactive_output(redraw, controls)
    return widgets.VBox([*controls.values(), out])


# --------------------------------------------------------------------------- exercises


def _number(x, what: str) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise Wrong(f"{what}은(는) 숫자 하나여야 합니다; 받은 것은 {type(x).__name__}입니다.") from None
    if not math.isfinite(value):
        raise Wrong(f"{what}이(가) {value}입니다. 유한한 숫자여야 합니다.")
    return value


@exercise("08-1")
def _score_gib(fn):
    cases = [(16384, 1, 1, 4), (16384, 12, 32, 4), (196, 12, 32, 4), (4096, 16, 8, 2)]
    for n, h, b, nbytes in cases:
        call = f"score_gib(n={n}, heads={h}, batch={b}, bytes_per_value={nbytes})"
        got = _number(_call(fn, n, h, b, nbytes, what=call), call)
        want = n * n * h * b * nbytes / GIB
        if math.isclose(got, want, rel_tol=1e-6):
            continue
        hints = [
            (n * n * h * b * nbytes / 1e9, "10⁹(GB)으로 나눴습니다. GiB는 2³⁰ = 1,073,741,824 바이트입니다"),
            (n * n * h * b * nbytes * 8 / GIB, "바이트가 아니라 비트로 셌습니다 (8배)"),
            (n * n * h * nbytes / GIB, f"배치 {b}를 곱하지 않았습니다: 배치의 시퀀스마다 행렬이 하나씩 있습니다"),
            (n * n * b * nbytes / GIB, f"헤드 {h}를 곱하지 않았습니다: 헤드마다 N×N 행렬이 하나씩 있습니다"),
            (n * n * nbytes / GIB, "헤드와 배치를 곱하지 않았습니다"),
            (n * n * h * b / GIB, f"값 하나의 바이트 수({nbytes})를 곱하지 않았습니다"),
            (n * h * b * nbytes / GIB, "N을 한 번만 곱했습니다: 점수 행렬은 N×N입니다"),
        ]
        for value, message in hints:
            if math.isclose(got, value, rel_tol=1e-6):
                raise Wrong(f"{call} = {got:.4g}: {message} (정답 {want:.4g} GiB).")
        raise Wrong(f"{call} = {got:.4g}, 정답은 B·h·N²·바이트 / 2³⁰ = {want:.4g} GiB입니다.")
    return "B·h·N²·바이트 / 2³⁰. N이 2배가 되면 4배, 헤드나 배치가 2배가 되면 2배입니다."


def _block_state(scores: torch.Tensor, values: torch.Tensor):
    m = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - m)
    return m, p.sum(dim=-1, keepdim=True), p @ values


@exercise("08-2")
def _merge_states(fn):
    gen = torch.Generator().manual_seed(8)
    for shift_a, shift_b in ((0.0, 0.0), (3.0, -2.0), (-5.0, 4.0), (900.0, 1000.0)):
        scores = torch.randn(4, 10, generator=gen, dtype=torch.float64)
        scores[:, :6] += shift_a
        scores[:, 6:] += shift_b
        values = torch.randn(10, 3, generator=gen, dtype=torch.float64)
        a, b = _block_state(scores[:, :6], values[:6]), _block_state(scores[:, 6:], values[6:])
        got = _call(fn, a, b, what="merge(state_a, state_b)")
        if not (isinstance(got, (tuple, list)) and len(got) == 3):
            raise Wrong("merge는 (m, l, acc) 세 개를 튜플로 돌려줘야 합니다.")
        m, l, acc = (torch.as_tensor(x, dtype=torch.float64) for x in got)
        m_want = torch.maximum(a[0], b[0])
        ca, cb = torch.exp(a[0] - m_want), torch.exp(b[0] - m_want)
        l_want, acc_want = a[1] * ca + b[1] * cb, a[2] * ca + b[2] * cb
        case = f"(블록 A 점수 +{shift_a:g}, 블록 B 점수 +{shift_b:g})"
        if m.shape != m_want.shape or l.shape != l_want.shape or acc.shape != acc_want.shape:
            raise Wrong(f"모양이 다릅니다: m {tuple(m.shape)}, l {tuple(l.shape)}, acc {tuple(acc.shape)}; "
                        f"기대 {tuple(m_want.shape)}, {tuple(l_want.shape)}, {tuple(acc_want.shape)}.")
        if not (torch.isfinite(m).all() and torch.isfinite(l).all() and torch.isfinite(acc).all()):
            raise Wrong(f"{case}에서 NaN/inf가 나옵니다: exp(m_A)처럼 최댓값을 빼지 않은 지수는 넘칩니다. "
                        "exp(m_A − m), exp(m_B − m)처럼 차이만 지수에 넣으세요.")
        if not torch.allclose(m, m_want):
            raise Wrong(f"{case}: 새 최댓값 m은 max(m_A, m_B)여야 합니다.")
        if torch.allclose(l, a[1] + b[1]) and not torch.allclose(l, l_want):
            raise Wrong(f"{case}: l_A + l_B를 그대로 더했습니다. 두 합은 서로 다른 최댓값을 빼고 구한 것이라 "
                        "먼저 exp(m_A − m), exp(m_B − m)를 곱해 같은 기준으로 맞춰야 합니다.")
        if torch.allclose(l, a[1] / ca + b[1] / cb) and not torch.allclose(l, l_want):
            raise Wrong(f"{case}: 보정 계수의 부호가 반대입니다. exp(m − m_A)가 아니라 exp(m_A − m) (≤ 1)을 곱하세요.")
        if not torch.allclose(l, l_want):
            raise Wrong(f"{case}: l이 l_A·exp(m_A − m) + l_B·exp(m_B − m)와 다릅니다.")
        if not torch.allclose(acc, acc_want):
            hint = " acc에도 l과 같은 보정 계수를 곱해야 합니다." if torch.allclose(acc, a[2] + b[2]) else ""
            raise Wrong(f"{case}: acc가 acc_A·exp(m_A − m) + acc_B·exp(m_B − m)와 다릅니다.{hint}")
        full = torch.softmax(scores, dim=-1) @ values
        if not torch.allclose(acc / l, full, atol=1e-10):
            raise Wrong(f"{case}: acc / l이 softmax(점수) @ V와 다릅니다.")
    return "두 블록의 상태를 합친 결과의 acc / l이 전체 softmax 어텐션과 일치합니다 (점수가 1000이어도)."


@exercise("08-3")
def _linear_without_nxn(fn):
    gen = torch.Generator().manual_seed(83)
    q, k, v = (torch.randn(2, 7, 5, generator=gen, dtype=torch.float64) for _ in range(3))
    got = _call(fn, q, k, v, what="linear_attention_lean(q, k, v)")
    if not isinstance(got, torch.Tensor):
        raise Wrong(f"텐서를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
    want = linear_attention(q, k, v)
    if got.shape != want.shape:
        raise Wrong(f"출력 모양이 {tuple(got.shape)}입니다. 입력 (2, 7, 5)에 대해 (2, 7, 5)여야 합니다.")
    if not torch.allclose(got.double(), want, atol=1e-8):
        softmax_out = F.scaled_dot_product_attention(q, k, v)
        if torch.allclose(got.double(), softmax_out, atol=1e-8):
            raise Wrong("소프트맥스 어텐션의 결과입니다. φ(x) = elu(x) + 1 특징 함수로 선형 어텐션을 계산하세요.")
        raise Wrong(f"값이 φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1)과 다릅니다 (최대 차이 "
                    f"{(got.double() - want).abs().max().item():.3g}). 분모의 정규화를 확인하세요.")
    n, d = 2048, 16
    big = [torch.randn(1, n, d, generator=gen) for _ in range(3)]
    peak = peak_memory_bytes(fn, *big)
    matrix = n * n * 4
    if peak >= matrix // 2:
        raise Wrong(f"N = {n}에서 최대 메모리가 {peak / 2**20:.1f} MiB입니다: N×N 행렬({matrix / 2**20:.0f} MiB)을 "
                    "만들었습니다. 결합 법칙으로 괄호를 옮겨 φ(K)ᵀV (d×d_v)를 먼저 계산하세요.")
    return (f"값이 같고, N = {n}에서 최대 메모리 {peak / 2**20:.2f} MiB (N×N 행렬이었다면 "
            f"{matrix / 2**20:.0f} MiB)로 N×N 행렬을 만들지 않았습니다.")
