"""helpers.widgets.Explorer without a browser: update gets the values, the figure is redrawn in place."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers.widgets import Explorer


def make(**control_kw):
    """A small explorer: a bar chart whose heights follow a slider and a selector."""
    fig, ax = plt.subplots(figsize=(3, 2), dpi=72)
    bars = ax.bar(range(3), [1.0, 1.0, 1.0])
    ax.set_ylim(0, 10)
    title = ax.set_title("")
    calls = []

    def update(scale, shape):
        calls.append({"scale": scale, "shape": shape})
        heights = np.array([1.0, 2.0, 3.0]) if shape == "up" else np.array([3.0, 2.0, 1.0])
        for bar, h in zip(bars, scale * heights):
            bar.set_height(h)
        title.set_text(f"scale={scale:.1f}")
        return float(scale * heights.sum())

    controls = {
        "scale": widgets.FloatSlider(value=1.0, min=0.5, max=3.0, step=0.5, continuous_update=False, **control_kw),
        "shape": widgets.Dropdown(options=["up", "down"], value="up"),
    }
    return Explorer(fig, update, controls), fig, ax, bars, calls


def test_first_frame_is_drawn_with_the_initial_values():
    ex, _, _, _, calls = make()
    assert calls == [{"scale": 1.0, "shape": "up"}]
    assert ex.renders == 1 and ex.last == 6.0
    assert ex.png.startswith(b"\x89PNG\r\n\x1a\n")


def test_update_gets_the_values_and_the_figure_changes_in_place():
    ex, fig, ax, bars, calls = make()
    first = ex.png
    ex.set(scale=2.0)
    assert calls[-1] == {"scale": 2.0, "shape": "up"} and ex.last == 12.0
    assert [b.get_height() for b in bars] == [2.0, 4.0, 6.0]
    second = ex.png
    assert second != first, "the PNG did not change when the slider moved"
    ex.set(shape="down")
    assert calls[-1] == {"scale": 2.0, "shape": "down"}
    assert ex.png != second
    # In place: the same figure, the same axes, the same artists; nothing new was created.
    assert ex.figure is fig and fig.axes == [ax] and list(ax.patches) == list(bars)
    assert ex.renders == 3
    assert not plt.get_fignums(), "the explorer's figure must not stay open in pyplot (shown twice inline)"


def test_moving_back_gives_the_same_picture():
    ex, *_ = make()
    first = ex.png
    ex.set(scale=2.5)
    ex.set(scale=1.0)
    assert ex.png == first


def test_controls_follow_the_hand():
    ex, *_ = make()
    assert ex.controls["scale"].continuous_update is True
    assert ex.widget.children[-1] is ex.image and "course-explorer" in ex.widget._dom_classes
    assert ex.values == {"scale": 1.0, "shape": "up"}


def test_bad_input_is_refused():
    fig, _ = plt.subplots()
    slider = widgets.IntSlider()
    with pytest.raises(TypeError, match="Figure"):
        Explorer("not a figure", lambda **kw: None, {"x": slider})
    with pytest.raises(TypeError, match="callable"):
        Explorer(fig, None, {"x": slider})
    with pytest.raises(ValueError, match="at least one control"):
        Explorer(fig, lambda **kw: None, {})
    ex, *_ = make()
    with pytest.raises(KeyError, match="unknown control"):
        ex.set(temperature=2.0)
    plt.close("all")


def test_an_error_in_update_is_not_swallowed():
    fig, _ = plt.subplots()

    def update(x):
        if x > 5:
            raise ValueError("x too big")

    ex = Explorer(fig, update, {"x": widgets.IntSlider(value=0, max=10)})
    with pytest.raises(ValueError, match="too big"):
        ex.set(x=7)
