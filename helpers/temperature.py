"""Notebook 05 (temperature): softmax(z/τ) sweeps, the seed-003 attention map, the τ slider, checkers."""

from __future__ import annotations

import math
import numbers

import matplotlib.pyplot as plt
import numpy as np
import torch

from .attention import entropy, softmax  # noqa: F401  (entropy is re-exported for the notebooks)
from .data import load_json
from .exercises import Wrong, _as_tensor, _call, exercise
from .plots import attention_heatmap, to_numpy, weight_bars

__all__ = [
    "entropy",
    "temperature_sweep",
    "tau_for_max_weight",
    "bae_scores",
    "sample_tokens",
    "draw_temperature",
    "temperature_explorer",
]


# --------------------------------------------------------------------------- checks


def _as_scores(scores, min_dim: int = 1) -> torch.Tensor:
    """Scores as a float64 tensor with at least ``min_dim`` dims and finite entries."""
    if isinstance(scores, (str, bytes)) or scores is None:
        raise TypeError(f"scores must be a tensor, array or list of numbers, got {type(scores).__name__}")
    try:
        s = torch.as_tensor(to_numpy(scores), dtype=torch.float64)
    except (TypeError, ValueError):
        raise TypeError(f"scores must be a tensor, array or list of numbers, got {type(scores).__name__}") from None
    if s.dim() < min_dim or s.shape[-1] == 0:
        raise ValueError(f"scores must have at least {min_dim} dimension(s) and a non-empty last one, "
                         f"got shape {tuple(s.shape)}")
    if not torch.isfinite(s).all():
        raise ValueError("scores must be finite (no NaN or inf)")
    return s


def _as_tau(tau) -> float:
    if isinstance(tau, bool) or not isinstance(tau, numbers.Real):
        raise TypeError(f"tau must be a real number, got {type(tau).__name__}")
    if not (tau > 0 and math.isfinite(tau)):
        raise ValueError(f"tau must be a finite number > 0, got {tau}")
    return float(tau)


# --------------------------------------------------------------------------- computations


def temperature_sweep(scores, taus) -> dict:
    """Entropy and largest weight of softmax(scores / τ) for each τ: arrays of shape (len(taus), ...)."""
    s = _as_scores(scores)
    taus = [_as_tau(t) for t in taus]
    if not taus:
        raise ValueError("taus must hold at least one temperature, got an empty list")
    weights = torch.stack([softmax(s, temperature=t) for t in taus])  # (n_tau, ..., T)
    return {
        "tau": np.array(taus),
        "entropy": entropy(weights).numpy(),
        "max_weight": weights.amax(dim=-1).numpy(),
    }


def tau_for_max_weight(scores, target: float, lo: float = 1e-6, hi: float = 1e6) -> float:
    """The τ at which the largest weight of softmax(scores / τ) equals ``target`` (bisection in log τ)."""
    s = _as_scores(scores)
    if s.dim() != 1:
        raise ValueError(f"scores must be one row (1-D), got shape {tuple(s.shape)}")
    n_top = int((s == s.max()).sum())
    low_end, high_end = 1.0 / len(s), 1.0 / n_top
    if isinstance(target, bool) or not isinstance(target, numbers.Real):
        raise TypeError(f"target must be a real number, got {type(target).__name__}")
    if not (low_end < target < high_end):
        raise ValueError(f"target must lie strictly between 1/n = {low_end:.4g} (τ→∞) and "
                         f"1/(number of tied maxima) = {high_end:.4g} (τ→0), got {target}")

    def top(t: float) -> float:
        return softmax(s, temperature=t).max().item()

    if not (top(hi) < target < top(lo)):
        raise ValueError(f"target {target} is not reached for τ in [{lo:g}, {hi:g}]; widen lo/hi")
    # The largest weight falls monotonically as τ grows, so bisection on log τ converges.
    a, b = math.log(lo), math.log(hi)
    for _ in range(200):
        mid = 0.5 * (a + b)
        if top(math.exp(mid)) > target:
            a = mid
        else:
            b = mid
    return math.exp(0.5 * (a + b))


def bae_scores(name: str = "seed003_bae.json") -> tuple[list[str], torch.Tensor]:
    """Tokens and scaled scores QKᵀ/√d_k of the seed-003 sentence, from its X, W_Q and W_K."""
    d = load_json(name)
    x = torch.tensor(d["X"], dtype=torch.float64)  # (T, d_model)
    q = x @ torch.tensor(d["W_Q"], dtype=torch.float64)  # (T, d_k)
    k = x @ torch.tensor(d["W_K"], dtype=torch.float64)  # (T, d_k)
    return list(d["tokens"]), q @ k.T / math.sqrt(q.shape[-1])  # (T, T)


