"""Shared test set-up: a headless matplotlib with the course's Korean font."""

import matplotlib

matplotlib.use("Agg")

from helpers.plots import use_korean_font  # noqa: E402

use_korean_font()
