"""Generated from notebooks/src/01_weighted_average.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers.plots import to_numpy


def weight_bars(weights, labels=None, *, ax=None, title=None, ylabel="가중치", color="tab:blue", ylim=(0.0, 1.0)):
    """Bar chart of one row of weights, each bar labelled with its value."""
    w = to_numpy(weights).reshape(-1)                      # (T,)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    x = np.arange(len(w))
    ax.bar(x, w, color=color)
    ax.set_xticks(x, labels if labels is not None else x)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    for xi, wi in zip(x, w):
        ax.text(xi, wi, f"{wi:.2f}", ha="center", va="bottom", fontsize=8)
    return ax


def softmax(z, dim=-1):  # (..., T) -> (..., T)
    """softmax(z) = exp(z - max z) / sum exp(z - max z): the largest exponent is e^0 = 1."""
    shifted = z - z.amax(dim=dim, keepdim=True)   # (..., T), every entry <= 0
    e = torch.exp(shifted)                         # (..., T), in (0, 1]
    return e / e.sum(dim=dim, keepdim=True)        # (..., T), each slice sums to 1


def softmax_panels(ax_scores, ax_weights, labels, values=None):
    """Score bars and softmax-weight bars, drawn once; returns update(scores) -> weights (numpy)."""
    x = np.arange(len(labels))
    score_bars = ax_scores.bar(x, np.zeros(len(labels)), color="tab:gray")
    ax_scores.axhline(0, color="black", linewidth=0.8)
    ax_scores.set(xticks=x, xticklabels=labels, ylim=(-6.5, 6.5), title="점수(score): 임의의 실수")
    weight_rects = ax_weights.bar(x, np.zeros(len(labels)), color="tab:blue")
    texts = [ax_weights.text(xi, 0.0, "", ha="center", va="bottom", fontsize=9) for xi in x]
    ax_weights.set(xticks=x, xticklabels=labels, ylim=(0, 1.15), ylabel="가중치")
    v = None if values is None else torch.as_tensor(values, dtype=torch.float64)   # (n,)

    def update(scores):
        s = torch.as_tensor(scores, dtype=torch.float64)   # (n,)
        w = softmax(s)                                      # (n,)
        for bar, si in zip(score_bars, s.tolist()):
            bar.set_height(si)
            bar.set_color("tab:red" if si < 0 else "tab:gray")
        for bar, text, wi in zip(weight_rects, texts, w.tolist()):
            bar.set_height(wi)
            text.set_y(wi)
            text.set_text(f"{wi:.2f}" if wi >= 0.005 else "<0.01")   # 0.0001 is not 0
        ax_weights.set_title("소프트맥스 가중치: 양수, 합 1" if v is None else f"가중합 = {float(w @ v):.2f}")
        return w.numpy()

    return update


def softmax_explorer(labels, scores, values=None, low=-5.0, high=5.0):
    """One slider per score; the figure is built once and follows the hand while dragging."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer
    from tools.explorer_export import softmax_bars

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.0), dpi=80)
    # Fixed margins, no layout engine: with layout="tight" or "constrained" every frame would be drawn whole.
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.12, top=0.88, wspace=0.25)
    update = softmax_panels(*axes, labels, values)
    sliders = {f"s{i}": widgets.FloatSlider(value=float(s), min=low, max=high, step=0.1, description=str(label))
               for i, (label, s) in enumerate(zip(labels, scores))}
    # Without a kernel (site, decks) the browser draws these two panels itself, for every slider step.
    return Explorer(fig, lambda **kw: update([kw[f"s{i}"] for i in range(len(labels))]), sliders,
                    drawing=softmax_bars(*axes, values))


def softmax_small_multiples(labels, settings, values=None, figsize=(10, 4.4)):
    """The explorer's panels for several score settings side by side (the static counterpart); returns the weights."""
    fig, axes = plt.subplots(2, len(settings), figsize=figsize)
    weights = {}
    for col, (name, scores) in enumerate(settings.items()):
        weights[name] = softmax_panels(axes[0, col], axes[1, col], labels, values)(scores)
        axes[0, col].set_title(f"{name}: 점수")
    fig.tight_layout()
    return weights
