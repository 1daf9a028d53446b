"""Notebook 10 (positional information): sinusoidal encodings, offset rotations, RoPE, the offset slider, checkers."""

from __future__ import annotations

import math
import numbers

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn

from .exercises import Wrong, _as_tensor, _call, exercise

__all__ = [
    "frequencies",
    "sinusoidal_encoding",
    "offset_rotation",
    "relative_similarity",
    "apply_rope",
    "LearnedPositionalEncoding",
    "draw_offset",
    "offset_explorer",
]

BASE = 10000.0


# --------------------------------------------------------------------------- checks


def _as_size(name: str, value, *, even: bool = False, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < (0 if allow_zero else 1):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    if even and value % 2:
        raise ValueError(f"{name} must be even (dimensions come in sin/cos pairs), got {value}")
    return value


def _as_base(base) -> float:
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise TypeError(f"base must be a real number, got {type(base).__name__}")
    if not (base > 1 and math.isfinite(base)):
        raise ValueError(f"base must be a finite number > 1, got {base}")
    return float(base)


def _as_offset(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, np.integer)):
        raise TypeError(f"offset k must be an integer, got {type(k).__name__}")
    return int(k)


# --------------------------------------------------------------------------- encodings


def frequencies(d: int, base: float = BASE) -> torch.Tensor:
    """Angular frequencies ω_i = base^(−2i/d) of the d/2 sin/cos pairs, float64 (d/2,)."""
    d, base = _as_size("d", d, even=True), _as_base(base)
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)


def sinusoidal_encoding(T: int, d: int, base: float = BASE, dtype=torch.float32) -> torch.Tensor:
    """(T, d) table: PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i) (Vaswani et al., 2017)."""
    T = _as_size("T", T, allow_zero=True)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * frequencies(d, base)  # (T, d/2)
    # Interleave so that dimensions 2i and 2i+1 form one (sin, cos) pair.
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).to(dtype)  # (T, d)


def offset_rotation(k: int, d: int, base: float = BASE) -> torch.Tensor:
    """Block-diagonal (d, d) matrix R(k) with R(k) @ PE(p) = PE(p + k) for every p, float64."""
    k = _as_offset(k)
    phi = k * frequencies(d, base)  # (d/2,) rotation angle of each pair
    c, s = phi.cos(), phi.sin()
    r = torch.zeros(d, d, dtype=torch.float64)
    idx = torch.arange(0, d, 2)
    # (sin, cos) at angle θ -> (sin, cos) at θ + φ: [[cos φ, sin φ], [-sin φ, cos φ]].
    r[idx, idx], r[idx, idx + 1] = c, s
    r[idx + 1, idx], r[idx + 1, idx + 1] = -s, c
    return r


def relative_similarity(offsets, d: int, base: float = BASE) -> torch.Tensor:
    """PE(p)·PE(p + k) = Σ_i cos(ω_i k) for each offset k (no p in it), float64."""
    k = torch.as_tensor(offsets, dtype=torch.float64)
    return torch.cos(k[..., None] * frequencies(d, base)).sum(-1)  # (..., ) summed over pairs


