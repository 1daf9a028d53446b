"""Shared test set-up: a headless matplotlib with the course's Korean font."""

import matplotlib


def pytest_configure(config):
    # Agg before anything imports pyplot, so no test ever needs a display.
    matplotlib.use("Agg")
    from helpers.plots import use_korean_font

    use_korean_font()
