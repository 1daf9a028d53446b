"""The one slider builder every notebook uses: a figure that follows the hand while dragging.

A lesson builds its figure once, writes ``update(**values)`` that changes its artists through setters
(``set_data``, ``set_height``, ``set_text``), and hands both to ``Explorer``. Each move runs ``update``
and puts the figure, redrawn in place as a PNG, into its picture widget (``Explorer.redraw``: PNGs of
values shown before are kept; ``_draw_ahead``: a hand's next values are drawn ahead; ``_blit``: only what
changed is redrawn). In a front end the picture keeps every frame it was sent and shows one at once when the
controls reach its values (``_picture_class``, helpers/explorer_picture.js). Tests call ``explorer.set(...)``
and read ``explorer.png`` without a browser.

Without a kernel (the static site and decks) an explorer plays frames drawn in advance by tools/explorer_export.py
(imported only under ``COURSE_EXPLORER_FRAMES``, set by tools/explorer_frames.py): the controls' joint grid up to
``max_frames``, else one line per control, or a ``Drawing`` the page draws itself. The figure is fitted to
its canvas once (``fit_figure``); under ``COURSE_CHECK_FIGURES=1`` (tests, nbval) an explorer whose text
leaves the canvas is refused and every blitted frame is compared with a whole draw.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import math
import numbers
import operator
import os
import struct
import threading
import warnings
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.axes._secondary_axes import SecondaryAxis
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.cm import ScalarMappable
from matplotlib.figure import Figure, SubFigure
from matplotlib.image import _draw_list_compositing_images
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.table import Cell
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox, Transform

__all__ = ["Drawing", "Explorer", "fit_figure"]

FRAMES_ENV = "COURSE_EXPLORER_FRAMES"  # a folder: explorers export their frames there (tools/explorer_frames.py)
CHECK_ENV = "COURSE_CHECK_FIGURES"  # "1": an explorer whose text leaves the canvas is an error (tests set it)


class BlitMismatch(AssertionError):
    """Under COURSE_CHECK_FIGURES=1, a frame drawn by `Explorer._blit` differs from a whole draw."""


MAX_FRAMES = 256  # per explorer: the controls' joint grid up to this many frames, else one line per control
FIT_PAD = 4  # pixels kept free between the outermost text and the canvas edge when a figure is fitted


def _step_count(low: float, high: float, step: float) -> int:
    """How many steps a slider from low to high has (its ends included)."""
    return int(math.floor((high - low) / step + 1e-9)) + 1


def _steps(widget):
    """A control's positions as (count, value at k, position of a value), computed rather than listed (a
    slider may have millions): the values tools/explorer_export.py's `every_value` gives a slider (floats
    rounded to 12 digits, 12 significant ones on a log slider), a selector's options, a checkbox's two; or None."""
    import ipywidgets as widgets

    if hasattr(widget, "_options_values") or isinstance(widget, widgets.Checkbox | widgets.ToggleButton):
        options = list(getattr(widget, "_options_values", (False, True)))
        return len(options), options.__getitem__, options.index
    if isinstance(widget, widgets.IntSlider | widgets.FloatSlider | widgets.FloatLogSlider) and widget.step:
        low, high, step = widget.min, widget.max, widget.step
        count = _step_count(low, high, step)
        if isinstance(widget, widgets.IntSlider):
            return count, lambda k: low + k * step, lambda v: round((v - low) / step)
        if isinstance(widget, widgets.FloatSlider):  # inside the bounds (a bound may have more digits: pi)
            return count, lambda k: min(max(round(low + k * step, 12), low), high), lambda v: round((v - low) / step)
        base = widget.base
        value_at = lambda k: min(max(float(f"{base ** (low + k * step):.12g}"), base**low), base**high)
        return count, value_at, lambda v: round((math.log(v, base) - low) / step)
    return None


_FRONT_KINDS = {"IntSlider", "FloatSlider", "FloatLogSlider", "Checkbox", "ToggleButton"}  # explorer_picture.js


@functools.cache
def _picture_class():
    """The explorer's picture: an image whose front end (helpers/explorer_picture.js, through anywidget) keeps
    the frames it is sent under their `Explorer._front_key` and shows one at once when the controls come back
    to its values, before the kernel answers. `value` is the PNG shown, as an ipywidgets Image's."""
    import anywidget
    import ipywidgets as widgets
    import traitlets
    from ipywidgets.widgets.trait_types import CByteMemoryView

    class Picture(anywidget.AnyWidget):
        _esm = (Path(__file__).parent / "explorer_picture.js").read_text(encoding="utf-8")
        value = CByteMemoryView().tag(sync=True)
        key, size = traitlets.Unicode("").tag(sync=True), traitlets.Unicode("").tag(sync=True)
        controls = traitlets.List().tag(sync=True, **widgets.widget_serialization)

        def __repr__(self):  # in a cell's text/plain output: no memory address
            return f"Picture(value=<{len(self.value)} bytes of PNG>, key={self.key!r})"

    return Picture


def _figure_texts(figure: Figure):
    """The texts a draw shows, with a name each: figure texts, and per axes the titles, axis labels,
    offset texts, the tick labels of the ticks drawn, free texts and legend texts."""
    yield from (("figure text", text) for text in [*figure.texts, *([figure._suptitle] if figure._suptitle else [])])
    for ax in figure.axes:
        yield from _axes_texts(ax)


def _axes_texts(ax):
    """_figure_texts for one axes (a tick label's own .axes is not set: the axes is known only from here)."""
    yield from [("title", ax.title), ("left title", ax._left_title), ("right title", ax._right_title)]
    yield from [("x label", ax.xaxis.label), ("y label", ax.yaxis.label)]
    yield from [("x offset", ax.xaxis.offsetText), ("y offset", ax.yaxis.offsetText)]
    for axis_name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        if not axis.get_visible() or ax.name == "3d":  # a 3D axis places its tick labels in its own draw
            continue
        for tick in axis._update_ticks():  # the ticks a draw shows (the private call Axis.draw makes)
            yield from ((f"{axis_name} tick label", label) for label in (tick.label1, tick.label2))
    yield from (("text", text) for text in ax.texts)
    legend = ax.get_legend()
    if legend is not None and legend.get_visible():
        yield from (("legend", text) for text in [legend.get_title(), *legend.get_texts()])


def _overflow(figure: Figure) -> tuple[dict[str, float], list[str]]:
    """How many pixels the drawn texts stick out on each side, and a description of each one outside."""
    renderer = figure.canvas.get_renderer()
    width, height = figure.bbox.width, figure.bbox.height
    sides = {"left": 0.0, "right": 0.0, "bottom": 0.0, "top": 0.0}
    found = []

    def measure(what: str, box) -> None:
        out = {"left": -box.x0, "right": box.x1 - width, "bottom": -box.y0, "top": box.y1 - height}
        if max(out.values()) > 0.5:
            where = ", ".join(f"{side} {px:.0f} px" for side, px in out.items() if px > 0.5)
            found.append(f"{what} ({where})")
        for side, px in out.items():
            sides[side] = max(sides[side], px)

    for name, text in _figure_texts(figure):
        if text.get_visible() and text.get_text().strip() and (text.axes is None or text.axes.get_visible()):
            measure(f"{name} {text.get_text()!r}", text.get_window_extent(renderer))
    # A legend's frame too, not only its texts: the box around them must stay on the canvas as well.
    legends = [(ax.get_legend(), ax.get_visible()) for ax in figure.axes] + [(lg, True) for lg in figure.legends]
    for legend, shown in legends:
        if legend is not None and shown and legend.get_visible():
            measure("legend box", legend.get_window_extent(renderer))
    return sides, found


