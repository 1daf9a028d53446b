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
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from .attention import softmax
from .plots import to_numpy, weight_bars

__all__ = ["Explorer", "draw_softmax", "softmax_explorer"]


class Explorer:
    """Sliders (any ipywidgets value widgets) that redraw one matplotlib figure in place.

    figure   a figure built once; it is detached from pyplot so the inline backend never shows it
    update   ``update(**values)`` changes the figure's artists for the controls' current values
    controls ``{name: widget}``; names are the keyword arguments of ``update``
    """

    def __init__(self, figure: Figure, update: Callable[..., object],
                 controls: Mapping[str, object], *, dpi: float | None = None):
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
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="auto", max_width="100%"))
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


# Notebook 01's pair, until 01 defines its own explorer with Explorer.
def draw_softmax(scores, labels, *, temperature: float = 1.0, values=None, axes=None):
    """Draw scores (left) and softmax weights (right); return the weights as a numpy array.

    With ``values`` (one number per item) the right panel's title shows the weighted sum.
    """
    s = torch.as_tensor(to_numpy(scores), dtype=torch.float64)
    if s.ndim != 1 or len(labels) != len(s):
        raise ValueError(f"need one score per label: {len(labels)} labels, scores of shape {tuple(s.shape)}")
    weights = softmax(s, temperature=temperature).numpy()
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(9.0, 3.2))
    left, right = axes
    colors = ["tab:red" if v < 0 else "tab:gray" for v in s.numpy()]
    left.bar(range(len(s)), s.numpy(), color=colors)
    left.axhline(0, color="black", linewidth=0.8)
    left.set_xticks(range(len(s)), labels)
    left.set_ylim(-6, 6)
    left.set_title("점수(score): 아무 실수")
    title = "소프트맥스 가중치: 양수, 합 1"
    if values is not None:
        v = to_numpy(values).reshape(-1)
        if len(v) != len(s):
            raise ValueError(f"need one value per label: {len(labels)} labels, {len(v)} values")
        title = f"가중합 = {float(weights @ v):.2f}"
    weight_bars(weights, labels, ax=right, title=title, color="tab:blue", ylim=(0, 1.1))
    return weights


def softmax_explorer(labels, scores, *, values=None, low: float = -5.0, high: float = 5.0):
    """One slider per score; the figure redraws the softmax weights (and the weighted sum)."""
    import ipywidgets as widgets

    sliders = {
        f"s{i}": widgets.FloatSlider(value=float(v), min=low, max=high, step=0.1,
                                     description=str(label), continuous_update=False)
        for i, (label, v) in enumerate(zip(labels, to_numpy(scores)))
    }

    def redraw(**kw):
        draw_softmax([kw[f"s{i}"] for i in range(len(labels))], labels, values=values)
        plt.show()

    out = widgets.interactive_output(redraw, sliders)
    return widgets.VBox([*sliders.values(), out])
