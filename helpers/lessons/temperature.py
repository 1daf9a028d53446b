"""Generated from notebooks/src/05_temperature.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers.lessons.weighted_average import softmax


def softmax_t(z, tau, dim=-1):  # z (..., T), tau a number or a tensor broadcastable to z -> (..., T)
    """softmax(z / tau) with 01's softmax; the max is subtracted before dividing by tau."""
    shifted = z - z.amax(dim=dim, keepdim=True)   # (..., T), every entry <= 0: a tiny tau cannot overflow
    return softmax(shifted / tau, dim=dim)        # (..., T), each slice sums to 1


def entropy(weights, dim=-1):  # (..., T) -> (...)
    """-Σ w log w in nats along dim, with 0·log 0 = 0."""
    return 0.0 - torch.special.xlogy(weights, weights).sum(dim=dim)   # 0.0 - x turns -0.0 into 0.0


def temperature_panels(ax_map, ax_row, scores, tokens, row, fixed_labels=True):
    """Heatmap of softmax(scores / τ) on a fixed 0–1 scale and the bars of one row, drawn once.

    Returns (update, image): update(tau) changes the artists in place and returns the (T, T) weights.
    fixed_labels pins axis labels and titles (fast redraws); a layout engine places them otherwise.
    """
    t = len(tokens)
    image = ax_map.imshow(np.zeros((t, t)), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax_map.set_xticks(range(t), tokens, rotation=45, ha="right")
    ax_map.set_yticks(range(t), tokens)
    ax_map.set(xlabel="키(key)", ylabel="쿼리(query)")
    ax_map.add_patch(plt.Rectangle((-0.5, row - 0.5), t, 1, fill=False, edgecolor="tab:red", lw=2))
    bars = ax_row.bar(range(t), np.zeros(t), color="tab:red")
    ax_row.axhline(1 / t, color="gray", ls="--", lw=1)
    ax_row.set_xticks(range(t), tokens, rotation=45, ha="right")
    ax_row.set(ylim=(0, 1.05), ylabel="가중치")
    fixed = {"y": 1.01} if fixed_labels else {}
    map_title, row_title = ax_map.set_title(" ", **fixed), ax_row.set_title(" ", **fixed)
    if fixed_labels:  # fixed positions: matplotlib then skips measuring every tick label on every frame
        ax_map.xaxis.set_label_coords(0.5, -0.24)
        ax_map.yaxis.set_label_coords(-0.2, 0.5)
        ax_row.yaxis.set_label_coords(-0.12, 0.5)

    def update(tau):
        w = softmax_t(scores, tau)                          # (T, T)
        image.set_data(w.numpy())
        for bar, h in zip(bars, w[row].tolist()):
            bar.set_height(h)
        h_row = entropy(w[row])                             # entropy of the highlighted row
        map_title.set_text(f"어텐션 가중치, τ = {tau:.3g}")
        row_title.set_text(f"'{tokens[row]}' 행: 엔트로피 {h_row:.2f}, 최대 {w[row].max():.2f}")
        return w.numpy()

    return update, image


def temperature_explorer(scores, tokens, row, tau=1.0):
    """One log-scale τ slider (0.001 .. 10) over the attention map and one row's weights."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    # Fixed margins, no layout engine: tight/constrained layout would add a second full draw to every frame.
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.0), width_ratios=(1.2, 1.0))
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.23, top=0.92, wspace=0.38)
    update, image = temperature_panels(*axes, scores, tokens, row)
    fig.colorbar(image, ax=axes[0], fraction=0.046, pad=0.02)   # the fixed 0–1 scale of the weights
    slider = widgets.FloatLogSlider(value=tau, base=10, min=-3, max=1, step=0.05, description="τ",
                                    readout_format=".3g")
    return Explorer(fig, update, {"tau": slider}, dpi=90)   # dpi 90: about 15% less work per frame than 100


def temperature_small_multiples(scores, tokens, row, taus, figsize=(10, 4.6)):
    """The explorer's panels for several τ side by side, one shared 0–1 colour bar (the static counterpart)."""
    fig, axes = plt.subplots(2, len(taus), figsize=figsize, height_ratios=(1.25, 1.0), layout="constrained")
    maps = {}
    for i, tau in enumerate(taus):
        update, image = temperature_panels(axes[0, i], axes[1, i], scores, tokens, row, fixed_labels=False)
        maps[tau] = update(tau)
        axes[0, i].set_title(f"τ = {tau:g}")
        axes[1, i].set_title(f"'{tokens[row]}' 행, τ = {tau:g}", fontsize=9)
        if i:
            axes[0, i].set(yticklabels=[], ylabel="")
            axes[1, i].set(yticklabels=[], ylabel="")
    fig.colorbar(image, ax=axes[0, :], fraction=0.03, pad=0.02, label="가중치 (0~1 고정)")
    return fig, maps
