"""The static explorer player: precomputed frames behind the same controls, no kernel, no library.

Used by tools/build_site.py (the course site) and tools/export_slides.py (the offline decks). Each
widget output of an explorer cell is replaced by plain HTML inside ``<div class="course-explorer">``:
a range input per slider (over the frame indices, with the live widget's readout text), a
``<select>`` per dropdown, a checkbox per checkbox, and an ``<img>`` whose ``src`` the inline
script swaps among the frame files on the ``input`` event. The frame is looked up for the full state
of all controls (``courseFrameKey``: the frame key is the controls' value indices joined by ","); the
frames one control move away from the current state are preloaded (and decoded), so a swap is one
attribute change, without holding every frame of a large joint grid in memory. When an explorer has
several controls and only one line per control was computed (``mode: "axes"``, a joint grid over
``Explorer.max_frames``), moving one control puts the others back at their defaults, so the picture
always shows exactly the values the controls show, and a line next to the controls says so.
An explorer with a ``Drawing`` (``mode: "drawn"``, notebook 01's bars) has one exported frame, the
background; the script draws the rest as inline SVG over it for whatever values the controls show
(COURSE_DRAWERS, e.g. "softmax-bars": softmax computed in the page with the largest score subtracted).
A focused control keeps only the arrow keys, Home and End; in a reveal.js deck every other key
(Space, PageDown/PageUp from a clicker, Esc, S, F, N, P) lets go of the focus and drives the deck.
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
NOTE = "그림은 미리 계산해 둔 것입니다. 슬라이더를 움직일 때마다 새로 계산해 그리려면 JupyterLab에서 노트북을 여세요."
DRAWN_NOTE = (
    "막대·값·제목은 브라우저가 슬라이더 값으로 바로 계산해 그립니다(노트북의 소프트맥스와 같은 계산). "
    "matplotlib으로 그린 원래 그림을 보려면 JupyterLab에서 노트북을 여세요."
)
RESETS = "{names} 중 하나를 움직이면 나머지는 처음 값으로 돌아갑니다(그림을 한 번에 하나씩만 미리 계산해 두었습니다)."

PLAYER_CSS = """
.course-explorer { margin: 0.4em 0; font-size: 15px; line-height: 1.4; }
.course-explorer .course-control { display: flex; align-items: center; gap: 0.6em; margin: 0.15em 0; max-width: 640px; }
.course-explorer .course-control label.course-label { flex: 0 0 8.5em; text-align: right; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap; }
.course-explorer input[type=range] { flex: 1 1 auto; min-width: 8em; margin: 0; }
.course-explorer output { flex: 0 0 5em; font-variant-numeric: tabular-nums; }
.course-explorer select { font: inherit; padding: 0.1em 0.3em; }
.course-explorer img.course-frame { display: block; max-width: 100%; height: auto; margin-top: 0.3em; }
.course-explorer .course-explorer-note { margin: 0.2em 0 0; font-size: 13px; color: var(--c-muted, #666); word-break: keep-all; }
.course-explorer .course-explorer-resets { margin: 0.2em 0 0; font-size: 13px; color: #8a4b00; }
.course-explorer .course-control.course-reset { background: #fff3cd; transition: background 0.6s; }
.course-explorer .course-drawn { position: relative; max-width: 100%; margin-top: 0.3em; }
.course-explorer .course-drawn img.course-frame { width: 100%; margin: 0; padding: 0 !important; }
.course-explorer svg.course-drawing { position: absolute; left: 0; top: 0; width: 100%; height: 100%;
  overflow: visible; pointer-events: none; font-family: "DejaVu Sans", "NanumGothic", "Nanum Gothic", sans-serif; }
"""

# The lookup, kept apart so tests can run it without a browser (tests/test_widgets.py, with node).
LOOKUP_JS = r"""
function courseFrameKey(spec, idx, changed) {
  // The frame for the full state of the controls: {key, idx}, or null when there is none. When only
  // one line per control was computed (mode "axes") and the state is off it, the controls other than
  // `changed` go back to their defaults, so the picture always shows the values the controls show.
  var key = idx.join(',');
  if (key in spec.frames) return {key: key, idx: idx.slice()};
  var back = idx.map(function (k, i) { return i === changed ? k : spec.controls[i]['default']; });
  key = back.join(',');
  return key in spec.frames ? {key: key, idx: back} : null;
}
function courseNeighbourKeys(spec, idx) {
  // The frames one control move away from `idx` (idx's own first): what the next input can show.
  var keys = [], seen = {};
  function add(j) { var key = j.join(','); if (key in spec.frames && !(key in seen)) { seen[key] = 1; keys.push(key); } }
  add(idx);
  spec.controls.forEach(function (c, i) {
    for (var k = 0; k < c.labels.length; k++) { var j = idx.slice(); j[i] = k; add(j); }
  });
  return keys;
}
"""

# What a drawn explorer computes, kept apart from the SVG so tests can run it in node against the
# notebook's own Python (tests/test_widgets.py).
DRAW_MATH_JS = r"""
function courseFixed(x, digits) {
  // Python's format(x, '.2f'): the double's exact value rounded, an exact tie to even (toFixed rounds
  // a tie away from zero: 0.125 -> '0.13', Python '0.12'). A double is such a tie exactly when
  // x * 2^(digits+1) is an odd integer; then |x| * 10^digits is exact too.
  var s = x.toFixed(digits), m = x * Math.pow(2, digits + 1);
  if (!(Number.isInteger(m) && Math.abs(m) % 2 === 1)) return s;
  var t = Math.abs(x) * Math.pow(10, digits), k = Math.floor(t);
  var n = k % 2 === 0 ? k : k + 1;
  return (x < 0 ? '-' : '') + (n / Math.pow(10, digits)).toFixed(digits);
}
function courseSoftmaxBars(d, scores) {
  // 01's update(): softmax in float64 with the largest score subtracted, the value labels, the bar
  // colours and the weights panel's title.
  var top = Math.max.apply(null, scores);
  var e = scores.map(function (s) { return Math.exp(s - top); });
  var total = e.reduce(function (a, b) { return a + b; }, 0);
  var w = e.map(function (x) { return x / total; });
  var title = d.title.text;
  if (d.values) {
    var sum = w.reduce(function (a, wi, i) { return a + wi * d.values[i]; }, 0);
    title = d.title.prefix + courseFixed(sum, 2);
  }
  return {
    weights: w,
    labels: w.map(function (x) { return x >= 0.005 ? courseFixed(x, 2) : '<0.01'; }),
    colors: scores.map(function (s) { return s < 0 ? d.scores.negative : d.scores.positive; }),
    title: title
  };
}
"""

PLAYER_JS = (
    LOOKUP_JS
    + DRAW_MATH_JS
    + r"""
var COURSE_DRAWERS = {
  'softmax-bars': function (svg, d) {
    var NS = svg.namespaceURI;  // the SVG namespace, from the element the page parsed
    function el(tag, attrs) {
      var e = document.createElementNS(NS, tag);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      svg.appendChild(e);
      return e;
    }
    function sx(p, x) { return p.box[0] + (x - p.xlim[0]) / (p.xlim[1] - p.xlim[0]) * (p.box[2] - p.box[0]); }
    function sy(p, y) { return p.box[3] - (y - p.ylim[0]) / (p.ylim[1] - p.ylim[0]) * (p.box[3] - p.box[1]); }
    function px(v) { return String(Math.round(v * 100) / 100); }
    var S = d.scores, W = d.weights, T = d.title;
    function bars(p) {
      return p.bars.map(function (b) {
        var x0 = sx(p, b[0]), x1 = sx(p, b[0] + b[1]);
        return el('rect', {x: px(x0), width: px(x1 - x0), y: px(sy(p, 0)), height: '0', 'shape-rendering': 'crispEdges'});
      });
    }
    var scoreBars = bars(S);
    var y0 = sy(S, 0);  // matplotlib draws the zero line over the bars
    el('line', {x1: px(S.box[0]), x2: px(S.box[2]), y1: px(y0), y2: px(y0), stroke: S.zero.color,
                'stroke-width': px(S.zero.width), 'shape-rendering': 'crispEdges'});
    var weightBars = bars(W);
    weightBars.forEach(function (r) { r.setAttribute('fill', W.color); });
    var labels = W.label.x.map(function (x) {
      return el('text', {x: px(sx(W, x)), 'text-anchor': 'middle', 'font-size': px(W.label.size),
                         fill: W.label.color, 'font-weight': W.label.weight});
    });
    var title = el('text', {x: px(T.at[0]), y: px(T.at[1]), 'text-anchor': 'middle', 'font-size': px(T.size),
                            fill: T.color, 'font-weight': T.weight});
    return function (scores) {
      var f = courseSoftmaxBars(d, scores);
      scores.forEach(function (s, i) {
        var y = sy(S, s);
        scoreBars[i].setAttribute('y', px(Math.min(y, y0)));
        scoreBars[i].setAttribute('height', px(Math.abs(y - y0)));
        scoreBars[i].setAttribute('fill', f.colors[i]);
      });
      var base = sy(W, 0);
      f.weights.forEach(function (w, i) {
        var y = sy(W, w);
        weightBars[i].setAttribute('y', px(Math.min(y, base)));
        weightBars[i].setAttribute('height', px(Math.abs(base - y)));
        labels[i].setAttribute('y', px(y - W.label.descent));
        labels[i].textContent = f.labels[i];
      });
      title.textContent = f.title;
      return f;
    };
  }
};
"""
    + r"""
(function () {
  var CONTROL_KEYS = /^(ArrowLeft|ArrowRight|ArrowUp|ArrowDown|Home|End)$/;
  var MODIFIERS = /^(Shift|Control|Alt|Meta|AltGraph|CapsLock)$/;
  var inDeck = !!document.querySelector('.reveal .slides');
  function init(root) {
    if (root.dataset.ready) return;
    var spec = JSON.parse(root.getAttribute('data-explorer'));
    var img = root.querySelector('img.course-frame');
    var inputs = spec.controls.map(function (c, i) { return root.querySelector('[data-control="' + i + '"]'); });
    var outputs = spec.controls.map(function (c, i) { return root.querySelector('output[data-readout="' + i + '"]'); });
    function read(i) {
      var el = inputs[i], c = spec.controls[i];
      if (c.kind === 'checkbox') return el.checked ? c.checked : 1 - c.checked;
      return parseInt(el.value, 10);
    }
    function write(i, k) {
      var el = inputs[i], c = spec.controls[i];
      if (c.kind === 'checkbox') el.checked = (k === c.checked); else el.value = String(k);
      if (c.kind === 'slider') el.setAttribute('aria-valuetext', c.labels[k]);
      if (outputs[i]) outputs[i].textContent = c.labels[k];
    }
    var loaded = {}, keep = [];  // keep: the preloaded images (tests wait for their decode)
    function preload(idx) {
      courseNeighbourKeys(spec, idx).forEach(function (key) {
        if (key in loaded) return;
        var im = new Image(); im.src = spec.frames[key]; loaded[key] = im; keep.push(im);
        if (im.decode) im.decode().catch(function () {});
      });
    }
    var heading = img.alt;
    function describe(idx) {  // the frame's alt text names its values: a screen reader hears the state shown
      img.alt = heading + ' (' + idx.map(function (k, i) {
        var c = spec.controls[i];
        return c.name + ' ' + (c.kind === 'checkbox' ? (k === c.checked ? '켬' : '끔') : c.labels[k]);
      }).join(', ') + ')';
    }
    var draw = spec.mode === 'drawn' ? COURSE_DRAWERS[spec.drawing.kind](root.querySelector('svg.course-drawing'), spec.drawing) : null;
    function show(changed) {
      var idx = spec.controls.map(function (c, i) { return read(i); });
      if (draw) {  // every state is drawn here: no frame to look up, nothing put back
        idx.forEach(function (k, i) { write(i, k); });
        var facts = draw(idx.map(function (k, i) { return spec.controls[i].values[k]; }));
        img.alt = '탐색기 그림: ' + facts.title + '; 가중치 ' + facts.labels.join(', ');
        root.setAttribute('data-frame', idx.join(','));
        return;
      }
      var found = courseFrameKey(spec, idx, changed);
      if (!found) return;
      found.idx.forEach(function (k, i) {
        write(i, k);
        if (k !== idx[i] && inputs[i]) {  // a control put back: flash its row
          var row = inputs[i].closest('.course-control');
          if (row) { row.classList.add('course-reset'); setTimeout(function () { row.classList.remove('course-reset'); }, 700); }
        }
      });
      img.src = spec.frames[found.key]; root.setAttribute('data-frame', found.key);
      describe(found.idx);
      if (spec.mode === 'grid' && document.readyState === 'complete') preload(found.idx);
    }
    inputs.forEach(function (el, i) {
      // The arrows, Home and End move the control and must not also turn a reveal.js slide (reveal
      // listens on document). In a deck every other key (Space, PageDown/PageUp from a clicker, Esc,
      // S, F, N, P) belongs to the deck: reveal ignores keys while an input has focus, so the control
      // lets go of the focus first and the key then reaches reveal (which also stops its default
      // action, so PageDown does not move the slider a page).
      el.addEventListener('keydown', function (e) {
        if (CONTROL_KEYS.test(e.key)) { e.stopPropagation(); return; }
        if (!inDeck || e.key === 'Tab' || e.ctrlKey || e.metaKey || e.altKey || MODIFIERS.test(e.key)) return;
        el.blur();
      });
      el.addEventListener('input', function () { show(i); });
      el.addEventListener('change', function () { show(i); });
    });
    root.dataset.ready = '1';
    if (draw) { show(-1); return; }
    describe(spec.controls.map(function (c, i) { return read(i); }));
    var first = function () { preload(spec.controls.map(function (c, i) { return read(i); })); };
    if (document.readyState === 'complete') first(); else window.addEventListener('load', first);
    root._coursePreloaded = keep;
  }
  function initAll() { document.querySelectorAll('.course-explorer[data-explorer]').forEach(init); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', initAll); else initAll();
})();
"""
)


def head_html() -> str:
    return f'<style type="text/css" id="course-explorer-css">{PLAYER_CSS}</style>\n'


def script_html() -> str:
    return f'<script type="text/javascript" id="course-explorer-js">{PLAYER_JS}</script>\n'


def copy_frames(folder: Path, manifest: dict, out: Path, rel: str) -> dict[str, str]:
    """Copy one explorer's PNGs to out/rel/; return {"i,j,...": "rel/file.png"}."""
    (out / rel).mkdir(parents=True, exist_ok=True)
    urls = {}
    for frame in manifest["frames"]:
        shutil.copyfile(folder / frame["file"], out / rel / frame["file"])
        urls[",".join(map(str, frame["index"]))] = f"{rel}/{frame['file']}"
    return urls


def player_html(manifest: dict, urls: dict[str, str], ident: str) -> str:
    """The static explorer: controls at their defaults and the default frame, wired by PLAYER_JS."""
    controls = []
    spec_controls = []
    for i, c in enumerate(manifest["controls"]):
        k, labels = c["default"], c["labels"]
        cid = f"{ident}-c{i}"
        desc = html.escape(c["description"])
        if c["kind"] == "checkbox":
            checked = c["values"].index(True) if True in c["values"] else 1
            box = " checked" if k == checked else ""
            controls.append(
                f'<div class="course-control course-checkbox"><label class="course-label"></label>'
                f'<label><input type="checkbox" id="{cid}" data-control="{i}" data-name="{html.escape(c["name"])}"{box}> {desc}</label></div>'
            )
            spec_controls.append(
                {"kind": "checkbox", "default": k, "checked": checked, "labels": labels, "name": c["description"]}
            )
            continue
        if c["kind"] == "select":
            options = "".join(
                f'<option value="{j}"{" selected" if j == k else ""}>{html.escape(label)}</option>'
                for j, label in enumerate(labels)
            )
            field = f'<select id="{cid}" data-control="{i}" data-name="{html.escape(c["name"])}">{options}</select>'
        else:
            field = (
                f'<input type="range" id="{cid}" data-control="{i}" data-name="{html.escape(c["name"])}" min="0" max="{len(labels) - 1}" step="1" '
                f'value="{k}" aria-valuetext="{html.escape(labels[k])}">'
                f'<output data-readout="{i}" for="{cid}">{html.escape(labels[k])}</output>'
            )
        controls.append(
            f'<div class="course-control course-{c["kind"]}"><label class="course-label" for="{cid}" '
            f'title="{desc}">{desc}</label>{field}</div>'
        )
        spec_controls.append({"kind": c["kind"], "default": k, "labels": labels, "name": c["description"]})
        if manifest["mode"] == "drawn":  # the drawer gets the values themselves
            spec_controls[-1]["values"] = c["values"]
    default_key = ",".join(str(c["default"]) for c in manifest["controls"])
    spec = {"mode": manifest["mode"], "controls": spec_controls, "frames": urls}
    if manifest["mode"] == "drawn":
        spec["drawing"] = manifest["drawing"]
    if manifest["mode"] == "axes" and len(manifest["controls"]) > 1:  # say which control resets which
        names = "·".join(html.escape(c["description"]) for c in manifest["controls"])
        controls.append(f'<p class="course-explorer-resets" role="note">{RESETS.format(names=names)}</p>')
    width = manifest.get("width") or ""
    style = f' style="width: {html.escape(width)}"' if width.endswith("px") else ""
    picture = f'<img class="course-frame" src="{urls[default_key]}" alt="탐색기 그림"{style}>'
    note = NOTE
    if manifest["mode"] == "drawn":  # the background, and the SVG the script draws on it (same pixels)
        w, h = manifest["drawing"]["size"]
        picture = (
            f'<div class="course-drawn"{style}><img class="course-frame" src="{urls[default_key]}" alt="탐색기 그림">'
            f'<svg class="course-drawing" viewBox="0 0 {w} {h}" aria-hidden="true"></svg></div>'
        )
        note = DRAWN_NOTE
    return (
        f'<div class="course-explorer course-static-explorer" id="{ident}" data-frame="{default_key}" '
        f"data-explorer='{html.escape(json.dumps(spec, ensure_ascii=False), quote=True)}'>\n"
        + "\n".join(controls)
        + f'\n{picture}\n<p class="course-explorer-note">{note}</p>\n</div>'
    )


def stored_pictures(nb) -> dict[str, str]:
    """{model id of an explorer's box: its picture's PNG (base64)} from the notebook's stored widget state."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    pictures = {}
    for box_id, box in state.items():
        for child in box.get("state", {}).get("children") or []:
            for buffer in state.get(str(child).removeprefix("IPY_MODEL_"), {}).get("buffers", []):
                if buffer.get("path") == ["value"] and buffer.get("encoding") == "base64":
                    pictures[box_id] = buffer["data"]
    return pictures


def replace_widgets(nb, explorers: list[tuple[Path, dict]], out: Path, rel_prefix: str, stem: str) -> int:
    """Put a static player in place of each explorer's widget output (k-th widget output = k-th
    explorer) and drop the notebook's stored widget state; return how many were replaced. A widget output
    with no frames (none computed: `--frames reuse` or `off`) becomes its stored first picture: the picture
    widget's front end (anywidget) is not in the page's widget renderer, which would fetch it from a CDN."""
    shutil.rmtree(out / rel_prefix / stem, ignore_errors=True)  # frames of an older build
    k, pictures = 0, stored_pictures(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            if k < len(explorers):
                folder, manifest = explorers[k]
                urls = copy_frames(folder, manifest, out, f"{rel_prefix}/{stem}/{k}")
                output["data"] = {"text/html": player_html(manifest, urls, f"explorer-{stem[:2]}-{k}")}
                k += 1
            elif view.get("model_id") in pictures:
                output["data"] = {"image/png": pictures[view["model_id"]], "text/plain": "<explorer: first picture>"}
    nb.metadata.pop("widgets", None)
    return k
