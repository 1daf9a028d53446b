"""Shared test set-up: a headless matplotlib with the course's Korean font."""

import os

import matplotlib

# Explorers built under test refuse a text outside their canvas (helpers.widgets; course.py test sets it
# for the notebook passes too, whose kernels inherit it).
os.environ.setdefault("COURSE_CHECK_FIGURES", "1")


def pytest_configure(config):
    # Agg before anything imports pyplot, so no test ever needs a display.
    matplotlib.use("Agg")
    from helpers.plots import use_korean_font

    use_korean_font()
