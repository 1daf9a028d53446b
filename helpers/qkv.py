"""Notebook 03 (Query, Key, Value): projections, the seed examples, the query picker, exercise checks."""

from __future__ import annotations

import math
import numbers

import matplotlib.pyplot as plt
import numpy as np
import torch

from .attention import scaled_dot_product_attention, softmax
from .data import load_json
from .exercises import Wrong, _call, exercise
from .plots import to_numpy, weight_bars

__all__ = [
    "project",
    "qkv_attention",
    "load_bae",
    "load_i_am_a_student",
    "max_abs_diff",
    "bae_top_weight",
    "draw_query_weights",
    "draw_query_grid",
    "query_explorer",
]


# --------------------------------------------------------------------------- computations


def _as_matrix(name: str, x) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 2 or not x.is_floating_point():
        raise ValueError(f"{name} must be a 2-D floating-point matrix, got shape {tuple(x.shape)} and dtype {x.dtype}")
    return x


def project(x, w_q, w_k, w_v) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Q, K, V = X W^Q, X W^K, X W^V for one sequence x of shape (T, d_model)."""
    x = _as_matrix("x", x)
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        _as_matrix(name, w)
        if w.shape[0] != x.shape[1]:
            raise ValueError(f"{name} must have {x.shape[1]} rows (d_model of x {tuple(x.shape)}), got shape {tuple(w.shape)}")
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(f"w_q and w_k must give the same d_k, got {tuple(w_q.shape)} and {tuple(w_k.shape)}")
    return x @ w_q, x @ w_k, x @ w_v  # (T, d_k), (T, d_k), (T, d_v)


def qkv_attention(x_q, x_kv, w_q, w_k, w_v) -> dict:
    """Attention where queries come from x_q and keys/values from x_kv (the same tensor for self-attention).

    Returns a dict with Q, K, V, the scaled scores QKᵀ/√d_k, the weights and the output.
    """
    x_q, x_kv = _as_matrix("x_q", x_q), _as_matrix("x_kv", x_kv)
    if x_q.shape[1] != x_kv.shape[1]:
        raise ValueError(f"x_q and x_kv must share d_model, got {tuple(x_q.shape)} and {tuple(x_kv.shape)}")
    q, _, _ = project(x_q, w_q, w_k, w_v)  # (T_q, d_k)
    _, k, v = project(x_kv, w_q, w_k, w_v)  # (T_k, d_k), (T_k, d_v)
    out, weights = scaled_dot_product_attention(q, k, v)  # (T_q, d_v), (T_q, T_k)
    scores = q @ k.T / math.sqrt(q.shape[-1])  # (T_q, T_k)
    return {"Q": q, "K": k, "V": v, "scores": scores, "weights": weights, "output": out}


def _tensors(d: dict, keys) -> dict:
    return {k: torch.tensor(d[k], dtype=torch.float64) for k in keys}


def load_bae() -> dict:
    """Seed 003's sentence: tokens, X (8, 4), W_Q, W_K, W_V (4, 4) and the seed's printed numbers."""
    d = load_json("seed003_bae.json")
    out = {"tokens": list(d["tokens"]), **_tensors(d, ("X", "W_Q", "W_K", "W_V"))}
    claims = d["seed_claims"]
    out["claims"] = {
        k: (torch.tensor(v, dtype=torch.float64) if isinstance(v, (list, float, int)) else v)
        for k, v in claims.items()
    }
    return out


def load_i_am_a_student() -> dict:
    """Seed 001's example: what the seed states and the embeddings we had to assume."""
    d = load_json("seed001_i_am_a_student.json")
    stated = d["stated"]
    x = torch.tensor([d["embeddings"][t] for t in d["tokens"]], dtype=torch.float64)
    return {
        "tokens": list(d["tokens"]),
        "X": x,  # (4, 4): row 0 stated, rows 1..3 assumed
        "assumed_tokens": list(d["assumed_tokens"]),
        **_tensors(stated, ("W_Q", "W_K", "W_V", "Q_I", "K_I", "V_I")),
        "score_I_I": float(stated["score_I_I"]),
        "claimed_key_dim": int(stated["claimed_key_dim"]),
    }


