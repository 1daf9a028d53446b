"""Generated from notebooks/src/10_positional_encoding.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import torch
import torch.nn as nn

from helpers.lessons.masks import MaskedMultiHeadAttention


def frequencies(d, base=10000.0):
    """Angular frequencies ω_i = base^(-2i/d) of the d/2 pairs, float64 (d/2,)."""
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


def sinusoidal_encoding(T, d, base=10000.0, dtype=torch.float32):
    """(T, d) table: PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i)."""
    angles = torch.arange(T, dtype=torch.float64)[:, None] * frequencies(d, base)   # (T, d/2)
    pe = torch.stack((angles.sin(), angles.cos()), dim=-1)                         # (T, d/2, 2)
    return pe.flatten(-2).to(dtype)                                                 # (T, d): sin, cos, sin, ...


def offset_rotation(k, d, base=10000.0):
    """Block-diagonal (d, d) R(k) with R(k) @ PE(p) = PE(p + k) for every p, float64."""
    phi = k * frequencies(d, base)                                  # (d/2,): angle of each pair
    blocks = [torch.tensor([[c, s], [-s, c]]) for c, s in zip(phi.cos().tolist(), phi.sin().tolist())]
    return torch.block_diag(*blocks).to(torch.float64)              # (d, d)


def relative_similarity(offsets, d, base=10000.0):
    """PE(p)·PE(p + k) = Σ_i cos(k·ω_i) for each offset k (no p in it), float64."""
    k = torch.as_tensor(offsets, dtype=torch.float64)
    return torch.cos(k[..., None] * frequencies(d, base)).sum(-1)


def offset_panel(axes, d=64, max_offset=40, p_values=(0, 7, 20), pairs=None):
    """Draw PE(p)·PE(p+k) (left) and three pairs turning by k·ω_i (right) once; returns update(k)."""
    left, right = axes
    pairs = pairs or (0, max(1, d // 20), max(2, d // 8))           # fast, middle, slow: (0, 3, 8) for d = 64
    grid = torch.arange(-max_offset, max_offset + 1)
    left.plot(grid.numpy(), relative_similarity(grid, d).numpy(), color="tab:gray", lw=1.5)
    vline = left.axvline(0, color="tab:red", ls="--", lw=1)
    # Shrinking markers, so points that coincide (they should) stay visible as rings. (Markers of a line, not
    # scatter: scatter measures its marker's outline on every draw, which took a quarter of a redraw here.)
    dots = [left.plot([0], [0], "o", ms=(140 / (n + 1)) ** 0.5, mew=1.5, zorder=3 + n, label=f"p = {p}")[0]
            for n, p in enumerate(p_values)]
    left.set_xlabel("오프셋 k")
    left.set_ylabel("PE(p)·PE(p+k)")
    left.set_ylim(-0.3 * d / 2, 1.08 * d / 2)
    left.legend(loc="lower left", fontsize=7)
    pe = sinusoidal_encoding(max(p_values) + max_offset + 1, d, dtype=torch.float64)
    omega, p0 = frequencies(d), p_values[0]
    theta = torch.linspace(0, 2 * torch.pi, 200)
    hands = []
    for radius, i, color in zip((1.0, 0.72, 0.44), pairs, ("tab:blue", "tab:orange", "tab:green")):
        right.plot((radius * theta.cos()).numpy(), (radius * theta.sin()).numpy(), color=color, lw=0.6, alpha=0.5)
        # (cos, sin) on the axes so that a growing angle turns counter-clockwise.
        right.plot([radius * float(pe[p0, 2 * i + 1])], [radius * float(pe[p0, 2 * i])], "o", color=color, ms=20**0.5,
                   mew=1.5, zorder=3)
        hands.append((right.plot([0, 0], [0, 0], color=color, lw=2, label=f"쌍 {i}")[0], radius, i))
    legend = right.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7)   # outside: no hand hidden
    for text in legend.get_texts():   # the widest label update() writes, so a layout made now leaves room for it
        text.set_text(text.get_text() + ": 359°")
    right.set_xlim(-1.15, 1.15)
    right.set_ylim(-1.15, 1.15)
    right.set_aspect("equal")
    right.set_xlabel("cos 성분")
    right.set_ylabel("sin 성분")
    right.set_title(f"p = {p0} → p + k: 쌍마다 k·ω_i만큼 회전", fontsize=10)

    def update(k):
        vline.set_xdata([k, k])
        values = [float(pe[p] @ pe[p + k]) for p in p_values]        # the same number for every p
        for dot, value in zip(dots, values):
            dot.set_data([k], [value])
        left.set_title(f"k = {k}: 모든 p에서 내적 {values[0]:.2f}", fontsize=10)
        angles = (k * omega[list(pairs)]).rad2deg().tolist()
        for (hand, radius, i), text, angle in zip(hands, legend.get_texts(), angles):
            hand.set_data([0, radius * float(pe[p0 + k, 2 * i + 1])], [0, radius * float(pe[p0 + k, 2 * i])])
            text.set_text(f"쌍 {i}: {angle % 360:.0f}°")
        return {"dots": values, "angles": angles}

    return update


def offset_explorer(d=64, max_offset=40):
    """An offset slider k over offset_panel (the figure is built once and changed in place)."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from helpers.widgets import Explorer

    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8), width_ratios=(1.5, 1.0), dpi=80)
    update = offset_panel(axes, d, max_offset)
    fig.tight_layout()
    slider = widgets.IntSlider(value=1, min=0, max=max_offset, step=1, description="오프셋 k")
    return Explorer(fig, update, {"k": slider})


