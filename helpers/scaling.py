"""Notebook 04: why attention divides q·k by √d_k (variance, saturation, gradients, the d_k slider)."""

from __future__ import annotations

import math
import numbers
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
import torch

from .attention import entropy, softmax  # noqa: F401  (entropy is re-exported for the notebooks)
from .exercises import Wrong, _as_tensor, _call, exercise

__all__ = [
    "DKS",
    "SCALES",
    "sample_dot_products",
    "dot_product_variance",
    "entropy",
    "softmax_jacobian",
    "jacobian_norm",
    "saturation_stats",
    "saturation_sweep",
    "dk_axis",
    "draw_dk",
    "dk_explorer",
]

DKS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
# How q·k is divided before the softmax: not at all, by √d_k (the transformer), or by d_k.
SCALES = {"none": lambda d: 1.0, "sqrt": math.sqrt, "linear": float}
_CHUNK = 1 << 20  # numbers drawn at once, so d_k = 1024 never needs a huge tensor


# --------------------------------------------------------------------------- checks


def _check_positive_int(name: str, x) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {type(x).__name__} {x!r}")
    if x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x}")
    return int(x)


def _check_scale(scale: str) -> str:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}, got {scale!r}")
    return scale


def _check_weights(weights) -> torch.Tensor:
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if not weights.is_floating_point() or weights.dim() < 1:
        raise ValueError(
            f"weights must be a floating-point tensor (..., T), got dtype {weights.dtype}, "
            f"shape {tuple(weights.shape)}"
        )
    if (weights < 0).any():
        raise ValueError("weights must be >= 0 (softmax outputs), got a negative entry")
    return weights


# --------------------------------------------------------------------------- variance


