"""An explorer's frames for the kernel-free player (static site, offline decks): what the site build draws ahead.

The live explorer (helpers/widgets.py, ``Explorer``) knows nothing of this module (a learner's kernel imports
only notebook 01's ``softmax_bars`` from it): an explorer built with ``COURSE_EXPLORER_FRAMES=<folder>`` set
(tools/explorer_frames.py runs a notebook so) imports it then and calls ``export_frames(explorer, folder)``, which draws every point of
``frame_grid(explorer)`` (the controls' joint grid up to ``max_frames``, else one line per control through the
defaults; ``"drawn"``: one background for an explorer with a `Drawing`) and writes the PNGs and a manifest that
tools/explorer_player.py turns into plain HTML. The values each control plays are ``frames_of(explorer)``:
its declared ``frames=``, else ``default_frames`` (``every_value`` for a Drawing). A Drawing's spec (pixels,
fonts, the title's place) is computed here, by kind (``SPECS``), from the parameters the Drawing carries.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from helpers.widgets import Drawing, _axes_texts, _overflow, _step_count

MAX_ALL_VALUES = 40  # a slider with at most this many positions plays every one of them
SPACED = 30  # otherwise about this many, evenly spaced, ends and default included


def _spaced(n: int, keep: int) -> list[int]:
    """About SPACED indices out of range(n), evenly spaced, with 0, n-1 and `keep`."""
    if n <= MAX_ALL_VALUES:
        return list(range(n))
    picked = {round(i * (n - 1) / (SPACED - 1)) for i in range(SPACED)} | {0, n - 1, keep}
    return sorted(picked)


def _step_values(low: float, high: float, step: float | None, default: float, spaced: bool = True) -> list[float]:
    if not step:  # a slider that takes any value (FloatSlider(step=None)): about SPACED of them, and the default
        even = {round(low + i * (high - low) / (SPACED - 1), 12) for i in range(SPACED)}
        return sorted({v for v in even if not math.isclose(v, default, rel_tol=1e-9, abs_tol=1e-12)} | {default})
    n = _step_count(low, high, step)
    keep = min(range(n), key=lambda k: abs(low + k * step - default))
    values = [round(low + k * step, 12) for k in (_spaced(n, keep) if spaced else range(n))]
    values[values.index(round(low + keep * step, 12))] = default  # the exact default value is a frame
    return values


def default_frames(widget, default=None) -> list:
    """The values a control plays without a kernel: every option, both checkbox states, every slider
    position up to MAX_ALL_VALUES, otherwise about SPACED evenly spaced ones (ends and `default`, the
    control's value unless given, included)."""
    import ipywidgets as widgets

    default = widget.value if default is None else default
    if hasattr(widget, "_options_values"):  # SelectionSlider, Dropdown, ToggleButtons, RadioButtons, ...
        return list(widget._options_values)
    if isinstance(widget, widgets.Checkbox | widgets.ToggleButton):
        return [False, True]
    if isinstance(widget, widgets.FloatLogSlider):
        exponent = math.log(default, widget.base)
        exps = _step_values(widget.min, widget.max, widget.step, exponent)
        return [default if e == exponent else round(widget.base**e, 12) for e in exps]
    if isinstance(widget, widgets.IntSlider):
        n = (widget.max - widget.min) // widget.step + 1
        keep = (default - widget.min) // widget.step
        return [widget.min + k * widget.step for k in _spaced(n, keep)]
    if isinstance(widget, widgets.FloatSlider):
        return _step_values(widget.min, widget.max, widget.step, default)
    raise TypeError(f"no default frames for a {type(widget).__name__}; pass frames={{name: [values]}} to Explorer")


def every_value(widget, default=None) -> list:
    """Every value a control can take (a slider's every step): what a picture drawn in the browser
    (a `Drawing`) is drawn for; no frames are precomputed, so nothing has to be left out. A slider
    without a step (any value) gets default_frames' evenly spaced values."""
    import ipywidgets as widgets

    default = widget.value if default is None else default
    if isinstance(widget, widgets.FloatSlider):  # the exact default value is one of them
        return _step_values(widget.min, widget.max, widget.step, default, spaced=False)
    if isinstance(widget, widgets.IntSlider):
        return list(range(widget.min, widget.max + 1, widget.step))
    return default_frames(widget, default)


def frames_of(explorer) -> dict[str, list]:
    """{name: the values the control plays without a kernel}: the explorer's declared ``frames=``, else
    `every_value` (an explorer with a `Drawing`) or `default_frames`, around the value each control had when
    the explorer was built (``explorer.first_values``: a notebook may move a control after building it)."""
    values = every_value if explorer.drawing else default_frames
    declared, first = explorer.frames_given, explorer.first_values
    frames = {}
    for name, widget in explorer.controls.items():
        if name not in declared:
            frames[name] = list(values(widget, first[name]))
        else:  # a list, a range or an array (its items as Python numbers: the manifest is JSON)
            given = declared[name]
            items = given.tolist() if isinstance(given, np.ndarray) else list(given)
            frames[name] = [v.item() if isinstance(v, np.generic) else v for v in items]
    return frames


def readout(widget, value) -> str:
    """The text the live widget shows next to the control for `value` (its readout or option label)."""
    if hasattr(widget, "_options_values"):
        return str(widget._options_labels[list(widget._options_values).index(value)])
    if isinstance(value, bool):
        return "✓" if value else ""
    fmt = getattr(widget, "readout_format", None)
    if not fmt:
        return str(value)
    if fmt.endswith("g") and "#" not in fmt and "~" not in fmt:
        fmt = "#" + fmt  # d3-format's "g" keeps trailing zeros (1 -> "1.00"), like Python's "#g"
    try:
        return format(value, fmt.replace("~", ""))
    except ValueError:
        return str(value)


def control_kind(widget) -> str:
    import ipywidgets as widgets

    if isinstance(widget, widgets.Checkbox | widgets.ToggleButton):
        return "checkbox"
    if isinstance(widget, widgets.Dropdown | widgets.ToggleButtons | widgets.RadioButtons | widgets.Select):
        return "select"
    return "slider"


def _overlap(a, b):
    """The part two boxes share, if more than a pixel each way (None otherwise)."""
    cut = Bbox.intersection(a, b)
    return cut if cut is not None and cut.width > 1 and cut.height > 1 else None


def _texts_over_other_axes(figure: Figure) -> list[str]:
    """The texts one axes draws (tick labels, axis labels, titles, free texts) that reach into another
    axes' box, as readable descriptions: 06's row names once covered the left heatmap's last column, and
    09's right "쿼리(query)" the left heatmap's edge (both laid out before their labels were set). Axes
    that share a box with the text's own axes (twins, insets) do not count. (An axis label does not cover
    its own tick labels unless set_label_coords fixed it: matplotlib moves it outward, and _overflow
    finds it if it leaves the canvas. Texts set where tick labels would sit, such as 06's row names and 09's
    token names, are not tick labels: their axis label is moved past them by labelpad (09's token_names),
    and nothing here checks overlaps inside one axes.)"""
    renderer = figure.canvas.get_renderer()
    shown = [ax for ax in figure.axes if ax.get_visible()]
    found = []
    for own, (name, text) in ((ax, named) for ax in shown for named in _axes_texts(ax)):
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        for other in shown:
            if other is own or _overlap(other.bbox, own.bbox):
                continue
            cut = _overlap(box, other.bbox)
            if cut:
                found.append(f"{name} {text.get_text()!r} over another axes ({cut.width:.0f}x{cut.height:.0f} px)")
    return found


# ------------------------------------------------------------------ what the player draws itself (a Drawing)


def _pixels(figure: Figure, points) -> list[list[float]]:
    """Display points (origin bottom left) -> the PNG's pixels (origin top left), rounded to 0.01 px."""
    height = figure.bbox.height
    return [[round(float(x), 2), round(float(height - y), 2)] for x, y in points]


def _panel(ax) -> dict:
    """An axes as the drawer sees it: its box in pixels and the data limits mapped onto it (linear)."""
    (x0, top), (x1, bottom) = _pixels(ax.figure, [(ax.bbox.x0, ax.bbox.y1), (ax.bbox.x1, ax.bbox.y0)])
    return {
        "box": [x0, top, x1, bottom],
        "xlim": list(map(float, ax.get_xlim())),
        "ylim": list(map(float, ax.get_ylim())),
    }


def _font(text) -> dict:
    return {
        "size": round(text.get_fontsize() * text.figure.dpi / 72, 2),
        "color": to_hex(text.get_color()),
        "weight": str(text.get_fontweight()),
    }


def softmax_bars(ax_scores, ax_weights, values=None, *, negative="tab:red", positive="tab:gray") -> Drawing:
    """Notebook 01's two panels drawn by the static player: score bars (`negative` below 0, `positive`
    otherwise) over a zero line, softmax-weight bars with their values ("<0.01" below 0.005), and the
    weights panel's title: the weighted sum of `values` ("가중합 = x.xx"), or a fixed title without values.
    The axes must hold exactly those artists (01's `softmax_panels`); the browser computes softmax in
    float64 with the largest score subtracted, as 01's `softmax` does (its spec: `softmax_bars_spec`). It lives here, with its spec, as the site's part of 01's explorer."""
    score_bars, weight_bars = list(ax_scores.patches), list(ax_weights.patches)
    zero_lines, labels = list(ax_scores.lines), list(ax_weights.texts)
    if not (len(score_bars) == len(weight_bars) == len(labels) > 0 and len(zero_lines) == 1):
        raise ValueError(
            "softmax_bars expects n score bars and one zero line on ax_scores, n weight bars and n value "
            f"labels on ax_weights; got {len(score_bars)} bars and {len(zero_lines)} lines, "
            f"{len(weight_bars)} bars and {len(labels)} labels"
        )
    v = None if values is None else [float(x) for x in np.asarray(values, dtype=np.float64).reshape(-1)]
    if v is not None and len(v) != len(score_bars):
        raise ValueError(f"values must have one number per bar ({len(score_bars)}), got {len(v)}")
    title = ax_weights.title
    params = dict(axes=(ax_scores, ax_weights), colours=(negative, positive), values=v)
    params["artists"] = (score_bars, zero_lines, weight_bars, labels, title)
    return Drawing("softmax-bars", [*score_bars, *zero_lines, *weight_bars, *labels, title], params)


def softmax_bars_spec(figure: Figure, *, axes: tuple, artists: tuple, colours: tuple, values: list | None) -> dict:
    """What the player's "softmax-bars" drawer needs, from the parameters softmax_bars checked and
    kept (its two axes, their bars, zero line, value labels and the weights title, the bar colours, the values):
    both panels in pixels, the bars, colours, the labels' font and baseline, the title's font and place."""
    (ax_scores, ax_weights), (negative, positive) = axes, colours
    score_bars, zero_lines, weight_bars, labels, title = artists
    renderer = figure.canvas.get_renderer()
    label = labels[0]
    # va="bottom": the label's box starts at its anchor; its baseline sits the descent of "lp" above.
    descent = renderer.get_text_width_height_descent("lp", label.get_fontproperties(), ismath=False)[2]
    line = zero_lines[0]
    return {
        "scores": {
            **_panel(ax_scores),
            "bars": [[b.get_x(), b.get_width()] for b in score_bars],
            "negative": to_hex(negative),
            "positive": to_hex(positive),
            "zero": {"color": to_hex(line.get_color()), "width": round(line.get_linewidth() * figure.dpi / 72, 2)},
        },
        "weights": {
            **_panel(ax_weights),
            "bars": [[b.get_x(), b.get_width()] for b in weight_bars],
            "color": to_hex(weight_bars[0].get_facecolor()),
            "label": {
                **_font(label),
                "x": [float(t.get_position()[0]) for t in labels],
                "descent": round(float(descent), 2),
            },
        },
        "title": {
            **_font(title),
            "at": _pixels(figure, [title.get_transform().transform(title.get_position())])[0],
            "text": "소프트맥스 가중치: 양수, 합 1" if values is None else None,
            "prefix": "가중합 = ",
        },
        "values": values,
    }


# Drawing kind -> spec(figure, **drawing.params) -> dict: JSON-able, lengths in the figure's pixels (origin top
# left), computed after the figure was fitted and drawn; the player's drawer of the same kind
# (tools/explorer_player.py, COURSE_DRAWERS) reads it.
SPECS = {"softmax-bars": softmax_bars_spec}


def drawing_spec(drawing, figure: Figure) -> dict:
    """The manifest's "drawing": the kind, the PNG's size (the SVG's viewBox) and the kind's spec."""
    if drawing.kind not in SPECS:
        raise ValueError(
            f"no spec for a Drawing of kind {drawing.kind!r}; tools/explorer_export.py has {sorted(SPECS)}"
        )
    size = list(figure.canvas.get_width_height())  # the PNG's pixels: the SVG's viewBox
    return {"kind": drawing.kind, "size": size, **SPECS[drawing.kind](figure, **drawing.params)}


# ------------------------------------------------------------------ the frames


def default_index(explorer, name: str, frames: dict[str, list] | None = None) -> int:
    """The place of the control's current value among its frames (`frames_of`), or the nearest one."""
    values, current = (frames or frames_of(explorer))[name], explorer.controls[name].value
    if current in values:
        return values.index(current)
    try:  # declared frames without the current value: the nearest one
        return min(range(len(values)), key=lambda i: abs(values[i] - current))
    except TypeError:
        return 0


def frame_grid(explorer, frames: dict[str, list] | None = None) -> tuple[str, list[tuple[int, ...]]]:
    """("grid", every combination of the controls' values) when that is at most max_frames points,
    else ("axes", each control over its values with the others at their defaults); ("drawn", the
    defaults only) for an explorer with a `Drawing`, whose player draws every point; each point is a
    tuple of indices into the lists of `frames_of(explorer)` (the player's frame key is the indices
    joined by ",")."""
    frames = frames or frames_of(explorer)
    names = list(explorer.controls)
    sizes = [len(frames[n]) for n in names]
    defaults = tuple(default_index(explorer, n, frames) for n in names)
    if explorer.drawing:  # one background frame; the player draws the rest for every point
        return "drawn", [defaults]
    if math.prod(sizes) <= explorer.max_frames:
        return "grid", list(itertools.product(*(range(k) for k in sizes)))
    points = [defaults]
    for axis, size in enumerate(sizes):
        points += [defaults[:axis] + (i,) + defaults[axis + 1 :] for i in range(size) if i != defaults[axis]]
    return "axes", points


def export_frames(explorer, folder) -> dict:
    """Draw every grid point (update + render_png, the live widgets untouched), write
    <folder>/<n>/<k>.png and <folder>/<n>/manifest.json, then redraw the current values."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    number = len([p for p in folder.iterdir() if p.is_dir()])
    out = folder / f"{number:02d}"
    out.mkdir()
    all_frames = frames_of(explorer)
    mode, points = frame_grid(explorer, all_frames)
    names = list(explorer.controls)
    figure, drawing = explorer.figure, explorer.drawing
    frames, outside = [], {}
    try:
        for k, point in enumerate(points):
            explorer.update(**{n: all_frames[n][i] for n, i in zip(names, point)})
            if drawing:  # the background: everything but what the player draws
                figure.canvas.draw()  # positions as the whole figure lays them out (titles move)
                clipped = _overflow(figure)[1]  # the whole picture, as the page shows it drawn
                spec = drawing_spec(drawing, figure)
                shown = [a.get_visible() for a in drawing.moving]
                for artist in drawing.moving:
                    artist.set_visible(False)
                try:
                    (out / f"{k:03d}.png").write_bytes(explorer.render_png(full=True))
                finally:
                    for artist, visible in zip(drawing.moving, shown):
                        artist.set_visible(visible)
            else:  # drawn whole: the static frames never depend on _blit (tests compare them with it)
                (out / f"{k:03d}.png").write_bytes(explorer.render_png(full=True))
                clipped = _overflow(figure)[1]  # the canvas was just drawn: only text boxes are measured
            frames.append({"index": list(point), "file": f"{k:03d}.png"})
            clipped += _texts_over_other_axes(figure)  # drawn just now: positions are current
            if clipped:
                outside[",".join(map(str, point))] = clipped
    finally:
        renders, drawn = explorer.renders, explorer.drawn
        explorer.redraw()  # the current values again (not counted: the notebook's own checks count renders)
        explorer.renders, explorer.drawn = renders, drawn
    controls = []
    for name in names:
        widget = explorer.controls[name]
        controls.append(
            {
                "name": name,
                "kind": control_kind(widget),
                "description": str(getattr(widget, "description", "") or name),
                "values": [v if isinstance(v, bool | int | float | str) else repr(v) for v in all_frames[name]],
                "labels": [readout(widget, v) for v in all_frames[name]],
                "default": default_index(explorer, name, all_frames),
            }
        )
    manifest = {
        "model_id": explorer.widget.model_id,
        "mode": mode,
        "controls": controls,
        "frames": frames,
        "width": explorer.image.layout.width,
        "outside": outside,  # frame key -> the texts that leave the canvas or cover another axes there (none, we hope)
    }
    if drawing:
        manifest["drawing"] = spec
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    return manifest
