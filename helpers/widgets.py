"""The one slider builder every notebook uses: a figure that follows the hand while dragging.

A lesson builds its figure once, writes a small ``update(**values)`` that changes the figure's
artists in place (``set_data``, ``set_height``, ``set_text``), and hands both to ``Explorer``.
Each slider move calls ``update`` and re-encodes the figure as a PNG into an ``Image`` widget:
no new figure, no new axes, no flicker, so the picture keeps up while dragging
(``continuous_update=True``). The same object works in JupyterLab, in the RISE slideshow and,
through the widget state stored in the notebook, in the offline decks (first frame only).
Tests call ``explorer.set(...)`` and read ``explorer.png`` without a browser.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

__all__ = ["Explorer"]


class Explorer:
    """Sliders (any ipywidgets value widgets) that redraw one matplotlib figure in place.

    figure   a figure built once; it is detached from pyplot so the inline backend never shows it
    update   ``update(**values)`` changes the figure's artists for the controls' current values
    controls ``{name: widget}``; names are the keyword arguments of ``update``
    """

    def __init__(
        self, figure: Figure, update: Callable[..., object], controls: Mapping[str, object], *, dpi: float | None = None
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