def max_abs_diff(computed, claimed) -> tuple[float, tuple[int, ...]]:
    """Largest |computed - claimed| and where it occurs (index tuple)."""
    a, b = torch.as_tensor(to_numpy(computed)), torch.as_tensor(to_numpy(claimed))
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: computed {tuple(a.shape)}, claimed {tuple(b.shape)}")
    diff = (a - b).abs()
    flat = int(diff.argmax())
    return float(diff.max()), tuple(int(i) for i in np.unravel_index(flat, tuple(a.shape)))


# --------------------------------------------------------------------------- query picker


def _check_scale(scale) -> float:
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number, got {type(scale).__name__}")
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"scale must be a finite number > 0, got {scale}")
    return float(scale)


def draw_query_weights(scores, tokens, query: int, *, scale: float = 1.0, query_tokens=None, ax=None,
                       ylim=(0.0, 1.0)):
    """Bar chart of softmax(scale · scores[query]) over the keys; returns that weight row (numpy).

    ``tokens`` label the keys; ``query_tokens`` label the queries (default: the same tokens).
    """
    s = torch.as_tensor(to_numpy(scores), dtype=torch.float64)
    if s.ndim != 2 or s.shape[1] != len(tokens):
        raise ValueError(f"scores must be (T_q, T_k={len(tokens)}) for {len(tokens)} key tokens, got shape {tuple(s.shape)}")
    query_tokens = tokens if query_tokens is None else query_tokens
    if len(query_tokens) != s.shape[0]:
        raise ValueError(f"need one query label per row: {len(query_tokens)} labels, scores of shape {tuple(s.shape)}")
    if isinstance(query, bool) or not isinstance(query, numbers.Integral) or not 0 <= query < s.shape[0]:
        raise ValueError(f"query must be an integer row index in [0, {s.shape[0]}), got {query!r}")
    scale = _check_scale(scale)
    w = softmax(s[query] * scale).numpy()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.2))
    top = int(w.argmax())
    colors = ["tab:orange" if j == top else "tab:blue" for j in range(len(w))]
    weight_bars(w, tokens, ax=ax, ylim=ylim, color=colors)
    ax.axhline(1.0 / len(w), color="gray", linestyle="--", linewidth=1, label=f"균등 1/{len(w)}")
    ax.tick_params(axis="x", labelrotation=45)
    ax.set_title(f"쿼리 '{query_tokens[query]}' (×{scale:g}): 최대 '{tokens[top]}' {w[top]:.3f}", fontsize=10)
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    return w


def draw_query_grid(scores, tokens, queries, scales=(1.0,), *, query_tokens=None, figsize=(11.0, 5.6)):
    """Static counterpart of the query picker: one panel per (scale, query); returns the weight rows."""
    if len(queries) == 0 or len(scales) == 0:
        raise ValueError(f"need at least one query and one scale, got queries={list(queries)}, scales={list(scales)}")
    fig, axes = plt.subplots(len(scales), len(queries), figsize=figsize, squeeze=False, sharey=True)
    rows = np.stack([
        np.stack([draw_query_weights(scores, tokens, q, scale=c, query_tokens=query_tokens, ax=axes[i, j]) for j, q in enumerate(queries)])
        for i, c in enumerate(scales)
    ])  # (n_scales, n_queries, T_k)
    fig.tight_layout()
    return rows


def query_explorer(scores, tokens, *, max_scale: float = 100.0):
    """Sliders for the query token and a score multiplier; the figure redraws that query's weights."""
    import ipywidgets as widgets

    pick = widgets.SelectionSlider(options=[(t, i) for i, t in enumerate(tokens)], value=min(2, len(tokens) - 1),
                                   description="쿼리", continuous_update=False)
    scale = widgets.FloatLogSlider(value=1.0, base=10, min=0, max=math.log10(max_scale), step=0.05,
                                   description="점수 배율", continuous_update=False)

    def redraw(query, c):
        draw_query_weights(scores, tokens, query, scale=c)
        plt.show()

    out = widgets.interactive_output(redraw, {"query": pick, "c": scale})
    return widgets.VBox([pick, scale, out])


# --------------------------------------------------------------------------- exercises


def _pair(result, what: str) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise Wrong(f"{what}는 (output, weights) 두 개를 돌려줘야 합니다; 받은 것은 {type(result).__name__}입니다.")
    try:
        return tuple(torch.as_tensor(r, dtype=torch.float64) for r in result)
    except Exception:
        raise Wrong(f"{what}의 결과를 텐서로 바꿀 수 없습니다.") from None