def sample_tokens(logits, tau: float, n: int, seed: int = 0) -> torch.Tensor:
    """Counts per token of ``n`` draws from softmax(logits / τ), with a generator seeded by ``seed``."""
    s = _as_scores(logits)
    if s.dim() != 1:
        raise ValueError(f"logits must be one row (1-D), got shape {tuple(s.shape)}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    p = softmax(s, temperature=_as_tau(tau))
    gen = torch.Generator().manual_seed(seed)
    draws = torch.multinomial(p, n, replacement=True, generator=gen)  # (n,)
    return torch.bincount(draws, minlength=len(s))


# --------------------------------------------------------------------------- pictures


def draw_temperature(scores, tokens, tau: float, row: int, axes=None, *, compact: bool = False) -> np.ndarray:
    """Heatmap of softmax(scores / τ) (left) and row ``row``'s weight bars (right); return the weights."""
    s = _as_scores(scores, min_dim=2)
    if s.dim() != 2 or s.shape[0] != s.shape[1] or len(tokens) != s.shape[0]:
        raise ValueError(f"need a square (T, T) score matrix with one token per row: "
                         f"{len(tokens)} tokens, scores of shape {tuple(s.shape)}")
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not 0 <= row < len(tokens):
        raise ValueError(f"row must be an integer in [0, {len(tokens) - 1}], got {row!r}")
    w = softmax(s, temperature=_as_tau(tau))  # (T, T)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11.0, 4.2), width_ratios=(1.1, 1.0))
    left, right = axes
    h = entropy(w[row]).item()
    # A fixed colour scale 0..1, so a flat map really looks flat next to a sharp one.
    attention_heatmap(w, tokens, tokens, ax=left, vmax=1.0, annotate=not compact, colorbar=not compact,
                      title=f"어텐션 가중치, τ = {tau:.3g}")
    left.add_patch(plt.Rectangle((-0.5, row - 0.5), len(tokens), 1, fill=False, edgecolor="tab:red", lw=2))
    weight_bars(w[row], tokens, ax=right, color="tab:red", ylim=(0, 1.1),
                title=f"'{tokens[row]}' 행: 엔트로피 {h:.2f}, 최대 {w[row].max().item():.2f}")
    right.axhline(1 / len(tokens), color="gray", ls="--", lw=1)
    right.tick_params(axis="x", labelrotation=45)
    if compact:
        for t in right.texts:
            t.set_visible(False)
    return w.numpy()


def temperature_explorer(scores, tokens, row: int, tau: float = 1.0, min_exp: float = -3.0,
                         max_exp: float = 1.0):
    """One log-scale τ slider (10**min_exp .. 10**max_exp) redrawing ``draw_temperature``."""
    import ipywidgets as widgets

    slider = widgets.FloatLogSlider(value=_as_tau(tau), base=10, min=min_exp, max=max_exp, step=0.05,
                                    description="τ", readout_format=".3g", continuous_update=False)

    def redraw(tau):
        draw_temperature(scores, tokens, tau, row)
        plt.show()

    out = widgets.interactive_output(redraw, {"tau": slider})
    return widgets.VBox([slider, out])


# --------------------------------------------------------------------------- exercises

_EX1_CASES = [
    ([2.0, 1.0, 0.5], 0.5),
    ([2.0, 1.0, 0.5], 2.0),
    ([0.0, 0.0, 0.0, 0.0], 0.3),
    ([0.1624, 0.1355, 0.1345, 0.0733], 0.01),
    ([2.0, 1.0, 0.5], 0.001),
    ([-3.0, 10.0, 4.0], 100.0),
]


@exercise("05-1")
def _check_softmax_t(fn):
    for z, tau in _EX1_CASES:
        x = torch.tensor(z, dtype=torch.float64)
        what = f"softmax_t({z}, tau={tau})"
        got = _as_tensor(_call(fn, x.clone(), tau, what=what), "softmax_t")
        want = torch.softmax(x / tau, dim=-1)
        if got.shape != want.shape:
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 입력과 같은 모양 {tuple(want.shape)}이어야 합니다.")
        if not torch.isfinite(got).all():
            raise Wrong(f"{what}에 NaN/inf가 나옵니다: τ가 작으면 z/τ가 매우 커져(τ = 0.001이면 수천) exp가 넘칩니다(overflow). "
                        "z/τ에서 최댓값을 뺀 뒤 exp를 취하세요.")
        if torch.allclose(got, torch.softmax(x * tau, dim=-1), atol=1e-6) and not torch.allclose(got, want, atol=1e-6):
            raise Wrong(f"{what}: 점수에 τ를 곱했습니다. 온도는 나눕니다: softmax(z / τ).")
        if torch.allclose(got, torch.softmax(x, dim=-1), atol=1e-6) and not torch.allclose(got, want, atol=1e-6):
            raise Wrong(f"{what}: 결과가 τ와 상관없이 softmax(z)와 같습니다. τ로 나누는 것을 빠뜨렸습니다.")
        if not torch.isclose(got.sum(), torch.tensor(1.0, dtype=torch.float64), atol=1e-9):
            raise Wrong(f"{what}의 합이 {got.sum().item():.6g}입니다. 합으로 나눠 1이 되게 하세요.")
        if not torch.allclose(got, want, atol=1e-9):
            raise Wrong(f"{what} = {[round(v, 4) for v in got.tolist()]}, 정답 {[round(v, 4) for v in want.tolist()]}.")
    return "τ로 나누고, 최댓값을 빼서 τ = 0.001에서도 넘치지 않습니다."


@exercise("05-2")
def _check_entropy(fn):
    cases = [
        [0.25, 0.25, 0.25, 0.25],
        [0.7, 0.2, 0.1],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0],
    ]
    for w in cases:
        x = torch.tensor(w, dtype=torch.float64)
        what = f"my_entropy({w})"
        got = _as_tensor(_call(fn, x.clone(), what=what), "my_entropy")
        want = -torch.special.xlogy(x, x).sum()
        if got.numel() != 1:
            raise Wrong(f"{what}의 결과는 숫자 하나여야 합니다. 모양 {tuple(got.shape)}의 값을 돌려줬습니다 (.sum()을 빠뜨렸나요?).")
        got = got.reshape(())
        if torch.isnan(got):
            raise Wrong(f"{what}이 NaN입니다: 0 · log 0 = 0 · (−inf) = NaN이 됩니다. "
                        "w = 0인 항은 0으로 두세요 (torch.special.xlogy(w, w) 또는 torch.where).")
        if torch.isclose(got, -want, atol=1e-9) and want > 0:
            raise Wrong(f"{what} = {got.item():.4f}: 부호가 반대입니다. 엔트로피는 −Σ w log w로, 0 이상입니다.")
        if torch.isclose(got, want / math.log(2), atol=1e-9) and want > 0:
            raise Wrong(f"{what} = {got.item():.4f}: 밑이 2인 로그(비트)를 썼습니다. 여기서는 자연로그(nat)를 씁니다 "
                        f"(정답 {want.item():.4f}).")
        if not torch.isclose(got, want, atol=1e-9):
            raise Wrong(f"{what} = {got.item():.4f}, 정답 {want.item():.4f} (균등한 n개면 log n, 원-핫이면 0).")
    return "균등한 4개는 log 4 ≈ 1.386, 원-핫은 0: 0 · log 0 항도 올바르게 0으로 처리했습니다."