def fit_figure(figure: Figure, pad: float = FIT_PAD, *, drawn: bool = False) -> bool:
    """Move every axes inward just enough that no text leaves the canvas (with `pad` pixels to spare);
    the margins are set once, as fixed positions, so the in-place redraw stays as fast as before.
    Returns whether anything moved. `drawn`: the canvas shows the figure as it is (no first draw)."""
    moved = False
    for attempt in range(3):  # moving the axes can move a label by a pixel or two: measure again
        if attempt or not drawn:
            figure.canvas.draw()
        sides, found = _overflow(figure)
        if not found:
            return moved
        width, height = figure.bbox.width, figure.bbox.height
        left = (sides["left"] + pad) / width if sides["left"] > 0.5 else 0.0
        right = (sides["right"] + pad) / width if sides["right"] > 0.5 else 0.0
        bottom = (sides["bottom"] + pad) / height if sides["bottom"] > 0.5 else 0.0
        top = (sides["top"] + pad) / height if sides["top"] > 0.5 else 0.0
        if left + right >= 0.5 or bottom + top >= 0.5:
            raise ValueError(f"the figure is too small for its texts: {found}")
        for ax in figure.axes:  # the same affine map for every axes: [0, 1]² -> the box inside the margins
            x0, y0, w, h = ax.get_position(original=True).bounds
            sx, sy = 1 - left - right, 1 - bottom - top
            ax.set_position(Bbox.from_bounds(left + x0 * sx, bottom + y0 * sy, w * sx, h * sy))
        moved = True
    figure.canvas.draw()
    return moved


class _GlyphRecorder:
    """Stands in for Agg's C renderer while one text is drawn: records the glyph images drawn (the only thing
    matplotlib's Agg text drawing does to it) and passes them on. Any other use marks the text as not replayable."""

    def __init__(self, real):
        self.real, self.glyphs, self.replayable = real, [], True

    def draw_text_image(self, image, x, y, angle, gc):
        self.glyphs.append((np.array(image, copy=True), x, y, angle))
        return self.real.draw_text_image(image, x, y, angle, gc)

    def __getattr__(self, name):
        self.replayable = False
        return getattr(self.real, name)


# rcParams that change which glyphs a text gets without changing its FontProperties (a generic family's
# font list, hinting, kerning).
FONT_RC = ("font.serif", "font.sans-serif", "font.monospace", "font.cursive", "font.fantasy")
FONT_RC += ("text.hinting_factor", "text.kerning_factor")


def _font_key(prop) -> tuple:
    """What decides the glyphs a FontProperties gives: its own fields, the hinting, and the rcParams that say
    what a generic family name means (both caches below key on it)."""
    rc = matplotlib.rcParams
    fields = (prop.get_family(), prop.get_style(), prop.get_variant(), prop.get_weight(), prop.get_stretch())
    rcs = tuple(tuple(rc[k]) if isinstance(rc[k], list) else rc[k] for k in FONT_RC)
    return (tuple(fields[0]), *fields[1:], prop.get_size_in_points(), prop.get_file(), get_hinting_flag(), rcs)


class _TextCachingRenderer(RendererAgg):
    """Agg, with each plain text's glyph images kept after its first draw and drawn again from there
    (the colour, alpha and clipping come from the new call's gc, as in Agg). Laying a string out and
    rendering its glyphs with FreeType is most of a text's draw (about 1.8 of 2 ms); an explorer draws
    the same strings at the same places frame after frame (tick labels, numbers in cells). Same pixels
    (tests/test_widgets.py compares with plain Agg); math text is drawn as always."""

    MAX_TEXTS = 20_000

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        key = (s, _font_key(prop), angle, x, y, gc.get_antialiased(), tuple(features) if features else None, language)
        cache = self.__dict__.setdefault("_course_glyphs", {})
        if (glyphs := cache.get(key)) is None:
            real = self._renderer
            self._renderer = recorder = _GlyphRecorder(real)
            try:
                super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
            finally:
                self._renderer = real
            glyphs = recorder.glyphs
            if recorder.replayable:
                if len(cache) >= self.MAX_TEXTS:
                    cache.clear()
                cache[key] = glyphs
        else:
            for image, gx, gy, gangle in glyphs:
                self._renderer.draw_text_image(image, gx, gy, gangle, gc)
        return None


_TEXT_LAYOUT = Text._get_layout  # matplotlib's own
_DRAWING = threading.RLock()  # one explorer draw at a time in a process, whichever thread asks (Explorer.redraw)


def _remembered_layout(text: Text, renderer):
    """Text._get_layout, remembered on an explorer's renderer while it draws (`_layouts_remembered`).

    A layout (the text's box, its lines and their offsets from the anchor) depends on the string, the font
    and the alignment, not on where the text stands; matplotlib computes it again on every draw and every
    extent asked (about a quarter of a redraw of 06, 09 or 12). Texts that wrap (the layout depends on
    their place), use TeX or hold math are laid out as always."""
    cache = renderer.__dict__.get("_course_layouts")
    s = text.get_text()
    if cache is None or text.get_wrap() or text.get_usetex() or "$" in s or not isinstance(renderer, RendererAgg):
        return _TEXT_LAYOUT(text, renderer)
    prop = text.get_fontproperties()
    key = (s, _font_key(prop), prop.get_math_fontfamily(), text.get_rotation(), text.get_rotation_mode())
    key += (text.get_horizontalalignment(), text.get_verticalalignment(), text._get_multialignment())
    key += (text.get_linespacing(), text.get_figure(root=True).dpi, renderer.dpi)
    key += (len(font_manager.fontManager.ttflist),)  # a font added since
    found = cache.get(key)
    if found is None:
        if len(cache) >= _TextCachingRenderer.MAX_TEXTS:
            cache.clear()
        found = cache[key] = _TEXT_LAYOUT(text, renderer)
    bbox, lines, corner = found
    return bbox.frozen(), list(lines), corner  # copies: a caller may change what it gets


@contextlib.contextmanager
def _layouts_remembered(renderer):
    """While an explorer draws, every Text lays itself out through `_remembered_layout` (kept on its renderer)."""
    renderer.__dict__.setdefault("_course_layouts", {})
    Text._get_layout = _remembered_layout
    try:
        yield
    finally:
        Text._get_layout = _TEXT_LAYOUT


def _caching_renderer(canvas) -> RendererAgg:
    """The canvas's Agg renderer, drawing texts through `_TextCachingRenderer` (a new renderer, made
    when the canvas's size or dpi changes, is switched too)."""
    renderer = canvas.get_renderer()
    if type(renderer) is RendererAgg:
        renderer.__class__ = _TextCachingRenderer
    while isinstance(renderer._renderer, _GlyphRecorder | _Paints):  # left by a draw outside the lock: later draws
        renderer._renderer, canvas._course_left = renderer._renderer.real, True  # go on, without the glyphs, kept
        renderer.__dict__.pop("_course_glyphs", None)  # pixels and PNGs it may have mixed up (Explorer.render_png)
    real = renderer._renderer  # draw methods bound to a _Paints (`_painting_alone`) or a draw_without_rendering's
    for name in [n for n, f in vars(renderer).items() if n[:5] == "draw_" and getattr(f, "__self__", 0) is not real]:
        delattr(renderer, name)  # no-ops, left the same way, are bound to Agg again
        canvas._course_left = True  # on the canvas: a savefig at another dpi makes a new renderer
    renderer._update_methods()
    return renderer