def _exercise_case(seed: int, t_q: int, t_k: int, d_model: int = 4, d_k: int = 6, d_v: int = 3):
    g = torch.Generator().manual_seed(seed)
    x_q = torch.randn(t_q, d_model, generator=g, dtype=torch.float64)
    x_kv = torch.randn(t_k, d_model, generator=g, dtype=torch.float64)
    ws = [torch.randn(d_model, d, generator=g, dtype=torch.float64) for d in (d_k, d_k, d_v)]
    return x_q, x_kv, ws


@exercise("03-1")
def _self_attention(fn):
    x, _, (w_q, w_k, w_v) = _exercise_case(31, 5, 5)
    what = "self_attention(X, W_Q, W_K, W_V)"
    got_out, got_w = _pair(_call(fn, x, w_q, w_k, w_v, what=what), what)
    ref = qkv_attention(x, x, w_q, w_k, w_v)
    q, k, _v, d_k = ref["Q"], ref["K"], ref["V"], ref["Q"].shape[-1]
    if got_w.shape != ref["weights"].shape:
        raise Wrong(f"weights의 모양이 {tuple(got_w.shape)}입니다. 토큰 5개의 셀프 어텐션이면 (T, T) = (5, 5)여야 합니다.")
    if got_out.shape != ref["output"].shape:
        hint = ""
        if got_out.shape == x.shape:
            hint = " 출력에 X를 섞었나요? 밸류 V = X W_V를 섞어야 합니다."
        elif got_out.shape == q.shape:
            hint = " 출력에 쿼리나 키(d_k차원)를 섞었습니다. 가중합하는 것은 밸류 V = X W_V입니다."
        raise Wrong(f"output의 모양이 {tuple(got_out.shape)}입니다. (T, d_v) = {tuple(ref['output'].shape)}여야 합니다.{hint}")
    if torch.allclose(got_w, ref["scores"], atol=1e-6):
        raise Wrong("weights 자리에 점수(QKᵀ/√d_k)를 돌려줬습니다. 소프트맥스를 거쳐야 가중치가 됩니다 (한 행의 합 1).")
    wrong_weights = {
        "√d_k로 나누지 않았습니다 (softmax(QKᵀ)).": torch.softmax(q @ k.T, -1),
        f"d_k={d_k}로 나눴습니다. √d_k = {math.sqrt(d_k):.3f}로 나눠야 합니다.": torch.softmax(q @ k.T / d_k, -1),
        "소프트맥스를 열 방향(dim=0)으로 했습니다: 각 쿼리(행)의 가중치 합이 1이어야 합니다.": torch.softmax(q @ k.T / math.sqrt(d_k), 0),
        "점수가 전치되었습니다 (KQᵀ): 행은 쿼리, 열은 키여야 합니다 (Q Kᵀ).": torch.softmax(k @ q.T / math.sqrt(d_k), -1),
        "투영하지 않은 X끼리 내적했습니다: 점수는 Q = X W_Q와 K = X W_K로 계산합니다.": torch.softmax(x @ x.T / math.sqrt(x.shape[1]), -1),
    }
    for message, w in wrong_weights.items():
        if torch.allclose(got_w, w, atol=1e-6):
            raise Wrong(f"가중치가 틀렸습니다: {message}")
    if not torch.allclose(got_w, ref["weights"], atol=1e-6):
        i, j = max_abs_diff(got_w, ref["weights"])[1]
        raise Wrong(f"weights[{i}, {j}] = {got_w[i, j].item():.4f}, 정답 {ref['weights'][i, j].item():.4f}입니다.")
    if not torch.allclose(got_out, ref["output"], atol=1e-6):
        i, j = max_abs_diff(got_out, ref["output"])[1]
        raise Wrong(f"가중치는 맞지만 output[{i}, {j}] = {got_out[i, j].item():.4f}, 정답 {ref['output'][i, j].item():.4f}입니다 (output = weights @ V).")
    return "세 투영, 점수 QKᵀ/√d_k, 행 방향 소프트맥스, 밸류의 가중합이 모두 맞습니다."


