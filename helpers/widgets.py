"""The one slider builder every notebook uses: a figure that follows the hand while dragging.

A lesson builds its figure once, writes a small ``update(**values)`` that changes the figure's
artists in place (``set_data``, ``set_height``, ``set_text``), and hands both to ``Explorer``.
Each slider move calls ``update`` and re-encodes the figure as a PNG into an ``Image`` widget:
no new figure, no new axes, no flicker, so the picture keeps up while dragging
(``continuous_update=True``). The same object works in JupyterLab and in the RISE slideshow.
Tests call ``explorer.set(...)`` and read ``explorer.png`` without a browser.

Without a kernel (the static site, the offline decks) an explorer plays frames computed in advance:
each explorer declares a grid of control values (``frames=``, or a default derived from its widgets,
see ``default_frames``), and tools/explorer_frames.py runs the notebook with
``COURSE_EXPLORER_FRAMES=<folder>`` set, where every new explorer draws each grid point once and
writes the PNGs and a manifest there (``export_frames``). The live widget is not touched by that.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
from collections.abc import Callable, Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

__all__ = ["Explorer", "default_frames"]

FRAMES_ENV = "COURSE_EXPLORER_FRAMES"  # a folder: explorers export their frames there (tools/explorer_frames.py)
MAX_FULL_GRID = 64  # several controls: the full grid up to this many frames, else one line per control
MAX_ALL_VALUES = 40  # a slider with at most this many positions plays every one of them
SPACED = 30  # otherwise about this many, evenly spaced, ends and default included


def _spaced(n: int, keep: int) -> list[int]:
    """About SPACED indices out of range(n), evenly spaced, with 0, n-1 and `keep`."""
    if n <= MAX_ALL_VALUES:
        return list(range(n))
    picked = {round(i * (n - 1) / (SPACED - 1)) for i in range(SPACED)} | {0, n - 1, keep}
    return sorted(picked)


def _step_values(low: float, high: float, step: float, default: float) -> list[float]:
    n = int(math.floor((high - low) / step + 1e-9)) + 1
    keep = min(range(n), key=lambda k: abs(low + k * step - default))
    values = [round(low + k * step, 12) for k in _spaced(n, keep)]
    values[values.index(round(low + keep * step, 12))] = default  # the exact default value is a frame
    return values


def default_frames(widget) -> list:
    """The values a control plays without a kernel: every option, both checkbox states, every slider
    position up to MAX_ALL_VALUES, otherwise about SPACED evenly spaced ones (ends and default included)."""
    import ipywidgets as widgets

    if hasattr(widget, "_options_values"):  # SelectionSlider, Dropdown, ToggleButtons, RadioButtons, ...
        return list(widget._options_values)
    if isinstance(widget, widgets.Checkbox | widgets.ToggleButton):
        return [False, True]
    if isinstance(widget, widgets.FloatLogSlider):
        exponent = math.log(widget.value, widget.base)
        exps = _step_values(widget.min, widget.max, widget.step, exponent)
        return [widget.value if e == exponent else round(widget.base**e, 12) for e in exps]
    if isinstance(widget, widgets.IntSlider):
        n = (widget.max - widget.min) // widget.step + 1
        keep = (widget.value - widget.min) // widget.step
        return [widget.min + k * widget.step for k in _spaced(n, keep)]
    if isinstance(widget, widgets.FloatSlider):
        return _step_values(widget.min, widget.max, widget.step, widget.value)
    raise TypeError(f"no default frames for a {type(widget).__name__}; pass frames={{name: [values]}} to Explorer")


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


class Explorer:
    """Sliders (any ipywidgets value widgets) that redraw one matplotlib figure in place.

    figure   a figure built once; it is detached from pyplot so the inline backend never shows it
    update   ``update(**values)`` changes the figure's artists for the controls' current values
    controls ``{name: widget}``; names are the keyword arguments of ``update``
    frames   optional ``{name: [values]}``: the values each control plays without a kernel (the static
             site and decks); controls left out get ``default_frames(widget)``
    """

    def __init__(
        self,
        figure: Figure,
        update: Callable[..., object],
        controls: Mapping[str, object],
        *,
        dpi: float | None = None,
        frames: Mapping[str, list] | None = None,
    ):
        import ipywidgets as widgets

        if not isinstance(figure, Figure):
            raise TypeError(f"figure must be a matplotlib Figure, got {type(figure).__name__}")
        if not callable(update):
            raise TypeError(f"update must be callable, got {type(update).__name__}")
        if not controls:
            raise ValueError("an explorer needs at least one control (a slider or a selector)")
        plt.close(figure)  # owned by the widget from now on, never shown twice by the inline backend
        if dpi:
            figure.set_dpi(dpi)
        if not isinstance(figure.canvas, FigureCanvasAgg):
            FigureCanvasAgg(figure)  # renders in memory whatever backend made the figure
        self.figure = figure
        self.update = update
        self.controls = dict(controls)
        unknown = set(frames or {}) - set(self.controls)
        if unknown:
            raise KeyError(f"frames for unknown control(s) {sorted(unknown)}")
        self.frames = {name: list((frames or {}).get(name) or default_frames(w)) for name, w in self.controls.items()}
        self.dpi = dpi or figure.dpi
        self.renders = 0
        self.last = None  # what update() returned for the last values (tests and notebooks read it)
        for widget in self.controls.values():
            if hasattr(widget, "continuous_update"):
                widget.continuous_update = True
            widget.observe(self._on_change, names="value")
        # Shown at the figure's own pixel width (never wider than its cell or slide), so a small
        # figure is not stretched to the slide's width in the static decks.
        width = f"{round(figure.get_figwidth() * self.dpi)}px"
        self.image = widgets.Image(format="png", layout=widgets.Layout(width=width, max_width="100%"))
        # The class marks an Explorer in the page (tests/test_browser.py checks each explorer has it).
        self.widget = widgets.VBox([*self.controls.values(), self.image])
        self.widget.add_class("course-explorer")
        self.redraw()
        if os.environ.get(FRAMES_ENV):
            self.export_frames(os.environ[FRAMES_ENV])

    def frame_grid(self) -> tuple[str, list[tuple[int, ...]]]:
        """("grid", every combination) when small, else ("axes", each control over its values with the
        others at their defaults); each point is a tuple of indices into self.frames' lists."""
        names = list(self.controls)
        sizes = [len(self.frames[n]) for n in names]
        defaults = tuple(self.default_index(n) for n in names)
        if math.prod(sizes) <= MAX_FULL_GRID:
            return "grid", list(itertools.product(*(range(k) for k in sizes)))
        points = [defaults]
        for axis, size in enumerate(sizes):
            points += [defaults[:axis] + (i,) + defaults[axis + 1 :] for i in range(size) if i != defaults[axis]]
        return "axes", points

    def default_index(self, name: str) -> int:
        values, current = self.frames[name], self.controls[name].value
        if current in values:
            return values.index(current)
        try:  # declared frames without the current value: the nearest one
            return min(range(len(values)), key=lambda i: abs(values[i] - current))
        except TypeError:
            return 0

    def export_frames(self, folder) -> dict:
        """Draw every grid point (update + render_png, the live widgets untouched), write
        <folder>/<n>/<k>.png and <folder>/<n>/manifest.json, then redraw the current values."""
        from pathlib import Path

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        number = len([p for p in folder.iterdir() if p.is_dir()])
        out = folder / f"{number:02d}"
        out.mkdir()
        mode, points = self.frame_grid()
        names = list(self.controls)
        frames = []
        try:
            for k, point in enumerate(points):
                self.update(**{n: self.frames[n][i] for n, i in zip(names, point)})
                (out / f"{k:03d}.png").write_bytes(self.render_png())
                frames.append({"index": list(point), "file": f"{k:03d}.png"})
        finally:
            renders = self.renders
            self.redraw()  # the current values again (not counted: the notebook's own checks count renders)
            self.renders = renders
        controls = []
        for name in names:
            widget = self.controls[name]
            controls.append(
                {
                    "name": name,
                    "kind": control_kind(widget),
                    "description": str(getattr(widget, "description", "") or name),
                    "values": [v if isinstance(v, bool | int | float | str) else repr(v) for v in self.frames[name]],
                    "labels": [readout(widget, v) for v in self.frames[name]],
                    "default": self.default_index(name),
                }
            )
        manifest = {
            "model_id": self.widget.model_id,
            "mode": mode,
            "controls": controls,
            "frames": frames,
            "width": self.image.layout.width,
        }
        (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
        return manifest

    @property
    def values(self) -> dict:
        return {name: w.value for name, w in self.controls.items()}

    @property
    def png(self) -> bytes:
        return bytes(self.image.value)

    def set(self, **values) -> None:
        """Move controls as a learner would (each change redraws once, through the observer)."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise KeyError(f"unknown control(s) {sorted(unknown)}; this explorer has {sorted(self.controls)}")
        for name, value in values.items():
            self.controls[name].value = value

    def redraw(self) -> None:
        self.last = self.update(**self.values)
        self.image.value = self.render_png()
        self.renders += 1

    def render_png(self) -> bytes:
        """The figure as PNG: the Agg canvas redrawn in place (its renderer is reused, unlike savefig's,
        which set up a new one and cost about 30% more per frame), encoded with low compression
        (encoding time matters more than bytes on a local kernel)."""
        canvas = self.figure.canvas
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        pixels = rgba[..., :3] if rgba[..., 3].min() == 255 else rgba  # opaque figures: 25% fewer bytes
        buffer = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, format="png", compress_level=1)
        return buffer.getvalue()

    def _on_change(self, _change) -> None:
        self.redraw()

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)
