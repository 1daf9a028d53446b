"""Helpers shared by every notebook of the course: ``from helpers import setup``."""

from __future__ import annotations

import random

import matplotlib as mpl
import numpy as np
import torch

from . import attention, data, plots, validate, widgets  # noqa: F401  (the hand-written core)

SEED = 0


def seed_everything(seed: int = SEED) -> None:
    """Seed Python, NumPy and PyTorch so every run prints the same numbers."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def setup(seed: int = SEED) -> None:
    """One call at the top of every notebook: Korean fonts, seeds, print and plot style."""
    plots.use_korean_font()
    seed_everything(seed)
    torch.set_printoptions(precision=4, sci_mode=False)
    np.set_printoptions(precision=4, suppress=True)
    mpl.rcParams.update(
        {
            "figure.figsize": plots.FIGSIZE,
            "figure.dpi": 100,
            "axes.grid": False,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
