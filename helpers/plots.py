"""Figures with Korean labels: font set-up, attention heatmaps (seaborn)."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import font_manager

__all__ = ["use_korean_font", "attention_heatmap", "to_numpy"]

FIGSIZE = (6.4, 4.0)


def _nanum_font_dir() -> Path:
    # koreanize-matplotlib ships NanumGothic; we only borrow its font files, because importing
    # the package itself pulls in distutils and prints deprecation warnings.
    spec = find_spec("koreanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("koreanize-matplotlib is not installed: run the README's set-up command")
    return Path(list(spec.submodule_search_locations)[0]) / "fonts"


def use_korean_font() -> str:
    """Register NanumGothic and make it the fallback after DejaVu Sans (Hangul + real minus)."""
    for ttf in sorted(_nanum_font_dir().glob("NanumGothic*.ttf")):
        font_manager.fontManager.addfont(str(ttf))
    mpl.rcParams["font.family"] = ["DejaVu Sans", "NanumGothic"]
    mpl.rcParams["axes.unicode_minus"] = True
    return "NanumGothic"


def to_numpy(x) -> np.ndarray:
    """Tensor or array-like to a float numpy array (detached, on the CPU)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=float)


def attention_heatmap(
    weights,
    query_labels=None,
    key_labels=None,
    *,
    ax=None,
    title: str | None = None,
    annotate: bool | None = None,
    cmap: str = "Blues",
    vmin: float | None = 0.0,
    vmax: float | None = None,
    colorbar: bool = True,
    fmt: str = ".2f",
):
    """Heatmap of a (T_q, T_k) weight matrix (seaborn): rows are queries, columns are keys.

    As in ``seaborn.heatmap``, cell (i, j) spans [j, j + 1] x [i, i + 1] in data coordinates.
    """
    w = to_numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"weights must be a 2-D (T_q, T_k) matrix, got shape {w.shape}")
    t_q, t_k = w.shape
    for name, labels, n in (("query_labels", query_labels, t_q), ("key_labels", key_labels, t_k)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{name} has {len(labels)} labels but the matrix has {n} of them")
    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE)
    if annotate is None:
        annotate = t_q * t_k <= 100
    import seaborn as sns  # imported here: seaborn pulls in scipy and ipywidgets, which scripts do not need

    # seaborn picks black or white annotation text from each cell's colour.
    sns.heatmap(
        w,
        ax=ax,
        cmap=cmap,
        vmin=vmin,
        vmax=vmax,
        annot=annotate,
        fmt=fmt,
        annot_kws={"fontsize": 8},
        cbar=colorbar,
        cbar_kws={"fraction": 0.046, "pad": 0.04},
        square=False,
        xticklabels=False,
        yticklabels=False,
    )
    # long word labels overlap unless tilted; numbers and single characters do not
    tilt = key_labels is not None and t_k > 5 and max(len(str(label)) for label in key_labels) > 2
    x_labels = key_labels if key_labels is not None else range(t_k)
    ax.set_xticks(np.arange(t_k) + 0.5, x_labels, rotation=45 if tilt else 0, ha="right" if tilt else "center")
    ax.set_yticks(np.arange(t_q) + 0.5, query_labels if query_labels is not None else range(t_q), rotation=0)
    ax.set_xlabel("키(key)")
    ax.set_ylabel("쿼리(query)")
    if title:
        ax.set_title(title)
    return ax