def _draw_nothing(renderer) -> None:
    return None


def _artists(artist):
    """The artist and everything inside it, as ``findobj`` walks them, but an axis gives the ticks it has
    instead of asking its locator for the current ones (``Axis.get_children``: most of a walk's time)."""
    stack = [artist]
    while stack:
        a = stack.pop()
        yield a
        if isinstance(a, Axis):
            stack += [a.label, a.offsetText, *a.majorTicks, *a.minorTicks]
        else:
            stack += a.get_children()
            if isinstance(a, Cell):  # a table cell draws its text, which is not among its children
                stack.append(a.get_text())
            if isinstance(a, Text):  # drawn by the text, not among its children
                stack += [p for p in (a.get_bbox_patch(), getattr(a, "arrow_patch", None)) if p is not None]


def _touched(artist) -> bool:
    """Whether update() changed this artist or anything inside it (a legend's texts, a container's bars)."""
    return any(a.stale for a in _artists(artist))


def _unmarked_state(artist, leaf: bool) -> tuple | None:
    """What a setter may change without marking the artist stale (`Explorer._mark_unmarked_changes`): the
    artist's attributes and its font's (compared by identity: matplotlib's setters assign new objects:
    set_paths, set_path, set_capstyle, set_offset_transform, set_parse_math, set_math_fontfamily, an axline's
    set_slope), its data array and, for a leaf, the matrices of its affine transforms other than its
    containers' own (compared by value: an image's array or an Affine2D changed in place, inside a sum too).
    None for a figure, subfigure or axes: what changes in them is in the layout key."""
    if isinstance(artist, Figure | SubFigure | Axes):
        return None
    attributes = vars(artist)
    font = attributes.get("_fontproperties")
    values = ()
    if isinstance(artist, ScalarMappable) and artist.get_array() is not None:
        array = np.ma.asarray(artist.get_array())
        values = (array.dtype.str, array.shape, array.data.tobytes(), np.ma.getmaskarray(array).tobytes())
    if leaf:  # an artist inside a leaf (a tick label, a legend's text) is placed by that leaf
        boxes = (artist.axes, artist.get_figure(root=False))
        own = [getattr(b, n, None) for b in boxes for n in ("transData", "transAxes", "transSubfigure")]
        for name in ("_transform", "_patch_transform", "_offset_transform"):
            t = attributes.get(name)  # the containers' own transforms are in the layout key
            if getattr(t, "is_affine", False) and not any(t is o for o in own):
                values += (t.get_matrix().tobytes(),)
    return tuple(attributes), tuple(attributes.values()) + (tuple(vars(font).values()) if font else ()), values


def _tick_key(axis) -> tuple:
    """An axis's tick places, labels and offset text as its locator and formatter give them now: a locator or formatter
    changed in place (locator_params, ticklabel_format, a FuncFormatter reading the values) marks nothing stale."""
    key = ()
    for which in (axis.major, axis.minor):
        locs = np.asarray(which.locator(), float)
        key += (locs.tobytes(), tuple(which.formatter.format_ticks(locs)), which.formatter.get_offset())
    return key


def _containers(figure: Figure) -> list:
    """The figure, its subfigures and every axes (insets too): the artists that draw their children."""
    found, stack = [], [figure]
    while stack:
        box = stack.pop()
        found.append(box)
        stack += [c for c in box.get_children() if isinstance(c, Axes | SubFigure)]
    return found


def _tree(figure: Figure) -> dict:
    """{id(leaf): (leaf, the containers that draw it, outermost first)} for every artist a figure's draw
    reaches one by one. Only a Figure, a SubFigure and an Axes (an inset too) draw their children
    themselves (`_containers`, which lists a parent before its children); any other artist (an Axis with
    its ticks, a legend, a text with its arrow) is a leaf."""
    leaves, chains = {}, {id(figure): (figure,)}
    for box in _containers(figure):
        for child in box.get_children():
            if isinstance(child, Axes | SubFigure):
                chains[id(child)] = (*chains[id(box)], child)
            else:
                leaves[id(child)] = (child, chains[id(box)])
    return leaves


@contextlib.contextmanager
def _drawing_as(replaced: dict, name: str = "draw"):
    """Each object in `replaced` ({key: (object, function)}) has its method `name` replaced by the function
    while inside: an instance attribute hides the class's method (matplotlib calls ``artist.draw(renderer)``
    and ``self._update_title_position(renderer)``)."""
    missing, kept = object(), []
    for obj, function in replaced.values():
        kept.append((obj, obj.__dict__.get(name, missing)))
        setattr(obj, name, function)
    try:
        yield
    finally:
        for obj, old in kept:
            if old is missing:
                delattr(obj, name)
            else:
                setattr(obj, name, old)


def _title_axes(ax) -> set:
    """The axes whose axes Axes._update_title_position measures to place `ax`'s titles."""
    siblings = ax.get_figure(root=False)._align_label_groups["title"].get_siblings(ax)
    return {ax, *ax.child_axes, *ax._twinned_axes.get_siblings(ax), *siblings}


def _titles_placed(ax, renderer) -> None:
    """Axes._update_title_position, without asking each y axis for its tight box: matplotlib asks only to
    update the axis's offset text, which stays as the last draw left it while the axis is not drawn again
    (the slowest part of placing a title: every tick label is measured)."""
    axes = {id(a.yaxis): (a.yaxis, _draw_nothing) for a in _title_axes(ax)}
    with _drawing_as(axes, "get_tightbbox"):
        type(ax)._update_title_position(ax, renderer)


def _draw_figure(figure: Figure, renderer) -> None:
    """What Figure.draw paints, in its order, without running its layout engine or its draw event."""
    figure.patch.draw(renderer)
    _draw_list_compositing_images(renderer, figure, figure._get_draw_artists(renderer), figure.suppressComposite)


def _paints_twice(name: str, args: tuple) -> bool:
    """Whether one call of Agg's C renderer may paint a pixel twice (a paste reproduces one paint only): a
    path or a marker both filled and stroked (or hatched), several markers, paths, quads or triangles. A
    path with all its points on one line (a tick mark) fills nothing."""
    if name in ("draw_text_image", "draw_image"):
        return False
    if name == "draw_quad_mesh":  # cells with neither edges nor antialiasing nor transparency: painted once
        faces, edges = np.asarray(args[7]), np.asarray(args[9])
        stroked = edges.size > 0 and edges[..., 3].max() > 0 and args[0].get_linewidth() > 0
        return bool(args[8]) or stroked or faces.size == 0 or faces[..., 3].min() < 1
    if name not in ("draw_path", "draw_markers"):
        return True
    gc, path = args[0], args[1]
    face = args[5 if name == "draw_markers" else 3] if len(args) > (5 if name == "draw_markers" else 3) else None
    points = path.vertices - path.vertices[:1]
    fills = face is not None and len(points) > 2 and int(np.linalg.matrix_rank(points)) > 1
    paints = int(fills) + int(gc.get_hatch() is not None) + int(gc.get_linewidth() > 0)
    return paints > 1 or (name == "draw_markers" and len(args[3].vertices) > 1)


