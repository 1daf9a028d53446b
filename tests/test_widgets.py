"""helpers.widgets.Explorer without a browser: update gets the values, the figure is redrawn in place."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers.widgets import Explorer, default_frames


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


# --------------------------------------------------------------------------- frames for the static site


def test_default_frames_follow_the_widget():
    assert default_frames(widgets.FloatSlider(value=1.0, min=0.5, max=3.0, step=0.5)) == [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    assert default_frames(widgets.Dropdown(options=["up", "down"])) == ["up", "down"]
    assert default_frames(widgets.SelectionSlider(options=[("a", 4), ("b", 8)], value=8)) == [4, 8]
    assert default_frames(widgets.Checkbox(value=True)) == [False, True]
    assert default_frames(widgets.IntSlider(value=3, min=0, max=9)) == list(range(10))
    many = default_frames(widgets.IntSlider(value=37, min=0, max=100))
    assert 25 <= len(many) <= 40 and {0, 37, 100} <= set(many) and many == sorted(many)
    floats = default_frames(widgets.FloatSlider(value=0.3, min=-5, max=5, step=0.1))
    assert 20 <= len(floats) <= 40 and floats[0] == -5 and floats[-1] == 5 and 0.3 in floats
    logs = default_frames(widgets.FloatLogSlider(value=1.0, base=10, min=-3, max=1, step=0.05))
    assert 20 <= len(logs) <= 40 and 1.0 in logs and abs(logs[0] - 1e-3) < 1e-12 and abs(logs[-1] - 10) < 1e-9


def test_frame_grid_is_full_when_small_else_one_line_per_control():
    ex, *_ = make()
    mode, points = ex.frame_grid()
    assert mode == "grid" and len(points) == 6 * 2 and len(set(points)) == 12
    fig, _ = plt.subplots()
    big = Explorer(
        fig, lambda **kw: None, {"a": widgets.IntSlider(value=2, max=9), "b": widgets.IntSlider(value=5, max=9)}
    )
    mode, points = big.frame_grid()
    assert mode == "axes" and len(points) == 1 + 9 + 9 and points[0] == (2, 5)
    assert all(p[0] == 2 or p[1] == 5 for p in points)
    with pytest.raises(KeyError, match="unknown"):
        Explorer(fig, lambda **kw: None, {"a": widgets.IntSlider()}, frames={"z": [1]})
    declared = Explorer(fig, lambda **kw: None, {"a": widgets.IntSlider(value=2, max=90)}, frames={"a": [0, 2, 90]})
    assert declared.frames == {"a": [0, 2, 90]} and declared.frame_grid() == ("grid", [(0,), (1,), (2,)])


def test_exported_frames_are_the_live_pictures(tmp_path):
    """export_frames draws each grid point once, leaves the live explorer as it was, and each PNG is
    byte for byte what the live explorer shows after set(...) to the same values."""
    ex, _, _, _, calls = make()
    first, renders = ex.png, ex.renders
    manifest = ex.export_frames(tmp_path)
    assert ex.png == first and ex.renders == renders and ex.values == {"scale": 1.0, "shape": "up"}
    assert [c["name"] for c in manifest["controls"]] == ["scale", "shape"]
    assert manifest["controls"][0]["labels"][:2] == ["0.50", "1.00"] and manifest["controls"][1]["kind"] == "select"
    assert len(manifest["frames"]) == 12 and len(list((tmp_path / "00").glob("*.png"))) == 12
    for frame in manifest["frames"]:
        i, j = frame["index"]
        ex.set(scale=ex.frames["scale"][i], shape=ex.frames["shape"][j])
        assert (tmp_path / "00" / frame["file"]).read_bytes() == ex.png, frame