def apply_rope(x: torch.Tensor, positions=None, base: float = BASE) -> torch.Tensor:
    """Rotary encoding: rotate each pair (x[2i], x[2i+1]) of a token at position p by p·ω_i.

    x: (..., T, d) with d even; positions: (T,) numbers, default 0..T-1. Returns the same shape.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point() or x.dim() < 2:
        raise ValueError(f"x must be a floating-point tensor of shape (..., T, d), got {x.dtype} {tuple(x.shape)}")
    t, d = x.shape[-2:]
    _as_size("d (last dimension of x)", d, even=True)
    if positions is None:
        pos = torch.arange(t, dtype=torch.float64)
    else:
        if isinstance(positions, (str, bytes)):
            raise TypeError(f"positions must be numbers, got {type(positions).__name__}")
        pos = torch.as_tensor(positions).to(torch.float64)
        if pos.shape != (t,):
            raise ValueError(f"positions must have shape (T,) = ({t},) to match x {tuple(x.shape)}, "
                             f"got {tuple(pos.shape)}")
    angles = pos[:, None] * frequencies(d, base)  # (T, d/2), float64 so large p stays accurate
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (..., T, d/2): real and imaginary parts
    # (x1 + i·x2) · e^{iθ}, written out with real numbers.
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)  # (..., T, d)


class LearnedPositionalEncoding(nn.Module):
    """Adds a learned vector per position (an nn.Embedding of max_len rows) to (B, T, d) inputs."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = _as_size("max_len", max_len)
        self.table = nn.Embedding(self.max_len, _as_size("d_model", d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != self.table.embedding_dim:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"x must have shape (B, T, d_model={self.table.embedding_dim}), got {got}")
        t = x.shape[1]
        if t > self.max_len:
            raise ValueError(f"sequence length T={t} exceeds the {self.max_len} positions this table "
                             f"has learned (positions 0..{self.max_len - 1}); a learned table cannot extend")
        return x + self.table(torch.arange(t, device=x.device))  # (B, T, d)


# --------------------------------------------------------------------------- pictures


def draw_offset(k: int, d: int = 64, *, max_offset: int = 40, p_values=(0, 7, 20), pairs=None,
                base: float = BASE, axes=None) -> dict:
    """Left: PE(p)·PE(p+k) vs k with the chosen k marked; right: up to 3 pairs rotating by ω_i·k.

    Returns ``{"dots": PE(p)·PE(p+k) for each p, "angles": ω_i·k in degrees for each pair}``.
    """
    k = _as_offset(k)
    d, max_offset = _as_size("d", d, even=True), _as_size("max_offset", max_offset)
    if pairs is None:  # a fast, a middle and a slower pair: (0, 3, 8) for d = 64
        pairs = tuple(dict.fromkeys(min(i, d // 2 - 1) for i in (0, max(1, d // 20), max(2, d // 8))))
    pairs = tuple(pairs)[:3]
    if not all(0 <= i < d // 2 for i in pairs):
        raise ValueError(f"pairs must be indices in [0, {d // 2 - 1}], got {tuple(pairs)}")
    if not p_values or min(p_values) < 0 or min(p_values) + k < 0:
        raise ValueError(f"p_values must be non-empty positions with p >= 0 and p + k >= 0, got {tuple(p_values)}")
    pe = sinusoidal_encoding(max(p_values) + max(k, 0) + 1, d, base, dtype=torch.float64)  # (T, d)
    dots = np.array([float(pe[p] @ pe[p + k]) for p in p_values])
    omega = frequencies(d, base)
    angles = np.degrees((k * omega[list(pairs)]).numpy())

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11.0, 4.0), width_ratios=(1.6, 1.0))
    left, right = axes
    grid = np.arange(-max_offset, max_offset + 1)
    left.plot(grid, relative_similarity(grid, d, base).numpy(), color="tab:gray", lw=1.5)
    left.axvline(k, color="tab:red", ls="--", lw=1)
    for n, (p, v) in enumerate(zip(p_values, dots)):
        # Shrinking markers, so points that coincide (they should) stay visible as rings.
        left.scatter([k], [v], s=140 / (n + 1), zorder=3 + n, label=f"p = {p}")
    left.set_xlabel("오프셋 k = q − p")
    left.set_ylabel("PE(p)·PE(q)")
    left.set_ylim(-0.3 * d / 2, d / 2 * 1.08)
    left.set_title(f"k = {k}: 모든 p에서 내적 {dots[0]:.2f}")
    left.legend(loc="lower left", fontsize=8)

    p0 = p_values[0]
    theta = torch.arange(0, 361) * math.pi / 180
    for radius, i, color in zip((1.0, 0.72, 0.44), pairs, ("tab:blue", "tab:orange", "tab:green")):
        right.plot(radius * theta.cos(), radius * theta.sin(), color=color, lw=0.6, alpha=0.5)
        # Plot (cos, sin) so that a growing angle turns counter-clockwise.
        start = radius * np.array([float(pe[p0, 2 * i + 1]), float(pe[p0, 2 * i])])
        end = radius * np.array([float(pe[p0 + k, 2 * i + 1]), float(pe[p0 + k, 2 * i])])
        right.annotate("", xy=end, xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=color, lw=2))
        right.scatter(*start, color=color, s=25, marker="o", facecolors="white", zorder=3)
        right.plot([], [], color=color, label=f"쌍 i={i}: {angles[list(pairs).index(i)] % 360:.0f}°")
    right.set_xlim(-1.15, 1.15)
    right.set_ylim(-1.15, 1.15)
    right.set_aspect("equal")
    right.set_xlabel("cos 성분")
    right.set_ylabel("sin 성분")
    right.set_title(f"p = {p0} → p + k: 쌍마다 ω·k만큼 회전")
    right.legend(loc="lower right", fontsize=7)
    return {"dots": dots, "angles": angles}


def offset_explorer(d: int = 64, max_k: int = 40, k: int = 1):
    """An integer slider for the offset k, redrawing ``draw_offset``."""
    import ipywidgets as widgets

    slider = widgets.IntSlider(value=k, min=0, max=max_k, step=1, description="오프셋 k",
                               continuous_update=False)

    def redraw(k):
        draw_offset(k, d, max_offset=max_k)
        plt.show()

    out = widgets.interactive_output(redraw, {"k": slider})
    return widgets.VBox([slider, out])


# --------------------------------------------------------------------------- exercises


def _first_bad(got: torch.Tensor, want: torch.Tensor) -> str:
    idx = tuple(int(i) for i in torch.nonzero((got - want).abs() > 1e-5)[0])
    return f"위치 {idx}: {got[idx].item():.4f}, 기대값 {want[idx].item():.4f}"


@exercise("10-1")
def _check_sinusoidal(fn):
    for t, d in ((6, 8), (50, 16), (3, 2)):
        what = f"my_sinusoidal({t}, {d})"
        got = _as_tensor(_call(fn, t, d, what=what), what)
        want = sinusoidal_encoding(t, d, dtype=torch.float64)
        if got.shape == (d, t) and t != d:
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다: 행과 열이 바뀌었습니다. 행이 위치 p, 열이 차원인 ({t}, {d})이어야 합니다.")
        if got.shape != want.shape:
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. (T, d) = ({t}, {d})이어야 합니다.")
        if torch.allclose(got, want, atol=1e-5):
            continue
        swapped = want.view(t, d // 2, 2).flip(-1).flatten(-2)
        if torch.allclose(got, swapped, atol=1e-5):
            raise Wrong(f"{what}: sin과 cos의 자리가 바뀌었습니다. 짝수 차원 2i가 sin, 홀수 차원 2i+1이 cos입니다 (PE[0]은 [0, 1, 0, 1, ...]).")
        halves = torch.cat((want[:, 0::2], want[:, 1::2]), dim=-1)
        if torch.allclose(got, halves, atol=1e-5):
            raise Wrong(f"{what}: 앞 절반에 sin, 뒤 절반에 cos를 이어 붙였습니다. 이 과정의 약속은 차원 2i(sin)와 2i+1(cos)을 번갈아 놓는 것입니다.")
        pos = torch.arange(t, dtype=torch.float64)[:, None]
        dims = torch.arange(d, dtype=torch.float64)
        per_dim = torch.where(dims % 2 == 0, torch.sin(pos / BASE ** (dims / d)), torch.cos(pos / BASE ** (dims / d)))
        if torch.allclose(got, per_dim, atol=1e-5):
            raise Wrong(f"{what}: 지수에 차원 번호 j를 그대로 썼습니다 (10000^(j/d)). 한 쌍 (2i, 2i+1)은 같은 주파수를 써야 하므로 지수는 2i/d입니다.")
        times = pos * BASE ** (dims // 2 * 2 / d)  # (T, d): p multiplied by 10000^(2i/d)
        if torch.allclose(got, torch.where(dims % 2 == 0, times.sin(), times.cos()), atol=1e-5):
            raise Wrong(f"{what}: 10000^(2i/d)를 나누지 않고 곱했습니다. 각도는 p / 10000^(2i/d)입니다.")
        raise Wrong(f"{what}의 값이 다릅니다. 처음 다른 곳은 {_first_bad(got, want)}.")
    return "PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(같은 각도): 라이브러리 구현과 같습니다."


@exercise("10-2")
def _check_rotation(fn):
    d = 8
    pe = sinusoidal_encoding(40, d, dtype=torch.float64)  # (40, d)
    for k in (1, 5, 12):
        what = f"rotation_for_offset({k}, {d})"
        r = _as_tensor(_call(fn, k, d, what=what), what)
        if r.shape != (d, d):
            raise Wrong(f"{what}의 모양이 {tuple(r.shape)}입니다. PE(p)에 곱하는 ({d}, {d}) 행렬이어야 합니다.")
        moved = pe[: 40 - k] @ r.T  # (40-k, d): R @ PE(p) for every p at once
        if torch.allclose(moved, pe[k:], atol=1e-6):
            continue
        if k <= 40 - k and torch.allclose((pe[k:] @ r.T)[: 40 - 2 * k], pe[: 40 - 2 * k], atol=1e-6):
            raise Wrong(f"{what}: PE(p)를 PE(p − {k})로 보냅니다. 회전 방향이 반대입니다 (행렬을 전치하거나 sin의 부호를 바꾸세요).")
        off = r.clone()
        for i in range(0, d, 2):
            off[i : i + 2, i : i + 2] = 0
        if off.abs().max() > 1e-9:
            raise Wrong(f"{what}: 2×2 블록 밖에 0이 아닌 값이 있습니다. 주파수 쌍 (2i, 2i+1)끼리만 섞여야 합니다.")
        one_angle = torch.block_diag(*[offset_rotation(k, 2)] * (d // 2))  # every pair turned by k radians
        if torch.allclose(r, one_angle, atol=1e-6):
            raise Wrong(f"{what}: 모든 블록이 같은 각도로 돕니다. 쌍 i의 회전각은 k·ω_i = k / 10000^(2i/d)로 쌍마다 다릅니다.")
        raise Wrong(f"{what} @ PE(p)가 PE(p + {k})와 다릅니다. 처음 다른 곳은 {_first_bad(moved, pe[k:])} "
                    "(행: p, 열: 차원).")
    return "R(k)는 p와 상관없이 PE(p)를 PE(p + k)로 보냅니다: 상대 위치는 선형 변환(회전)입니다."


@exercise("10-3")
def _check_rope(fn):
    gen = torch.Generator().manual_seed(10)
    x = torch.randn(5, 8, generator=gen, dtype=torch.float64)  # (T, d)
    for positions in ([0, 1, 2, 3, 4], [3, 0, 7, 7, 100]):
        pos = torch.tensor(positions)
        what = f"my_rope(x, {positions})"
        got = _as_tensor(_call(fn, x.clone(), pos.clone(), what=what), what)
        want = apply_rope(x, pos)
        if got.shape != want.shape:
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. x와 같은 모양 {tuple(x.shape)}이어야 합니다.")
        if torch.allclose(got, want, atol=1e-6):
            continue
        if torch.allclose(got, apply_rope(x, -pos), atol=1e-6):
            raise Wrong(f"{what}: 회전 방향이 반대입니다 (각도 −p·ω_i). (x₁ + i·x₂)에 e^(+i·p·ω_i)를 곱하세요.")
        if not torch.allclose(got.norm(dim=-1), x.norm(dim=-1), atol=1e-6):
            raise Wrong(f"{what}: 벡터의 길이가 변했습니다 (토큰 0: {x[0].norm():.4f} → {got[0].norm():.4f}). 회전은 길이를 바꾸지 않습니다.")
        half = torch.cat((x[:, 0::2], x[:, 1::2]), dim=-1)
        neox = apply_rope(half, pos)
        if torch.allclose(got, torch.cat((neox[:, 0::2], neox[:, 1::2]), dim=-1), atol=1e-6):
            raise Wrong(f"{what}: 앞 절반과 뒤 절반을 짝지었습니다 (GPT-NeoX 방식). 이 과정은 인접한 차원 (2i, 2i+1)을 한 쌍으로 돌립니다.")
        angles = pos.to(torch.float64)[:, None].expand(-1, x.shape[-1] // 2)  # (T, d/2): ω_i = 1 for all i
        c, s = angles.cos(), angles.sin()
        one_freq = torch.stack((x[:, 0::2] * c - x[:, 1::2] * s, x[:, 0::2] * s + x[:, 1::2] * c), dim=-1).flatten(-2)
        if torch.allclose(got, one_freq, atol=1e-6):
            raise Wrong(f"{what}: 모든 쌍을 같은 각도 p로 돌렸습니다. 쌍 i의 각도는 p·ω_i이고 ω_i = 10000^(−2i/d)입니다.")
        raise Wrong(f"{what}의 값이 다릅니다. 처음 다른 곳은 {_first_bad(got, want)}.")
    return "쌍마다 p·ω_i만큼 돌렸습니다. 위치가 정수가 아니거나 순서가 섞여 있어도 같은 식이 적용됩니다."