def _bae_row() -> torch.Tensor:
    return bae_scores()[1][2]  # (T,): the query '배'


@exercise("05-3")
def _check_tau_half(tau):
    if isinstance(tau, torch.Tensor) and tau.numel() == 1:
        tau = tau.item()
    if isinstance(tau, bool) or not isinstance(tau, numbers.Real):
        raise Wrong(f"τ는 숫자 하나여야 합니다; 받은 것은 {type(tau).__name__}입니다.")
    if not (tau > 0 and math.isfinite(tau)):
        raise Wrong(f"τ = {tau}: 온도는 0보다 큰 유한한 수여야 합니다.")
    top = softmax(_bae_row(), temperature=float(tau)).max().item()
    if top > 0.51:
        raise Wrong(f"τ = {tau:.4g}에서 '배' 행의 최대 가중치가 {top:.3f}로 0.5보다 큽니다: 너무 날카롭습니다. τ를 키우세요.")
    if top < 0.49:
        raise Wrong(f"τ = {tau:.4g}에서 '배' 행의 최대 가중치가 {top:.3f}로 0.5보다 작습니다: 아직 너무 평평합니다. τ를 줄이세요.")
    return (f"τ = {tau:.4g}에서 최대 가중치 {top:.3f}. √d_k = 2로 나눈 점수를 τ로 한 번 더 나누니, "
            f"실제로는 QKᵀ를 {2 * tau:.4g}로 나누는 셈입니다.")