def sample_dot_products(d_k: int, n: int, *, seed: int = 0) -> torch.Tensor:
    """n dot products q·k of independent standard-normal q, k of length d_k, shape (n,), as float64."""
    d_k, n = _check_positive_int("d_k", d_k), _check_positive_int("n", n)
    gen = torch.Generator().manual_seed(seed)
    rows = max(1, _CHUNK // d_k)
    parts = []
    for start in range(0, n, rows):
        m = min(rows, n - start)
        # float32 draws are ~4x faster; a sum of <= 1024 products loses nothing that matters here.
        q = torch.randn(m, d_k, generator=gen)  # (m, d_k)
        k = torch.randn(m, d_k, generator=gen)  # (m, d_k)
        parts.append((q * k).sum(dim=-1))  # (m,)
    return torch.cat(parts).double()


@lru_cache(maxsize=32)
def _cached_dots(d_k: int, n: int, seed: int) -> torch.Tensor:
    # The slider revisits the same d_k values; drawing 8M normals each time would be slow.
    return sample_dot_products(d_k, n, seed=seed)


def dot_product_variance(d_ks=DKS, n: int = 10_000, *, seed: int = 0) -> dict:
    """Sample mean and variance of q·k and of q·k/√d_k for each d_k (one seed per d_k)."""
    out = {"d_k": [], "mean": [], "var": [], "var_scaled": []}
    for d_k in d_ks:
        dots = sample_dot_products(d_k, n, seed=seed + d_k)  # (n,)
        out["d_k"].append(int(d_k))
        out["mean"].append(dots.mean().item())
        out["var"].append(dots.var().item())
        out["var_scaled"].append((dots / math.sqrt(d_k)).var().item())
    return out


# --------------------------------------------------------------------------- saturation


def softmax_jacobian(weights: torch.Tensor) -> torch.Tensor:
    """Jacobian ∂w_i/∂s_j = w_i(δ_ij − w_j) of w = softmax(s), from the weights: (..., T) -> (..., T, T)."""
    w = _check_weights(weights)
    return torch.diag_embed(w) - w.unsqueeze(-1) * w.unsqueeze(-2)  # (..., T, T)


def jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of the softmax Jacobian of each row: (..., T) -> (...)."""
    return softmax_jacobian(weights).flatten(-2).norm(dim=-1)


def _draw_rows(d_k: int, n_rows: int, n_keys: int, d_v: int, seed: int):
    gen = torch.Generator().manual_seed(seed + d_k)
    # Draw in float32 (fast), compute in float64: saturated weights reach 1e-30 and below.
    q = torch.randn(n_rows, d_k, generator=gen).double()  # (n, d_k)
    k = torch.randn(n_rows, n_keys, d_k, generator=gen).double()  # (n, T, d_k)
    v = torch.randn(n_rows, n_keys, d_v, generator=gen).double()  # (n, T, d_v)
    g = torch.randn(n_rows, d_v, generator=gen).double()  # (n, d_v): dL/d(output)
    return q, k, v, g


@lru_cache(maxsize=256)
def _stats(d_k: int, scale: str, n_rows: int, n_keys: int, d_v: int, seed: int) -> tuple:
    q, k, v, g = _draw_rows(d_k, n_rows, n_keys, d_v, seed)
    q = q.requires_grad_(True)
    with torch.enable_grad():
        scores = torch.einsum("nd,ntd->nt", q, k) / SCALES[scale](d_k)  # (n, T)
        w = torch.softmax(scores, dim=-1)  # (n, T)
        out = torch.einsum("nt,ntv->nv", w, v)  # (n, d_v)
        # A linear loss L = Σ g·out: its gradient reaches q only through the softmax.
        (out * g).sum().backward()
    w = w.detach()
    return (
        entropy(w).mean().item(),
        w.max(dim=-1).values.mean().item(),
        (w.max(dim=-1).values > 0.99).double().mean().item(),
        # Medians: a few rows with a near-tie keep a large gradient and would dominate a mean.
        jacobian_norm(w).median().item(),
        q.grad.norm(dim=-1).median().item(),
    )


def saturation_stats(d_k: int, scale: str = "sqrt", *, n_rows: int = 512, n_keys: int = 16,
                     d_v: int = 16, seed: int = 0) -> dict:
    """Softmax saturation for random q·k rows: mean entropy and max weight, share of rows with a
    max weight > 0.99, median softmax-Jacobian norm and median ‖∂L/∂q‖ (autograd)."""
    args = (_check_positive_int("d_k", d_k), _check_scale(scale), _check_positive_int("n_rows", n_rows),
            _check_positive_int("n_keys", n_keys), _check_positive_int("d_v", d_v), int(seed))
    keys = ("entropy", "max_weight", "saturated", "jacobian", "grad_q")
    return dict(zip(keys, _stats(*args)))


def saturation_sweep(d_ks=DKS, scale: str = "sqrt", **kw) -> dict:
    """``saturation_stats`` for each d_k, as lists under the same keys plus ``d_k``."""
    rows = [saturation_stats(d, scale, **kw) for d in d_ks]
    out = {"d_k": [int(d) for d in d_ks]}
    for key in rows[0] if rows else ():
        out[key] = [r[key] for r in rows]
    return out


# --------------------------------------------------------------------------- the d_k slider


def dk_axis(ax, label: str = "키 차원 d_k (로그 축)"):
    """Log-2 x axis with the powers of two 4..1024 as plain tick labels (cheaper than mathtext)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(DKS), [str(d) for d in DKS], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel(label)
    return ax


def draw_dk(d_k: int, axes=None, *, n_samples: int = 4000, n_keys: int = 8, seed: int = 0) -> dict:
    """Three panels for one d_k: q·k histogram (raw and /√d_k), one softmax row, gradient size vs d_k.

    Returns the numbers drawn: score spreads, the example row's weights, entropies and Jacobian norms.
    """
    d_k = _check_positive_int("d_k", d_k)
    if axes is None:
        fig, axes = plt.subplots(1, 3, figsize=(13.0, 3.8))
        fig.subplots_adjust(left=0.06, right=0.98, bottom=0.16, top=0.9, wspace=0.3)
    if len(axes) != 3:
        raise ValueError(f"axes must hold 3 matplotlib axes, got {len(axes)}")
    hist_ax, row_ax, grad_ax = axes
    root = math.sqrt(d_k)

    dots = _cached_dots(d_k, _check_positive_int("n_samples", n_samples), seed + d_k)  # (n,)
    std_raw, std_scaled = dots.std().item(), (dots / root).std().item()
    hist_ax.hist(dots.numpy(), bins=np.linspace(-4 * root, 4 * root, 41), density=True,
                 color="tab:gray", alpha=0.7, label=f"q·k (표준편차 {std_raw:.1f})")
    hist_ax.hist((dots / root).numpy(), bins=np.linspace(-4, 4, 41), density=True,
                 color="tab:blue", alpha=0.7, label=f"q·k/√d_k (표준편차 {std_scaled:.2f})")
    hist_ax.set_xlim(-130, 130)
    hist_ax.set_ylim(0, 0.5)
    hist_ax.set_xlabel("점수")
    hist_ax.set_ylabel("밀도")
    hist_ax.set_title(f"점수 분포 (d_k = {d_k})")
    hist_ax.legend(loc="upper right", fontsize=8)

    gen = torch.Generator().manual_seed(seed + 7 * d_k)
    q = torch.randn(d_k, generator=gen).double()  # (d_k,)
    k = torch.randn(n_keys, d_k, generator=gen).double()  # (T, d_k)
    raw = k @ q  # (T,)
    w_raw, w_scaled = softmax(raw), softmax(raw, temperature=root)
    x = np.arange(n_keys)
    row_ax.bar(x - 0.2, w_raw.numpy(), width=0.4, color="tab:gray", label="나누지 않음")
    row_ax.bar(x + 0.2, w_scaled.numpy(), width=0.4, color="tab:blue", label="√d_k로 나눔")
    row_ax.set_xticks(x, [f"k{i + 1}" for i in x])
    # Headroom above 1 keeps the legend clear of a bar that reaches 1 (a saturated row).
    row_ax.set_ylim(0, 1.3)
    row_ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    row_ax.set_xlabel("키")
    row_ax.set_ylabel("가중치")
    ent_raw, ent_scaled = entropy(w_raw).item(), entropy(w_scaled).item()
    row_ax.set_title(f"소프트맥스 한 행: 엔트로피 {ent_raw:.2f} / {ent_scaled:.2f}")
    row_ax.legend(loc="upper center", ncol=2, fontsize=8, frameon=False)

    curves = {s: saturation_sweep(DKS, s)["jacobian"] for s in ("none", "sqrt")}
    for s, color, label in (("none", "tab:gray", "나누지 않음"), ("sqrt", "tab:blue", "√d_k로 나눔")):
        grad_ax.plot(DKS, curves[s], "o-", color=color, markersize=3, label=label)
    grad_ax.axvline(d_k, color="tab:red", linestyle=":", linewidth=1)
    jac_now = {s: saturation_stats(d_k, s)["jacobian"] for s in ("none", "sqrt")}
    grad_ax.plot([d_k, d_k], [jac_now["none"], jac_now["sqrt"]], "o", color="tab:red", markersize=6)
    dk_axis(grad_ax)
    grad_ax.set_yscale("log")
    grad_ax.set_ylim(1e-6, 1.5)
    grad_ax.set_yticks([1e-6, 1e-4, 1e-2, 1], ["10⁻⁶", "10⁻⁴", "10⁻²", "1"])
    grad_ax.minorticks_off()
    grad_ax.set_ylabel("‖야코비안‖ 중앙값 (로그 축)")
    grad_ax.set_title("소프트맥스의 기울기 크기")
    grad_ax.legend(loc="lower left", fontsize=8)

    return {
        "d_k": d_k,
        "std_raw": std_raw,
        "std_scaled": std_scaled,
        "weights_raw": w_raw.numpy(),
        "weights_scaled": w_scaled.numpy(),
        "entropy_raw": ent_raw,
        "entropy_scaled": ent_scaled,
        "jacobian_raw": jac_now["none"],
        "jacobian_scaled": jac_now["sqrt"],
    }


def dk_explorer(value: int = 64):
    """A d_k slider (powers of two, 4..1024) that redraws ``draw_dk`` in one figure."""
    import ipywidgets as widgets

    if value not in DKS:
        raise ValueError(f"value must be one of {list(DKS)}, got {value!r}")
    slider = widgets.SelectionSlider(options=list(DKS), value=value, description="d_k",
                                     continuous_update=False)

    def redraw(d_k):
        draw_dk(d_k)
        plt.show()

    out = widgets.interactive_output(redraw, {"d_k": slider})
    return widgets.VBox([slider, out])


# --------------------------------------------------------------------------- exercises


def _fmt(t: torch.Tensor) -> str:
    return str([round(v, 3) for v in t.reshape(-1)[:4].tolist()])


@exercise("04-1")
def _scaled_scores(fn):
    gen = torch.Generator().manual_seed(4)
    cases = [((3, 4), (5, 4)), ((1, 9), (6, 9)), ((4, 16), (4, 16)), ((2, 3, 8), (2, 5, 8))]
    for q_shape, k_shape in cases:
        q = torch.randn(q_shape, generator=gen, dtype=torch.float64)
        k = torch.randn(k_shape, generator=gen, dtype=torch.float64)
        what = f"scaled_scores(q {q_shape}, k {k_shape})"
        try:
            got = _as_tensor(_call(fn, q.clone(), k.clone(), what=what), what)
        except Wrong as wrong:
            if len(q_shape) == 3:
                raise Wrong(f"{wrong} 배치 차원이 있는 입력에서 실패했습니다: k.T는 모든 축을 뒤집으니 "
                            "k.transpose(-2, -1)로 마지막 두 축만 바꾸세요.") from None
            raise
        raw = q @ k.transpose(-2, -1)  # (..., T_q, T_k)
        d_k, want = q_shape[-1], raw / math.sqrt(q_shape[-1])
        if got.shape != want.shape:
            if got.shape == want.transpose(-2, -1).shape:
                raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 행이 쿼리, 열이 키인 "
                            f"{tuple(want.shape)}여야 합니다: q @ kᵀ 순서를 확인하세요.")
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. (…, T_q, T_k) = {tuple(want.shape)}이어야 합니다.")
        if torch.allclose(got, want, atol=1e-9):
            continue
        if torch.allclose(got, raw, atol=1e-9):
            raise Wrong(f"√d_k로 나누지 않았습니다 ({what}: d_k = {d_k}). 점수의 분산이 1이 아니라 d_k가 됩니다.")
        if torch.allclose(got, raw / d_k, atol=1e-9):
            raise Wrong(f"d_k = {d_k}로 나눴습니다. √d_k = {math.sqrt(d_k):.3g}로 나눠야 분산이 1이 됩니다 "
                        f"(d_k로 나누면 분산이 1/d_k = {1 / d_k:.3g}로 줄어 가중치가 너무 평평해집니다).")
        if torch.allclose(got, raw * math.sqrt(d_k), atol=1e-9):
            raise Wrong(f"√d_k를 곱했습니다. 나눠야 합니다 ({what}).")
        for name, n in (("T_q", q_shape[-2]), ("T_k", k_shape[-2])):
            if n != d_k and torch.allclose(got, raw / math.sqrt(n), atol=1e-9):
                raise Wrong(f"√{name} = √{n}로 나눴습니다. d_k는 q와 k의 마지막 축 길이({d_k})입니다.")
        worst = tuple(int(i) for i in torch.unravel_index((got - want).abs().argmax(), want.shape))
        raise Wrong(f"{what}: 위치 {worst}의 점수가 {got[worst].item():.4g}인데 {want[worst].item():.4g}이어야 합니다.")
    return "q @ kᵀ / √d_k: 배치 차원이 있어도 마지막 두 축만 다룹니다."