class LearnedPositionalEncoding(nn.Module):
    """Adds a learned vector per position (an nn.Embedding of max_len rows) to (B, T, d) inputs."""

    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Embedding(max_len, d_model)                 # max_len × d parameters

    def forward(self, x):                                           # x: (B, T, d)
        T = x.shape[1]
        if T > self.max_len:                                        # say what went wrong, unlike IndexError
            raise ValueError(f"T={T}: this table has learned positions 0..{self.max_len - 1} only")
        return x + self.table(torch.arange(T))                      # (B, T, d)


def apply_rope(x, positions=None, base=10000.0):
    """RoPE, adjacent pairs: rotate (x[2i], x[2i+1]) of the token at position p by p·ω_i. x: (..., T, d)."""
    T, d = x.shape[-2:]
    positions = torch.arange(T) if positions is None else torch.as_tensor(positions)
    angles = positions.to(torch.float64)[:, None] * frequencies(d, base)     # (T, d/2), float64 for large p
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]                                       # (..., T, d/2): pair (2i, 2i+1)
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (..., T, d/2, 2)
    return rotated.flatten(-2)                                                # (..., T, d)


def rotate_half(x):
    """[x1, x2] -> [-x2, x1] on the two halves of the last dimension (Hugging Face / GPT-NeoX)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope_half(x, positions=None, base=10000.0):
    """RoPE, half pairs: dimension i turns with dimension i + d/2 by p·ω_i. x: (..., T, d)."""
    T, d = x.shape[-2:]
    positions = torch.arange(T) if positions is None else torch.as_tensor(positions)
    angles = positions.to(torch.float64)[:, None] * frequencies(d, base)     # (T, d/2)
    cos = torch.cat((angles.cos(), angles.cos()), dim=-1).to(x.dtype)        # (T, d): both halves
    sin = torch.cat((angles.sin(), angles.sin()), dim=-1).to(x.dtype)
    return x * cos + rotate_half(x) * sin                                     # (..., T, d)


class RoPEMultiHeadAttention(MaskedMultiHeadAttention):
    """09's multi-head attention with RoPE on each head's queries and keys (after projection; values untouched)."""

    def attend(self, q, k, v, mask):                                # (B, h, T, d_head) each
        q, k = apply_rope(q, self.positions), apply_rope(k, self.positions)   # rotate per head: d_head dims
        return super().attend(q, k, v, mask)                        # 09's masked attention, unchanged

    def forward(self, x, positions=None, mask=None, causal=False):  # x: (B, T, d_model), positions (T,)
        self.positions = positions
        return super().forward(x, mask=mask, causal=causal)
