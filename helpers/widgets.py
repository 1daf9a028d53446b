"""Sliders for the notebooks. Each widget's drawing lives in a plain function, tested without a browser."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from .attention import softmax
from .plots import to_numpy, weight_bars

__all__ = ["draw_softmax", "softmax_explorer"]


def draw_softmax(scores, labels, *, temperature: float = 1.0, values=None, axes=None):
    """Draw scores (left) and softmax weights (right); return the weights as a numpy array.

    With ``values`` (one number per item) the right panel's title shows the weighted sum.
    """
    s = torch.as_tensor(to_numpy(scores), dtype=torch.float64)
    if s.ndim != 1 or len(labels) != len(s):
        raise ValueError(f"need one score per label: {len(labels)} labels, scores of shape {tuple(s.shape)}")
    weights = softmax(s, temperature=temperature).numpy()
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(9.0, 3.2))
    left, right = axes
    colors = ["tab:red" if v < 0 else "tab:gray" for v in s.numpy()]
    left.bar(range(len(s)), s.numpy(), color=colors)
    left.axhline(0, color="black", linewidth=0.8)
    left.set_xticks(range(len(s)), labels)
    left.set_ylim(-6, 6)
    left.set_title("점수(score): 아무 실수")
    title = "소프트맥스 가중치: 양수, 합 1"
    if values is not None:
        v = to_numpy(values).reshape(-1)
        if len(v) != len(s):
            raise ValueError(f"need one value per label: {len(labels)} labels, {len(v)} values")
        title = f"가중합 = {float(weights @ v):.2f}"
    weight_bars(weights, labels, ax=right, title=title, color="tab:blue", ylim=(0, 1.1))
    return weights


def softmax_explorer(labels, scores, *, values=None, low: float = -5.0, high: float = 5.0):
    """One slider per score; the figure redraws the softmax weights (and the weighted sum)."""
    import ipywidgets as widgets

    sliders = {
        f"s{i}": widgets.FloatSlider(value=float(v), min=low, max=high, step=0.1,
                                     description=str(label), continuous_update=False)
        for i, (label, v) in enumerate(zip(labels, to_numpy(scores)))
    }

    def redraw(**kw):
        draw_softmax([kw[f"s{i}"] for i in range(len(labels))], labels, values=values)
        plt.show()

    out = widgets.interactive_output(redraw, sliders)
    return widgets.VBox([*sliders.values(), out])
