"""Helpers shared by every notebook of the course: ``from helpers import setup``."""

from __future__ import annotations

import os
import random

import matplotlib as mpl
import numpy as np
import torch

# Notebook 14's Triton kernels run under Triton's interpreter where there is no CUDA GPU. Triton reads
# TRITON_INTERPRET when it decorates a function, and its own library (tl.zeros, ...) is decorated when
# triton is first imported: so the choice is made here, before any lesson imports triton.
os.environ.setdefault("TRITON_INTERPRET", "0" if torch.cuda.is_available() else "1")

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
    mpl.rcParams.update({"figure.figsize": plots.FIGSIZE, "figure.dpi": 100, "axes.grid": False})
    mpl.rcParams.update({"axes.spines.top": False, "axes.spines.right": False})