class _Paints:
    """Stands in for Agg's C renderer while leaves are drawn one paint at a time on a cleared canvas: after
    each call the pixels painted are kept (`found`: (places, RGBA as int64) per call) and cleared again,
    and `twice` says whether a call may have painted a pixel twice (`_paints_twice`)."""

    NAMES = ("draw_path", "draw_markers", "draw_path_collection", "draw_quad_mesh", "draw_gouraud_triangles")
    NAMES += ("draw_image", "draw_text_image")

    def __init__(self, real, rgba: np.ndarray):
        self.real, self.rgba, self.found, self.twice = real, rgba, [], False

    def __getattr__(self, name):
        method = getattr(self.real, name)
        if name not in self.NAMES:
            return method

        def paint(*args, **kwargs):
            out = method(*args, **kwargs)
            height, width, _ = self.rgba.shape
            if name == "draw_text_image" and args[3] == 0:  # a glyph image: rows y - h .. y - 1, columns x ..
                h, w = args[0].shape[:2]
                rows = slice(max(args[2] - h - 1, 0), max(min(args[2] + 1, height), 0))
                cols = slice(max(args[1] - 1, 0), max(min(args[1] + w + 1, width), 0))
            else:
                rows, cols = slice(0, height), slice(0, width)
            box = self.rgba[rows, cols]
            found = np.nonzero(box[..., 3])
            places = (found[0] + rows.start) * width + found[1] + cols.start
            self.found.append((places, box[found].astype(np.int64)))
            box[found] = 0
            self.twice = self.twice or _paints_twice(name, args)
            return out

        return paint


@contextlib.contextmanager
def _painting_alone(renderer, rgba: np.ndarray):
    """Inside, the renderer paints through a `_Paints` (Python's calls reach the C renderer as
    ``renderer._renderer.draw_*``, and five methods bound to it once in ``_update_methods``)."""
    real = renderer._renderer
    paints = renderer._renderer = _Paints(real, rgba)
    bound = {n: renderer.__dict__[n] for n in _Paints.NAMES if n in renderer.__dict__}
    renderer.__dict__.update({name: getattr(paints, name) for name in bound})
    try:
        yield paints
    finally:
        renderer._renderer = real
        renderer.__dict__.update(bound)


def _layer(places: np.ndarray, colours: np.ndarray) -> tuple:
    """A layer to paste: (opaque places, their pixels as uint32; other places, their RGBA as int64)."""
    opaque = colours[:, 3] == 255
    solid = np.ascontiguousarray(colours[opaque].astype(np.uint8)).view(np.uint32).ravel()
    return places[opaque], solid, places[~opaque], colours[~opaque].astype(np.int64)


def _paste(rgba: np.ndarray, layer: tuple) -> None:
    """Paint a layer (no place painted twice) over the canvas as Agg paints: an opaque pixel is copied, any
    other blended as matplotlib's fixed_blender_rgba_plain blends. A pixel painted once on a cleared canvas
    holds that paint's colour and alpha exactly, so the bytes are a whole draw's."""
    opaque, solid, places, src = layer
    rgba.reshape(-1, 4).view(np.uint32).ravel()[opaque] = solid
    if len(places):
        flat = rgba.reshape(-1, 4)
        dst = flat[places].astype(np.int64)
        sa, da = src[:, 3:], dst[:, 3:]
        rgb = dst[:, :3] * da
        alpha = ((sa + da) << 8) - sa * da
        out = np.empty_like(dst)
        out[:, 3:] = alpha >> 8
        out[:, :3] = (((src[:, :3] << 8) - rgb) * sa + (rgb << 8)) // alpha
        flat[places] = out


def _dependents(figure: Figure) -> list:
    """Artists placed from other artists, which no setter marks changed when those move: annotations
    whose coordinates name an artist or a function, arrows tied to patches, connection patches, legends
    that find their own place (loc="best"), annotation boxes, shadows, artists clipped to a patch."""
    from matplotlib.legend import Legend
    from matplotlib.offsetbox import AnnotationBbox
    from matplotlib.patches import ConnectionPatch, FancyArrowPatch, Shadow

    def free(coords) -> bool:
        return all(free(c) for c in coords) if isinstance(coords, tuple) else isinstance(coords, str | Transform)

    def default_clip(a):  # the axes box an artist is clipped to by default (a figure's axes is a list)
        return getattr(a.axes, "patch", None) if isinstance(a.axes, Axes) else None

    found, owned = [], set()  # owned: a text's arrow, placed by the text (which counts itself)
    for a in _artists(figure):
        if isinstance(a, Text):
            owned.add(id(getattr(a, "arrow_patch", None)))
        if id(a) in owned:
            continue
        if isinstance(a, Annotation):
            if not (free(a.xycoords) and free(a.anncoords)):
                found.append(a)
        elif isinstance(a, ConnectionPatch | AnnotationBbox) or (
            isinstance(a, FancyArrowPatch) and (a.patchA is not None or a.patchB is not None)
        ):
            found.append(a)
        elif isinstance(a, Legend) and a._loc in (0, "best"):  # matplotlib keeps the code privately
            found.append(a)
        elif isinstance(a, Shadow) or getattr(a.get_clip_path(), "_patch", None) not in (None, default_clip(a)):
            found.append(a)  # a shadow reads its patch when drawn; a clip path follows its patch's path
    return found


class Drawing:
    """A picture the static player draws itself, for whatever values the controls show, where the
    controls' joint grid is too large to precompute (01's four sliders of 101 steps: 101**4 states).

    kind    the player's drawer (tools/explorer_player.py, COURSE_DRAWERS), its spec (tools/explorer_export.py SPECS)
    moving  the artists the drawer draws; they are left out of the one frame exported, the background
            the drawer draws on
    params  what the spec reads on export, after the figure was fitted and drawn: ``SPECS[kind](figure, **params)``
    """

    def __init__(self, kind: str, moving: list, params: Mapping[str, object] | None = None):
        if not moving:
            raise ValueError("a Drawing needs the artists the browser draws (moving), none were given")
        self.kind, self.moving, self.params = kind, list(moving), dict(params or {})


class _LockedCanvas(FigureCanvasAgg):
    """An explorer's canvas: a cell's draw or savefig of its figure waits for an explorer draw (`_DRAWING`). Still
    outside the lock: Agg's print_png, print_jpg, ... called directly (not through print_figure),
    FigureCanvasAgg.draw(canvas) and Figure.draw_without_rendering."""

    def draw(self):
        with _DRAWING:
            _caching_renderer(self)  # a recorder left by a draw outside the lock is taken off first
            return super().draw()

    def print_figure(self, *args, **kwargs):
        with _DRAWING:
            _caching_renderer(self)
            return super().print_figure(*args, **kwargs)