_VAR_Q, _VAR_K, _DK_EX2 = 4.0, 1.0, 64


@exercise("04-2")
def _scale_factor(c):
    if isinstance(c, bool) or not isinstance(c, (numbers.Real, torch.Tensor, np.ndarray)):
        raise Wrong(f"숫자 하나를 넘기세요; 받은 것은 {type(c).__name__}입니다.")
    c_t = _as_tensor(c, "c")
    if c_t.numel() != 1:
        raise Wrong(f"숫자 하나를 넘기세요; 모양 {tuple(c_t.shape)}의 텐서를 받았습니다.")
    c = c_t.item()
    var = _DK_EX2 * _VAR_Q * _VAR_K
    want = math.sqrt(var)
    if math.isclose(c, want, rel_tol=1e-6):
        return f"Var(q·k) = d_k·σ_q²·σ_k² = {var:g}, 그래서 c = √{var:g} = {want:g}."
    if not (math.isfinite(c) and c > 0):
        raise Wrong(f"c = {c}: 나누는 수는 양의 유한한 수여야 합니다.")
    if math.isclose(c, math.sqrt(_DK_EX2), rel_tol=1e-6):
        raise Wrong(f"c = √d_k = {c:g}는 성분 분산이 1일 때의 답입니다. 여기서는 Var(q_j) = {_VAR_Q:g}라서 "
                    f"Var(q·k) = d_k·Var(q_j)·Var(k_j)입니다.")
    if math.isclose(c, var, rel_tol=1e-6):
        raise Wrong(f"c = {c:g}는 분산 그 자체입니다. 점수를 c로 나누면 분산은 c²로 나뉘므로 "
                    "c는 표준편차(분산의 제곱근)여야 합니다.")
    if math.isclose(c, _DK_EX2, rel_tol=1e-6):
        raise Wrong(f"c = d_k = {c:g}로 나누면 분산이 {var:g}/{c * c:g} = {var / c ** 2:.3g}가 됩니다. 제곱근을 빠뜨렸나요?")
    if math.isclose(c, _VAR_Q * math.sqrt(_DK_EX2), rel_tol=1e-6):
        raise Wrong(f"c = {c:g}: σ_q 대신 분산 σ_q² = {_VAR_Q:g}를 곱했습니다. q의 표준편차는 √{_VAR_Q:g}입니다.")
    raise Wrong(f"c = {c:g}로 나누면 점수의 분산이 {var:g}/{c * c:.4g} = {var / c ** 2:.4g}입니다. 1이 되어야 합니다.")