@exercise("03-2")
def _cross_attention(fn):
    dec, enc, (w_q, w_k, w_v) = _exercise_case(32, 3, 5)
    what = "cross_attention(dec, enc, W_Q, W_K, W_V)"
    hint = "힌트: 쿼리는 디코더(dec), 키와 밸류는 둘 다 인코더(enc)에서 옵니다."
    got_out, got_w = _pair(_call(fn, dec, enc, w_q, w_k, w_v, what=what, hint=hint), what)
    ref = qkv_attention(dec, enc, w_q, w_k, w_v)
    if got_w.shape == (5, 3):
        raise Wrong("weights의 모양이 (5, 3)입니다: 쿼리를 인코더에서 만들었습니다. 쿼리는 디코더 상태 3개, 키는 인코더 상태 5개라서 (T_q, T_k) = (3, 5)여야 합니다.")
    if got_w.shape == (3, 3):
        raise Wrong(f"weights의 모양이 (3, 3)입니다: 키를 디코더에서 만든 셀프 어텐션입니다. 키는 인코더 상태 5개에서 만들어 (3, 5)가 되어야 합니다. {hint}")
    if got_w.shape != (3, 5):
        raise Wrong(f"weights의 모양이 {tuple(got_w.shape)}입니다. (T_q, T_k) = (3, 5)여야 합니다.")
    if not torch.allclose(got_w, ref["weights"], atol=1e-6):
        if torch.allclose(got_w, torch.softmax(dec @ w_q @ (enc @ w_k).T, -1), atol=1e-6):
            raise Wrong("√d_k로 나누지 않았습니다. 크로스 어텐션도 점수는 QKᵀ/√d_k입니다.")
        if torch.allclose(got_w, torch.softmax(ref["scores"], 0), atol=1e-6):
            raise Wrong("소프트맥스를 열 방향(dim=0)으로 했습니다: 각 디코더 쿼리(행)의 가중치 합이 1이어야 합니다.")
        if torch.allclose(got_w, ref["scores"], atol=1e-6):
            raise Wrong("weights 자리에 점수(QKᵀ/√d_k)를 돌려줬습니다. 소프트맥스를 거쳐야 가중치가 됩니다 (한 행의 합 1).")
        i, j = max_abs_diff(got_w, ref["weights"])[1]
        raise Wrong(f"weights[{i}, {j}] = {got_w[i, j].item():.4f}, 정답 {ref['weights'][i, j].item():.4f}입니다.")
    if got_out.shape != ref["output"].shape:
        raise Wrong(f"output의 모양이 {tuple(got_out.shape)}입니다. (T_q, d_v) = {tuple(ref['output'].shape)}여야 합니다.")
    if not torch.allclose(got_out, ref["output"], atol=1e-6):
        raise Wrong(f"가중치는 맞지만 output이 다릅니다: output = weights @ (enc @ W_V)여야 합니다. {hint}")
    return "쿼리 3개(디코더)가 키·밸류 5개(인코더)를 봅니다: weights (3, 5), output (3, d_v)."


def bae_top_weight(c: float) -> tuple[float, str]:
    """Largest weight in the row of '배' when every score is multiplied by c, and its key token."""
    bae = load_bae()
    scores = qkv_attention(bae["X"], bae["X"], bae["W_Q"], bae["W_K"], bae["W_V"])["scores"]
    w = softmax(scores[2] * _check_scale(c))
    top = int(w.argmax())
    return float(w[top]), bae["tokens"][top]


@exercise("03-3")
def _bae_scale(c):
    if isinstance(c, torch.Tensor) and c.numel() == 1:
        c = c.item()
    if isinstance(c, bool) or not isinstance(c, numbers.Real):
        raise Wrong(f"배율 c는 숫자 하나여야 합니다; 받은 것은 {type(c).__name__}입니다.")
    if not math.isfinite(c):
        raise Wrong(f"c = {c}는 유한한 수가 아닙니다.")
    if c <= 0:
        raise Wrong(f"c = {c:g} ≤ 0입니다. 음수를 곱하면 점수의 순서가 뒤집혀 가장 낮던 키가 이깁니다; 양수 배율을 찾으세요.")
    top, token = bae_top_weight(c)
    if top < 0.5:
        return_hint = "더 크게" if c >= 1 else "1보다 크게"
        raise Wrong(f"c = {c:g}이면 '배' 행의 최대 가중치는 '{token}'의 {top:.3f}로 아직 0.5보다 작습니다. c를 {return_hint} 해 보세요.")
    return (f"c = {c:g}에서 '배' 행의 최대 가중치는 '{token}'의 {top:.3f}입니다. 거의 균등했던 것은 점수 차이가 작아서입니다. "
            "양수 배율은 분포를 날카롭게 할 뿐 순위를 바꾸지 않으므로, 이기는 키는 '고파서'가 아니라 여전히 '배' 자신입니다.")