class Explorer:
    """Sliders (any ipywidgets value widgets) that redraw one matplotlib figure in place.

    figure   a figure built once; it is detached from pyplot so the inline backend never shows it
    update   ``update(**values)`` changes the figure's artists for the controls' current values
    controls ``{name: widget}``; names are the keyword arguments of ``update``
    frames   optional ``{name: [values]}``: the values each control plays without a kernel (the static
             site and decks); controls left out get tools/explorer_export.py's ``default_frames(widget)``
    max_frames  the most frames precomputed for this explorer: the controls' joint grid when it has at
             most this many points, else one line per control (coarser ``frames`` keep the joint grid)
    drawing  optional `Drawing`: the static player draws the picture itself for any values (every slider
             step, tools/explorer_export.py's `every_value`) on one exported background, not swapping frames
    """

    def __init__(
        self,
        figure: Figure,
        update: Callable[..., object],
        controls: Mapping[str, object],
        *,
        dpi: float | None = None,
        frames: Mapping[str, list] | None = None,
        max_frames: int = MAX_FRAMES,
        drawing: Drawing | None = None,
    ):
        import ipywidgets as widgets

        if not isinstance(figure, Figure):
            raise TypeError(f"figure must be a matplotlib Figure, got {type(figure).__name__}")
        if not callable(update):
            raise TypeError(f"update must be callable, got {type(update).__name__}")
        if not controls:
            raise ValueError("an explorer needs at least one control (a slider or a selector)")
        if not isinstance(controls, Mapping) or not all(isinstance(w, widgets.ValueWidget) for w in controls.values()):
            raise TypeError(f"controls must be {{name: ipywidgets value widget (IntSlider...)}}, got {controls!r:.60}")
        try:  # the names reach update as keyword arguments
            inspect.signature(update).bind(**dict.fromkeys(controls))
        except (TypeError, ValueError) as err:  # ValueError: a builtin without a signature
            raise TypeError(f"update must take the control names ({', '.join(controls)}) as keywords: {err}") from None
        if dpi is not None and (isinstance(dpi, bool) or not isinstance(dpi, numbers.Real) or not 0 < dpi < math.inf):
            raise ValueError(f"dpi must be a positive number (or None: the figure's own), got {dpi!r}")
        frames = {} if frames is None else frames
        if not isinstance(frames, Mapping) or not all(
            isinstance(v, Sequence | np.ndarray) and not isinstance(v, str | bytes) and np.ndim(v) and len(v)
            for v in frames.values()
        ):
            raise TypeError(f"frames must be {{name: [values]}}, a non-empty list or array each, got {frames!r:.60}")
        if unknown := sorted(set(frames) - set(controls)):
            raise ValueError(f"frames for unknown control(s) {unknown}; the controls are {list(controls)}")
        if drawing is not None and not isinstance(drawing, Drawing):
            raise TypeError(f"drawing must be a helpers.widgets.Drawing, got {type(drawing).__name__}")
        if isinstance(max_frames, bool) or not isinstance(max_frames, numbers.Integral) or max_frames < 1:
            raise ValueError(f"max_frames must be a positive int, got {max_frames!r}")
        plt.close(figure)  # owned by the widget from now on, never shown twice by the inline backend
        if dpi:  # savefig's default dpi ("figure") is the one the figure was made with: this one from now on
            figure.set_dpi(dpi)
            figure._original_dpi = dpi
        _LockedCanvas(figure)  # renders in memory whatever backend made the figure
        self.figure, self.update, self.controls, self.drawing = figure, update, dict(controls), drawing
        self.frames_given, self.first_values = dict(frames), self.values  # tools/explorer_export.py: frames_of
        self.max_frames, self.dpi = max_frames, dpi or figure.dpi
        self._layout, self._blit_state = None, None  # see _blit
        self._order, self._chains, self._containers = [], [], []  # what the last whole draw drew (_draw_whole)
        self._parts = {}  # kept pixels: ("before", k) the canvas before leaf k, ("leaf", k) its layers (_blit)
        self._placed = set()  # places in _order of artists placed from others (_dependents), per layout
        self._ticks = {}  # id(axis) -> its ticks and tick labels at the last render (_tick_key)
        self._unmarked = {}  # id(artist) -> (artist, its _unmarked_state after the last render)
        self._forget_shown()  # _shown: values -> PNG already drawn for them (see redraw)
        self.renders = 0  # pictures put in the widget (drawn, or taken from those already drawn)
        self.drawn = 0  # of these, drawn by matplotlib
        self.drawn_ahead = 0  # PNGs drawn ahead of a hand (`_draw_ahead`), not shown when drawn
        self._ahead = None  # the values being drawn ahead
        self._ahead_error = None  # a BlitMismatch drawing ahead on a loop: raised by the next redraw
        self._queue, self._filling = [], {}  # values to draw ahead in a kernel; each loop's timer handle (_fill)
        self.last = None  # what update() returned for the last values (tests and notebooks read it)
        # Shown at the figure's own pixel width (never wider than its cell or slide), so a small
        # figure is not stretched to the slide's width in the static decks.
        layout = widgets.Layout(width=f"{round(figure.get_figwidth() * self.dpi)}px", max_width="100%")
        with warnings.catch_warnings():  # ipywidgets 8.1.2's add_traits (anywidget's __init__) uses a deprecated call
            warnings.simplefilter("ignore", DeprecationWarning)
            self.image = _picture_class()(controls=list(self.controls.values()), layout=layout)
        # The class marks an Explorer in the page (tests/test_browser.py checks each explorer has it).
        self.widget = widgets.VBox([*self.controls.values(), self.image])
        self.widget.add_class("course-explorer")
        self.redraw()
        # Margins from the texts the first update drew, once: every later frame keeps them.
        self.fitted = fit_figure(figure, drawn=True)  # redraw just drew the canvas
        if self.fitted:
            self._forget_shown()
            self._show(self.values, self._remember(self.values, self.render_png()))
        if os.environ.get(CHECK_ENV) == "1" and (outside := _overflow(figure)[1]):
            raise ValueError(f"explorer text leaves the canvas: {'; '.join(outside)}")
        if os.environ.get(FRAMES_ENV):  # the site build (tools/explorer_frames.py): never in a learner's kernel
            from tools.explorer_export import export_frames

            export_frames(self, os.environ[FRAMES_ENV])
        elif os.environ.get(CHECK_ENV) != "1":  # there every blit is compared with a whole draw anyway
            self._prime()
            with contextlib.suppress(RuntimeError):  # in a kernel: a selector's or checkbox's other values, ahead
                loop = asyncio.get_running_loop()
                self._queue = self._values_near(self.values, None, None, 0, 0)
                self._filling[loop] = loop.call_later(self.FILL_GAP_S, self._fill, loop)
        for widget in self.controls.values():  # last: an explorer whose construction failed leaves no listener
            if hasattr(widget, "continuous_update"):
                widget.continuous_update = True
            widget.observe(self._on_change, names="value")
            if hasattr(widget, "_options_values"):  # the front end keys a selector by index and label: forget
                widget.observe(lambda _: self.image.send({"forget": True}), names="options")

    def _prime(self) -> None:
        """The first blit's work done while the cell runs, not on a hand's first move (two or three whole draws):
        a whole draw (fitting marks ticks; a colorbar's axes is placed by its first draw), then leaf 0 drawn as if
        changed: every leaf's layers, and the comparison that decides whether this figure blits (`_blit`)."""
        with _DRAWING, _layouts_remembered(_caching_renderer(canvas := self.figure.canvas)):
            self._draw_whole(canvas)
            self._layout, self._parts = self._layout_key(), {}
            if self._order and self._layout is not None:
                self._blit_or_not(canvas, [0])
        self._keep_unmarked()

    @property
    def values(self) -> dict:
        return {name: w.value for name, w in self.controls.items()}

    @property
    def png(self) -> bytes:
        return bytes(self.image.value)

    def set(self, **values) -> None:
        """Move controls as a learner would (each change redraws once, through the observer)."""
        if unknown := set(values) - set(self.controls):
            raise KeyError(f"unknown control(s) {sorted(unknown)}; this explorer has {sorted(self.controls)}")
        for name, value in values.items():
            self.controls[name].value = value

    def redraw(self) -> None:
        """update() for the controls' values, then the picture: drawn, or the PNG drawn before for the same
        values (a drag back over the track shows what it showed on the way there without drawing).

        update() runs either way, so the figure, `last` and what a closure in update keeps always belong to
        the values shown. A figure left undrawn keeps its artists marked stale, and the next draw draws them
        (`_blit` redraws every artist changed since the canvas was last drawn). An update() must give the
        same picture for the same values (the site's frames and tests/test_widgets.py rely on it too)."""
        with _DRAWING:  # JupyterLab sends a hand's moves to a kernel subshell: another thread than the cells'
            if self._ahead_error is not None:  # raised in a loop's callback, it reached only the kernel's log
                error, self._ahead_error = self._ahead_error, None
                raise error
            values = self.values
            self.last = self.update(**values)
            png = self._remembered(values)
            if png is None:
                png = self._remember(values, self.render_png())
                self.drawn += 1
            self._show(values, png)
            self.renders += 1

    MAX_SHOWN_BYTES = 32 * 2**20  # PNGs kept per explorer (11's 144 frames take about 5 MB)
    FILL_GAP_S = 0.01  # before each draw ahead in a kernel (`_fill`): a message that came meanwhile goes first

    def _shown_key(self, values: dict):
        # Exact values: a front end's 0.30000000000000004 is not 0.3 (an update may print either).
        key = (tuple(values.items()), tuple(self.figure.bbox.bounds), self.figure.dpi)
        with contextlib.suppress(TypeError):  # a selector whose values cannot be dict keys: always drawn
            hash(key)
            return key
        return None

    def _remembered(self, values: dict) -> bytes | None:
        if self.figure.canvas.__dict__.get("_course_left"):  # a cell's draw or savefig took a recorder off
            self._forget_shown()  # the kept PNGs may be mixed up (render_png drops the kept pixels and the flag)
        png = self._shown.get(key := self._shown_key(values))  # None (values not hashable) is never a key
        if png is not None:
            self._shown.move_to_end(key)
        return png

    def _remember(self, values: dict, png: bytes) -> bytes:
        if (key := self._shown_key(values)) is not None:
            self._shown_bytes += len(png) - len(self._shown.pop(key, b""))
            self._shown[key] = png
            while self._shown_bytes > self.MAX_SHOWN_BYTES and self._shown:
                self._shown_bytes -= len(self._shown.popitem(last=False)[1])
        return png

    def _forget_shown(self) -> None:
        self._shown, self._shown_bytes = OrderedDict(), 0
        if hasattr(self, "image"):  # the front end's kept frames too (explorer_picture.js)
            self.image.send({"forget": True})

    def _front_key(self, values: dict) -> str:
        """The key the front end keeps a frame under (explorer_picture.js, heldValue): the figure's size and each
        control's value, a selector's as [index, label]; "" for values it cannot key (another widget, not finite)."""
        held = []
        for name, widget in self.controls.items():
            value, kind = values[name], widget._model_name.removesuffix("Model")
            if hasattr(widget, "_options_values"):
                if value not in (options := list(widget._options_values)):
                    return ""
                held.append([(index := options.index(value)), widget._options_labels[index]])
            elif kind not in _FRONT_KINDS or not (isinstance(value, bool) or math.isfinite(value)):
                return ""
            else:
                held.append(value)
        return json.dumps([self._size(), held], ensure_ascii=False)

    def _size(self) -> str:
        return "{!r}x{!r}@{!r}".format(*map(float, self.figure.bbox.size), float(self.figure.dpi))

    def _show(self, values: dict, png: bytes) -> None:
        with self.image.hold_sync():  # one message: the front end keeps the frame under its key
            self.image.size, self.image.key, self.image.value = self._size(), self._front_key(values), png

    def render_png(self, full: bool = False) -> bytes:
        """The figure as PNG: the Agg canvas redrawn in place, encoded with low compression (encoding time matters more
        than bytes on a local kernel; savefig draws the same pixels, compressed harder). Only what update() changed is
        redrawn over a kept background where that gives the same pixels (`_blit`); `full` draws the whole figure."""
        with _DRAWING:
            canvas = self.figure.canvas  # read under the lock: a savefig to another format swaps it meanwhile
            self._mark_unmarked_changes()
            with _layouts_remembered(_caching_renderer(canvas)):
                if canvas.__dict__.pop("_course_left", False):  # a recorder was left: what was kept may be wrong
                    self._parts = {}
                    self._forget_shown()
                changed = self._changed()
                if full or not changed or not self._blit_or_not(canvas, changed):
                    self._draw_whole(canvas)
            self._keep_unmarked()
            return self._png(canvas)

    def _mark_unmarked_changes(self) -> None:
        """Changes some setters make without marking the artist stale (Collection.set_array and set_paths,
        PathPatch.set_path, Text.set_math_fontfamily, ...): each artist's `_unmarked_state` is compared with
        the one kept after the last render; an artist whose state differs is marked changed."""
        leaves = _tree(self.figure)
        for artist in _artists(self.figure):
            now = _unmarked_state(artist, id(artist) in leaves)
            was, old = self._unmarked.get(id(artist), (None, None))
            if now is None or (was is artist and old[::2] == now[::2] and all(map(operator.is_, old[1], now[1]))):
                continue  # names and values equal, the same objects in the attributes
            artist.stale = True

    def _keep_unmarked(self) -> None:
        """After a render: every artist's `_unmarked_state` as drawn (`_mark_unmarked_changes` compares with it),
        and nothing stale (what the next update() changes is what is stale then)."""
        kept, leaves = {}, _tree(self.figure)
        for artist in _artists(self.figure):
            artist.stale = False
            if (state := _unmarked_state(artist, id(artist) in leaves)) is not None:
                kept[id(artist)] = (artist, state)
        self._unmarked = kept

    @staticmethod
    def _png(canvas) -> bytes:
        """The canvas's RGBA pixels as a PNG: rows unfiltered, deflated at level 1. A third of the time
        Pillow's encoder takes at compress_level=1 (it filters every row), and no larger on these
        charts (flat colours, few gradients); any PNG decoder reads it (tests decode it with Pillow)."""
        rgba = np.asarray(canvas.buffer_rgba())  # (H, W, 4) uint8, a view of the Agg buffer
        height, width, _ = rgba.shape
        rows = np.zeros((height, 1 + 4 * width), np.uint8)  # each PNG row: filter type 0 (none), then pixels
        rows[:, 1:] = rgba.reshape(height, -1)

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, deflate, no interlace
        body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")
        return b"\x89PNG\r\n\x1a\n" + body

    def _on_change(self, change) -> None:
        moved, snapped, steps = change["owner"], change["new"], _steps(change["owner"])
        hand = bool(moved._property_lock)  # moved by a hand (ipywidgets' set_state), not by code
        # A float a step's value but for rounding (a front end's, code's 0.1 * 3) becomes it (explorer_picture.js too)
        if steps and isinstance(snapped, float) and math.isfinite(snapped):
            value = steps[1](min(max(steps[2](snapped), 0), steps[0] - 1))
            snapped = value if math.isclose(value, snapped, rel_tol=1e-9, abs_tol=1e-12) else snapped
        # Under the drawing lock (every explorer's): a change that came while this handler waited for it (a cell
        # on another thread) is drawn by its own handler, so this one leaves it; the queue of values to draw ahead
        # is emptied first (it was near the last move), and a hand's move refills it (`_draw_ahead`) after its
        # redraw, without a cell's set() coming between the values read and the queue written.
        with _DRAWING:
            if moved.value is not change["new"] and moved.value != change["new"]:
                return
            self._queue, renders = [], self.renders
            if snapped is not change["new"] and snapped != moved.value:  # snapped: set (redrawn by the handler
                moved.value = snapped  # this runs for it; the front end gets the value back)
            if self.renders == renders:  # not snapped, or snapping came to no change
                self.redraw()
            if steps and hand:
                self._draw_ahead(moved, change["old"], steps)

    # A hand mostly moves a control on the same way at the same speed (a key press: one step). After a front end's
    # move, in a kernel (an asyncio loop runs in the handler's thread), the values it may reach next (`_values_near`)
    # are drawn into the kept PNGs, one per FILL_GAP_S timer, in a chain per loop (a message may wait for the draw
    # under way on each). With no loop (a script) only the value as far again, in the handler. Called under the
    # drawing lock (`_on_change`); moves by code draw nothing ahead. update() runs for values nobody chose, then
    # for those shown again: it must do nothing but change the figure.
    def _draw_ahead(self, moved, old, steps) -> None:
        name = next(n for n, w in self.controls.items() if w is moved)
        shown, (count, value_at, position) = self.values, steps
        try:
            here, before = position(shown[name]), position(old)
        except (ValueError, TypeError, ArithmeticError):  # an old value off the list (options changed)
            return
        if here == before:
            return
        ahead = min(max(here + (here - before), 0), count - 1)  # as far again (a key press: one step)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: that one value, now (nothing if it is the value shown: kept)
            self._draw_for(dict(shown, **{name: value_at(ahead)}))
            return
        # A chain per thread's loop (`_fill` pops the queue under the lock): one waiting on a long cell stops no other.
        self._queue = self._values_near(shown, name, steps, here, ahead)
        self._filling = {other: h for other, h in self._filling.items() if not other.is_closed()}
        if loop not in self._filling:
            self._filling[loop] = loop.call_later(self.FILL_GAP_S, self._fill, loop)

    def _values_near(self, shown: dict, name: str, steps: tuple, here: int, ahead: int):
        """The values a hand may reach next: the moved control's value as far again and a step either side of it (an
        unsteady hand), then the values one step away of each other control that is not a slider (a selector, a
        checkbox: a slider's next move, SelectionSlider's too, is seldom one step); name None: these only."""
        way = 1 if ahead >= here else -1
        near = [(name, steps, k) for k in (ahead, ahead + way, ahead - way)] if name else []
        for other, widget in self.controls.items():  # a position off the list: nothing near it
            with contextlib.suppress(ValueError, TypeError, ArithmeticError):
                if other != name and "Slider" not in type(widget).__name__ and (listed := _steps(widget)):
                    near += [(other, listed, listed[2](shown[other]) + d) for d in (1, -1)]
        return [dict(shown, **{n: steps[1](k)}) for n, steps, k in near if 0 <= k < steps[0]]

    def _fill(self, loop) -> None:
        """Draw the next value of `_queue` not kept yet, then give the loop back (up to half the PNG budget)."""
        with _DRAWING:  # the queue is filled on the thread of the last move, maybe not this one's
            self._filling.pop(loop, None)
            while self._queue and self._shown_bytes <= self.MAX_SHOWN_BYTES // 2:
                try:
                    drew = self._draw_for(self._queue.pop(0))  # taken off: a failing update() is tried once
                except BlitMismatch as error:  # COURSE_CHECK_FIGURES=1 found a wrong frame: the next redraw says so
                    self._ahead_error = self._ahead_error or error  # the first, if another loop found one (untested)
                    return
                if drew:
                    self._filling[loop] = loop.call_later(self.FILL_GAP_S, self._fill, loop)
                    return

    def _draw_for(self, target: dict) -> bool:
        """Draw the picture for values a hand has not chosen into the kept PNGs, unless kept already (False);
        the figure is left at the values shown."""
        with _DRAWING:
            shown = self.values
            if self._shown_key(target) is None or self._remembered(target) is not None:
                return False
            try:
                self._ahead = target  # named by a BlitMismatch
                self.update(**target)
                png = self._remember(target, self.render_png())
                if key := self._front_key(target):  # to the front end: shown at once if the hand gets there
                    self.image.send({"keep": key}, buffers=[png])
                self.drawn_ahead += 1
            except Exception as error:  # a value the hand has not chosen: its error shows when the hand gets there
                if isinstance(error, BlitMismatch):  # COURSE_CHECK_FIGURES=1 found a wrong frame: say so
                    raise
            finally:
                self._ahead = None
                self.update(**shown)  # the figure belongs to the values shown again; what changed stays stale
            return True

    # ------------------------------------------------------------------ redraw only what changed
    # Most of a redraw lays out axes, ticks and tick labels a move does not change. A whole draw paints the
    # figure's leaves (`_tree`) one after another, in an order it records. The artists update() changed are
    # the stale ones (setters mark them; every render clears the marks). A frame starts from the pixels a
    # whole draw had just before the first changed leaf, draws each changed leaf, and pastes each run of
    # unchanged leaves between and after them from a layer painted on a cleared canvas (`_paste`, Agg's own
    # blend). Nothing depends on where an artist paints. Kept pixels are dropped once a leaf in them changes.
    # The first blit of an explorer (every one under COURSE_CHECK_FIGURES=1) is compared with a whole draw
    # byte for byte; where that fails, the explorer draws whole from then on.

    def _layout_key(self) -> tuple | None:
        """What decides the order and the places a whole draw gives its leaves and marks nothing stale, for
        the figure, each subfigure and each axes (insets too): sizes, positions, limits and scales (the data
        transform's affine part), what is shown, which children there are, their z-order. None: draw whole
        (a layout engine that may move axes at every draw; a polar, 3D or secondary axis in the figure)."""
        figure = self.figure
        engine = figure.get_layout_engine()
        if not (engine is None or isinstance(engine, PlaceHolderLayoutEngine)):
            return None
        key = (tuple(figure.bbox.bounds), figure.dpi, engine)
        for box in _containers(figure):
            children = box.get_children()
            key += (tuple((id(c), c.get_zorder(), c.get_animated()) for c in children), box.get_visible())
            if isinstance(box, Figure | SubFigure):
                key += (tuple(box.bbox.bounds),)
                continue
            if box.name != "rectilinear" or any(isinstance(c, SecondaryAxis) for c in children):
                return None  # a secondary axis sets its limits from its functions inside its own draw
            key += (tuple(box.get_position().bounds), tuple(box.viewLim.bounds), box.get_xscale(), box.get_yscale())
            key += (box.transData.get_affine().get_matrix().tobytes(), box.axison, box.get_frame_on())
            legend = box.get_legend()
            key += (legend._loc if legend is not None else None,)  # set_loc("best"): placed from others
        return key + (tuple(lg._loc for lg in figure.legends),)

    def _changed(self) -> list[int] | None:
        """The places in the last whole draw's order of the leaves to draw again, or None: draw whole (the first frame
        of a layout, a layout engine that may move axes). Kept pixels holding a changed leaf are dropped. Leaves placed
        from others count as changed whenever anything is; an axes' titles whenever one of them or an axis they are
        placed from changed (Axes.draw places them together, from tick labels: `_title_axes`)."""
        layout = self._layout_key()
        if layout is None or layout != self._layout or not self._order:
            self._layout, self._parts = layout, {}
            return None
        ticks = {id(leaf): _tick_key(leaf) for leaf in self._order if isinstance(leaf, Axis)}
        changed = {
            k
            for k, leaf in enumerate(self._order)
            if _touched(leaf) or ticks.get(id(leaf), 0) != self._ticks.get(id(leaf), 0)
        }
        self._ticks = ticks
        if changed:
            changed |= self._placed
        for k in list(changed):  # an axis label aligned with another axes' (fig.align_xlabels) moves with it
            leaf = self._order[k]
            if isinstance(leaf, Axis) and leaf.axes is not None:
                group = leaf.axes.get_figure(root=False)._align_label_groups.get(leaf.axis_name)
                siblings = group.get_siblings(leaf.axes) if group is not None else []
                aligned = {id(getattr(ax, f"{leaf.axis_name}axis")) for ax in siblings}
                changed |= {i for i, other in enumerate(self._order) if id(other) in aligned}
        moved = {id(leaf.axes) for k, leaf in enumerate(self._order) if k in changed and isinstance(leaf, Axis)}
        drawn = {id(self._order[k]) for k in changed}
        for box in self._containers:  # an axes' three titles stand at the highest one's baseline: all or none
            titles = {id(box.title), id(box._left_title), id(box._right_title)} if isinstance(box, Axes) else set()
            if titles & drawn or (titles and moved & {id(ax) for ax in _title_axes(box)}):
                changed |= {k for k, leaf in enumerate(self._order) if id(leaf) in titles}
        first = min(changed, default=len(self._order))
        self._parts = {
            key: part
            for key, part in self._parts.items()
            if not ((key[0] == "before" and first < key[1]) or (key[0] == "leaf" and key[1] in changed))
        }
        return sorted(changed)

    def _draw_whole(self, canvas) -> None:
        """canvas.draw(), recording the leaves in the order it draws them (`_blit` draws in that order)."""
        leaves, order = _tree(self.figure), []

        def record(leaf, real, renderer):
            order.append(leaf)
            return real(renderer)

        with _drawing_as({k: (leaf, functools.partial(record, leaf, leaf.draw)) for k, (leaf, _) in leaves.items()}):
            canvas.draw()
        self._order, self._chains = order, [leaves[id(leaf)][1] for leaf in order]
        self._ticks = {id(leaf): _tick_key(leaf) for leaf in order if isinstance(leaf, Axis)}  # as just drawn
        self._containers = list({id(box): box for chain in self._chains for box in chain}.values())
        placed = {id(a) for a in _dependents(self.figure)}
        self._placed = {k for k, leaf in enumerate(order) if any(id(a) in placed for a in _artists(leaf))}

    def _draw_some(self, renderer, draws: dict, clear: bool = False) -> None:
        """Draw as a whole draw does, but only leaf k in `draws` ({k: its draw, or a function to call in its
        place}); every other leaf, and every container holding none of them, is skipped. An axes places its
        titles (from its tick labels: the slowest part of Axes.draw) only when one of them is drawn."""
        replaced, wanted, titles = {}, set(), {}
        for k, leaf in enumerate(self._order):
            if k in draws:
                wanted.update(map(id, self._chains[k]))
                if draws[k] is not None:
                    replaced[id(leaf)] = (leaf, draws[k])
                if leaf.axes is not None and leaf in (leaf.axes.title, leaf.axes._left_title, leaf.axes._right_title):
                    titles[id(leaf.axes)] = True
            else:
                replaced[id(leaf)] = (leaf, _draw_nothing)
        kept = {}  # axes drawn with no title drawn: titles left where they are
        drawn = {id(leaf) for k, leaf in enumerate(self._order) if k in draws and draws[k] is None}
        for box in self._containers[1:]:  # the figure first: it is always drawn
            if id(box) not in wanted:
                replaced[id(box)] = (box, _draw_nothing)
            elif isinstance(box, SubFigure):
                continue
            elif id(box) not in titles:
                kept[id(box)] = (box, _draw_nothing)
            elif not any(id(ax.yaxis) in drawn for ax in _title_axes(box)):
                kept[id(box)] = (box, functools.partial(_titles_placed, box))
        if clear:
            renderer.clear()
        with _drawing_as(replaced), _drawing_as(kept, "_update_title_position"):
            _draw_figure(self.figure, renderer)

    def _layers(self, renderer, rgba: np.ndarray, leaves: list[int]) -> None:
        """Keep each leaf's paints, made one at a time on a cleared canvas, as layers: ("leaf", k) -> the
        layers to paste at leaf k's place (consecutive paints that share no pixel make one), or None: draw
        the leaf itself (a call may paint a pixel twice: a filled and edged legend frame, scatter markers)."""
        taken = np.zeros(rgba.shape[0] * rgba.shape[1], bool)

        def alone(k):
            def draw(renderer):
                with _painting_alone(renderer, rgba) as paints:
                    type(self._order[k]).draw(self._order[k], renderer)
                layers, group = [], []
                for places, colours in [] if paints.twice else paints.found:
                    if group and taken[places].any():
                        layers.append(group)
                        group = []
                    group.append((places, colours))
                    taken[places] = True
                layers.append(group)
                for group in layers:
                    for places, _ in group:
                        taken[places] = False
                merged = [
                    _layer(np.concatenate([p for p, _ in g]), np.concatenate([c for _, c in g])) for g in layers if g
                ]
                self._parts[("leaf", k)] = None if paints.twice else merged

            return draw

        rgba[...] = 0
        self._draw_some(renderer, {k: alone(k) for k in leaves})

    def _blit_or_not(self, canvas, changed: list[int]) -> bool:
        """`_blit`; a figure it cannot handle (an error inside it) is drawn whole from then on, except under
        COURSE_CHECK_FIGURES=1, where the error is raised (a case `_blit` should learn)."""
        try:
            return self._blit(canvas, changed)
        except Exception as error:
            if isinstance(error, BlitMismatch) or os.environ.get(CHECK_ENV) == "1":
                raise
            self._blit_state = False
            return False

    MAX_BEFORES = 8  # kept canvases (each the figure's pixels, 1–2 MB) per explorer

    def _blit(self, canvas, changed: list[int]) -> bool:
        """Draw the changed leaves over kept pixels of the rest; False: draw the figure whole."""
        if self._blit_state is False:
            return False
        rgba = np.asarray((renderer := canvas.get_renderer()).buffer_rgba())  # (H, W, 4) uint8, the canvas itself
        first, now = changed[0], set(changed)
        befores = [key for key in self._parts if key[0] == "before"]
        for key in befores[: max(len(befores) - self.MAX_BEFORES, 0)]:  # whole canvases: the oldest go
            del self._parts[key]
        if ("before", first) not in self._parts:
            self._draw_some(renderer, dict.fromkeys(range(first)), clear=True)
            self._parts[("before", first)] = rgba.copy()
        kept = [k for k in range(first, len(self._order)) if k not in now]
        if missing := [k for k in kept if ("leaf", k) not in self._parts]:
            self._layers(renderer, rgba, missing)
        if any(("leaf", k) not in self._parts for k in kept):  # recorded, but not drawn now: the order changed
            return False
        rgba[...] = self._parts[("before", first)]
        draws = dict.fromkeys(changed)
        for k in kept:
            layers = self._parts[("leaf", k)]
            if layers is None or layers:
                draws[k] = layers and (lambda renderer, layers=layers: [_paste(rgba, layer) for layer in layers])
        self._draw_some(renderer, draws)
        checked = os.environ.get(CHECK_ENV) == "1"
        if self._blit_state is None or checked:  # a whole draw's bytes
            blitted = self._png(canvas)
            self._draw_whole(canvas)
            same = blitted == self._png(canvas)
            if (self._blit_state is not None or checked) and not same:
                raise BlitMismatch(
                    f"explorer: a blitted frame differs from a whole draw at {self._ahead or self.values}: update "
                    "changed an artist without a setter (docs/explorer.md, '보이지 않는 것'), "
                    "or _blit misses a case (report it)"
                )
            self._blit_state = same
        return True

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)