@exercise("04-3")
def _jacobian(fn):
    for scores in ([1.0, 2.0, 3.0], [0.5, -1.0, 0.0, 2.0], [8.0, 0.0, 0.0, 0.0, 1.0]):
        s = torch.tensor(scores, dtype=torch.float64)
        w = torch.softmax(s, dim=-1)
        what = f"my_jacobian(softmax({scores}))"
        got = _as_tensor(_call(fn, w.clone(), what=what), what)
        want = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, dim=-1), s)  # (T, T)
        n = len(scores)
        if got.shape != want.shape:
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 키가 {n}개이면 ({n}, {n}) 행렬이어야 합니다.")
        if torch.allclose(got, want, atol=1e-9):
            continue
        if torch.allclose(got, -want, atol=1e-9):
            raise Wrong("부호가 반대입니다: ∂w_i/∂s_i = w_i(1 − w_i)는 양수입니다 (자기 점수를 올리면 자기 가중치가 커짐).")
        if torch.allclose(got, torch.diag(w), atol=1e-9):
            raise Wrong("diag(w)만 있습니다. 모든 가중치가 합 1을 나눠 가지므로 w wᵀ를 빼야 합니다.")
        if torch.allclose(got, -torch.outer(w, w), atol=1e-9):
            raise Wrong("−w wᵀ만 있습니다. 대각선에 w_i를 더해야 합니다 (diag(w) − w wᵀ).")
        if torch.allclose(got, torch.diag(w * (1 - w)), atol=1e-9):
            raise Wrong("대각선 w_i(1 − w_i)는 맞지만 비대각 성분 −w_i w_j가 빠졌습니다: 한 점수를 올리면 "
                        "다른 가중치는 모두 줄어듭니다.")
        if torch.allclose(got, torch.outer(w, w) - torch.diag(w), atol=1e-9):
            raise Wrong("부호가 반대입니다: diag(w) − w wᵀ 순서로 빼세요.")
        i, j = (int(t) for t in torch.unravel_index((got - want).abs().argmax(), want.shape))
        raise Wrong(f"{what}: 성분 ({i}, {j})가 {got[i, j].item():.4g}인데 {want[i, j].item():.4g}이어야 합니다 "
                    f"(∂w_i/∂s_j = w_i(δ_ij − w_j)).")
    return "diag(w) − w wᵀ: 가중치가 원-핫에 가까워지면 모든 성분이 0으로 갑니다."
