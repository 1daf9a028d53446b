"""The explorer's picture in a live front end: helpers/explorer_picture.js keeps the frames the kernel sends and
shows a kept one as soon as the controls reach its values, before the kernel answers.

The kernel side (`Explorer._front_key`, `_show`, the frames drawn ahead) is checked in Python. The front end's
module runs in headless Chromium against stand-ins for anywidget's model and host (no JupyterLab): its keys must
be the kernel's for every value a hand can leave (a FloatSlider's float off its step, a log slider, selectors,
checkboxes), and its view must show the right frame whatever order the hand's moves and the kernel's frames
come in. tests/test_browser.py (`test_a_kept_frame_shows_while_the_kernel_is_busy`) moves it in JupyterLab.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from helpers.widgets import Explorer
from tools.browser_support import ROOT, chromium

MODULE = ROOT / "helpers" / "explorer_picture.js"
PNG = bytes.fromhex("89504e470d0a1a0a")


def tiny(controls: dict) -> Explorer:
    """An explorer whose picture shows each value (a title), drawn fast."""
    fig = plt.figure(figsize=(1.5, 0.5), dpi=30)
    label = fig.text(0.5, 0.5, "", fontsize=6, ha="center", va="center")

    def update(**values):
        label.set_text(f"{hash(repr(sorted(values.items()))) % 1000:03d}")

    return Explorer(fig, update, controls)


def test_the_kernel_keys_each_kind_of_control():
    ex = tiny(
        {
            "n": widgets.IntSlider(value=3, min=1, max=9),
            "x": widgets.FloatSlider(value=0.3, min=0, max=1, step=0.1),
            "tau": widgets.FloatLogSlider(value=1.0, base=10, min=-3, max=1, step=0.05),
            "which": widgets.Dropdown(options=[("가", 10), ("나", 20)], value=20),
            "on": widgets.Checkbox(value=True),
        }
    )
    size = "{!r}x{!r}@{!r}".format(*map(float, ex.figure.bbox.size), 30.0)
    assert json.loads(ex.image.key) == [size, [3, 0.3, 1.0, [1, "나"], True]]
    assert ex.image.size == size and bytes(ex.image.value) == ex.png
    ex.set(x=0.37)  # off the step, by code: keyed as it is (a hand's move never leaves it)
    assert json.loads(ex.image.key)[1][1] == 0.37
    ex.controls["x"].value = math.nan  # not finite: no key, the front end waits for the kernel
    assert ex.image.key == ""
    assert tiny({"t": widgets.IntText(value=1)}).image.key == ""  # a widget the front end cannot key


def test_every_frame_the_kernel_draws_reaches_the_front_end_with_its_key():
    """Shown frames go as (size, key, value) in one message; frames drawn ahead of a hand as a custom message
    with the PNG the kernel keeps; forgetting the kept PNGs tells the front end to forget its own."""
    ex = tiny({"n": widgets.IntSlider(value=2, min=0, max=9)})
    sent = []
    ex.image.send = lambda content, buffers=None: sent.append((content, buffers))
    slider = ex.controls["n"]
    for n in (3, 4, 2):
        slider.set_state({"value": n})  # a hand: n shown (kept), then n + (n - before) drawn ahead
        assert ex.image.key == ex._front_key(ex.values) and bytes(ex.image.value) == ex.png
    keeps = [content["keep"] for content, _ in sent]
    assert [json.loads(k)[1] for k in keeps] == [[4], [5], [0]]
    for (_, buffers), n in zip(sent, (4, 5, 0)):
        assert buffers == [ex._shown[ex._shown_key({"n": n})]]
    ex._forget_shown()
    assert sent[-1] == ({"forget": True}, None)


def test_an_explorer_built_in_a_kernel_draws_its_selectors_other_options_ahead(monkeypatch):
    """Built where an event loop runs (a kernel's cell), an explorer draws ahead, after the cell, the values one
    step away of each selector and checkbox and sends them to the front end: a hand's first switch shows a kept
    frame. A slider's neighbours are left to the hand's moves; with no loop (a script) nothing is drawn ahead."""
    monkeypatch.delenv("COURSE_CHECK_FIGURES", raising=False)  # as in a learner's kernel

    def build():
        return tiny(
            {
                "n": widgets.IntSlider(value=4, min=0, max=9),
                "which": widgets.Dropdown(options=["a", "b", "c"], value="b"),
                "on": widgets.Checkbox(value=False),
            }
        )

    async def in_a_kernel():
        ex, sent = build(), []
        ex.image.send = lambda content, buffers=None: sent.append((content, buffers))
        for _ in range(100):
            await asyncio.sleep(0.02)
            if len(sent) == 3:
                break
        return ex, sent

    ex, sent = asyncio.run(in_a_kernel())
    assert [json.loads(content["keep"])[1] for content, _ in sent] == [
        [4, [2, "c"], False],
        [4, [0, "a"], False],
        [4, [1, "b"], True],
    ]
    assert all(
        buffers == [ex._shown[ex._shown_key(v)]]
        for (_, buffers), v in zip(
            sent,
            [
                {"n": 4, "which": "c", "on": False},
                {"n": 4, "which": "a", "on": False},
                {"n": 4, "which": "b", "on": True},
            ],
        )
    )
    assert ex.values == {"n": 4, "which": "b", "on": False} and ex.png == ex._shown[ex._shown_key(ex.values)]
    assert build().drawn_ahead == 0


FLOATS = [(0.0, 1.0, 0.1), (0.5, 5.0, 0.1), (8.0, 20.0, 0.5), (-3.0, 3.0, 0.05), (0.0, math.pi, 0.3), (0.0, 2.0, 1 / 3)]
FLOATS += [(0.0, math.pi, math.pi / 20)]  # the last step lands on pi up to rounding: clamped to the bound
LOGS = [(10.0, -3.0, 1.0, 0.05), (10.0, 0.0, 2.0, 0.05), (2.0, -4.0, 4.0, 0.25)]


def hand_values(low: float, high: float, step: float) -> list[float]:
    """Floats a front end may send for a slider: low + k*step as a browser computes it, its neighbours, and a value
    typed into the readout off the steps."""
    count = math.floor((high - low) / step + 1e-9) + 1
    out = []
    for k in range(count):
        v = low + k * step
        out += [v, np.nextafter(v, math.inf), np.nextafter(v, -math.inf), round(v, 12), v + 0.4 * step]
        out += [v * (1 + 2e-10), v * (1 - 2e-10), v * (1 + 1e-8), v * (1 - 1e-8), v + 5e-13, v + 5e-12]  # tolerances
    return [float(v) for v in out if low <= v <= high]


def test_the_front_end_keys_a_hand_move_as_the_kernel_does():
    """For every value a hand may send, the key the front end computes from the control's state (heldValue)
    equals the key the kernel gives the frame it draws for that move (after snapping the float to its step)."""
    cases = []  # (control state as the front end holds it, key the kernel gave)
    for low, high, step in FLOATS:
        ex = tiny({"x": widgets.FloatSlider(value=low, min=low, max=high, step=step)})
        for v in hand_values(low, high, step):
            ex.controls["x"].set_state({"value": v})
            state = {"_model_name": "FloatSliderModel", "value": v, "min": low, "max": high, "step": step}
            cases.append((state, ex.image.size, ex.image.key))
    for base, low, high, step in LOGS:
        ex = tiny({"t": widgets.FloatLogSlider(value=base**low, base=base, min=low, max=high, step=step)})
        for e in hand_values(low, high, step):
            v = base**e  # the front end sends base ** exponent
            ex.controls["t"].set_state({"value": v})
            state = {"_model_name": "FloatLogSliderModel", "value": v, "min": low, "max": high, "step": step}
            cases.append((dict(state, base=base), ex.image.size, ex.image.key))
    ex = tiny({"n": widgets.IntSlider(value=1, min=-5, max=40, step=3)})
    for v in range(-5, 41, 3):
        ex.controls["n"].set_state({"value": v})
        state = {"_model_name": "IntSliderModel", "value": v, "min": -5, "max": 40, "step": 3}
        cases.append((state, ex.image.size, ex.image.key))
    options = [("짧은 문장", "a"), ("긴 문장", "b"), ("같은 값", "a")]
    for kind, make in [("DropdownModel", widgets.Dropdown), ("SelectionSliderModel", widgets.SelectionSlider)]:
        ex = tiny({"s": make(options=options, value="b")})
        for index in (0, 1):
            ex.controls["s"].set_state({"index": index})
            state = {"_model_name": kind, "index": index, "_options_labels": [label for label, _ in options]}
            cases.append((state, ex.image.size, ex.image.key))
    ex = tiny({"c": widgets.Checkbox(value=False)})
    for v in (True, False):
        ex.controls["c"].set_state({"value": v})
        cases.append(({"_model_name": "CheckboxModel", "value": v}, ex.image.size, ex.image.key))
    assert len(cases) > 500 and all(key for _, _, key in cases)
    front = run_in_chromium(
        """async ({module, cases}) => {
          const {heldValue} = await import(module);
          return cases.map(([state, size, key]) => [
            JSON.stringify([size, [heldValue({get: (name) => state[name]})]]), JSON.stringify(JSON.parse(key))]);
        }""",
        {"cases": cases},
    )
    wrong = [(case[0], got, want) for case, (got, want) in zip(cases, front) if got != want]
    assert not wrong, f"{len(wrong)} of {len(cases)} keys differ, e.g. {wrong[:3]}"


def run_in_chromium(script: str, arg: dict):
    """Evaluate script(arg) in a blank page, arg.module being the front end's module as an importable URL."""
    source = base64.b64encode(MODULE.read_bytes()).decode()
    with chromium() as browser:
        page = browser.new_page()
        try:
            return page.evaluate(script, dict(arg, module=f"data:text/javascript;base64,{source}"))
        finally:
            page.close()


# The view against a stand-in model and host: `kernel(n, i, name)` is a frame from the kernel (the value trait
# with its key, written as Python writes it: n is a FloatSlider's float, 1.0), `move(c, value)` a control's new
# value (a hand's or the kernel's), `ahead(n, i, name)` a frame drawn ahead, `forget`, `options` (the selector's
# labels change); `shown` logs the name of the frame in the <img> (each frame's bytes are its name, padded with
# zeros to `pad` bytes), `urls` the number of blob URLs alive, `close` runs the view's cleanup.
VIEW = """async ({module, steps, abort, early, views}) => {
  let live = 0;
  const create = URL.createObjectURL, revoke = URL.revokeObjectURL;
  URL.createObjectURL = (blob) => { live += 1; return create(blob); };
  URL.revokeObjectURL = (url) => { live -= 1; return revoke(url); };
  const decoded = [], decode = HTMLImageElement.prototype.decode;  // the URLs of images decoded, in order
  HTMLImageElement.prototype.decode = function () { decoded.push(this.src); return decode.call(this); };
  const {default: view, storeOf} = await import(module);
  const listeners = (state) => {
    const on = {};
    return {
      get: (name) => state[name],
      ons: 0,
      on(name, callback) { this.ons += 1; (on[name] = on[name] || []).push(callback); },
      set(name, value) { this.update({[name]: value}); },
      update(values) {  // as Backbone's set: every value first, then a change event per changed one
        const changed = Object.keys(values).filter((name) => state[name] !== values[name]);
        Object.assign(state, values);
        for (const name of changed) for (const cb of on[`change:${name}`] || []) cb();
      },
      trigger(name, ...args) { for (const cb of on[name] || []) cb(...args); },
    };
  };
  const bytes = (name, pad = 0) => {
    const text = new TextEncoder().encode(name), out = new Uint8Array(Math.max(pad, text.length));
    out.set(text);
    return new DataView(out.buffer);
  };
  const controls = [listeners({_model_name: 'FloatSliderModel', value: 0, min: 0, max: 9, step: 1}),
                    listeners({_model_name: 'DropdownModel', index: 0, _options_labels: ['a', 'b']})];
  const key = (n, i, size = 'S') => `["${size}", [${n}.0, [${i}, "${'ab'[i]}"]]]`;  // json.dumps's way
  const model = listeners({controls: ['IPY_MODEL_c0', 'IPY_MODEL_c1'], size: 'S', key: key(0, 0), value: bytes('A')});
  const host = {getModel: async (ref) => {  // as anywidget's host: anywidget:<id> only
    if (!ref.startsWith('anywidget:')) throw new Error(`[anywidget] Invalid widget reference: ${ref}`);
    return controls[Number(ref.slice('anywidget:c'.length))];
  }};
  const closeModel = view.initialize({model});  // anywidget: once, when the model is made
  for (const [n, i, name] of early || []) model.trigger('msg:custom', {keep: key(n, i)}, [bytes(name)]);
  const imgs = [], cleanups = [];
  for (let v = 0; v < (views || 1); v++) {
    const el = document.createElement('div');
    document.body.appendChild(el);
    cleanups.push(await view.render({model, el, host, signal: abort ? AbortSignal.abort() : undefined}));
    imgs.push(el.querySelector('img'));
  }
  const shown = async (v = 0) => {
    const text = new TextDecoder().decode(await (await fetch(imgs[v].src)).arrayBuffer());
    return text.replace(/\\0+$/, '');
  };
  const log = [];
  for (const [what, ...args] of steps) {
    if (what === 'kernel') {  // a frame from the kernel: value and key in one message, like hold_sync
      const [n, i, name, size, pad] = args;
      model.update({size: size || 'S', key: n === null ? '' : key(n, i, size || 'S'), value: bytes(name, pad)});
    } else if (what === 'move') {
      const [c, value] = args;
      controls[c].set(c === 0 ? 'value' : 'index', value);
    } else if (what === 'ahead') {
      const [n, i, name, pad] = args;
      model.trigger('msg:custom', {keep: key(n, i)}, [bytes(name, pad)]);
    } else if (what === 'keyonly') {  // a frame of the same bytes as the kernel's last: traitlets sends its key only
      const [n, i] = args;
      model.update({key: key(n, i)});
    } else if (what === 'forget') {
      model.trigger('msg:custom', {forget: true}, []);
    } else if (what === 'options') {
      controls[1].set('_options_labels', ['a', 'b', 'c']);
    } else if (what === 'shown') {
      log.push(await shown(args[0]));
    } else if (what === 'closeview') {
      cleanups[args[0]]();
      cleanups[args[0]] = null;
    } else if (what === 'ons') {  // listeners added to the controls (a closed view adds none)
      log.push(`ons ${controls[0].ons + controls[1].ons}`);
    } else if (what === 'held') {  // frames of the store that hold a decoded Image
      const store = storeOf(model);  // frames kept with an Image, and the store's list of them
      log.push(`held ${[...store.frames.values()].filter((frame) => frame.image).length} ${store.decoded.size}`);
    } else if (what === 'decoded') {  // images decoded so far, and whether the one shown was decoded before
      log.push(`decoded ${decoded.length} ${decoded.includes(imgs[0].src)}`);
    } else if (what === 'urls') {
      log.push(`urls ${live}`);
    } else if (what === 'close') {  // the views, then the model (its frames) closed
      for (const cleanup of cleanups) if (cleanup) cleanup();
      log.push(`urls ${live}`);
      closeModel();
      log.push(`urls ${live}`);
    }
  }
  return log;
}"""


def view_log(steps: list, abort: bool = False, early: list | None = None, views: int = 1) -> list[str]:
    return run_in_chromium(VIEW, {"steps": steps, "abort": abort, "early": early or [], "views": views})


def test_the_view_shows_a_kept_frame_at_once_and_never_an_older_one():
    steps = [
        ["shown"],  # A: the first frame
        ["move", 0, 1],
        ["shown"],  # no frame for n=1 yet: A stays until the kernel's comes
        ["kernel", 1, 0, "B"],
        ["shown"],  # B
        ["move", 0, 0],
        ["shown"],  # back to n=0: A at once, from the view's own frames
        ["kernel", 1, 0, "B"],
        ["shown"],  # the kernel's late frame for n=1 (the hand has left it): not shown
        ["kernel", 0, 0, "A"],
        ["shown"],  # the kernel's frame for n=0: the same picture
        ["ahead", 2, 0, "C"],
        ["shown"],  # drawn ahead: kept, not shown
        ["move", 0, 2],
        ["shown"],  # the hand gets there: C at once
        ["move", 1, 1],
        ["shown"],  # the selector to b: nothing kept for (2, b), C stays
        ["kernel", 2, 1, "D"],
        ["shown"],
        ["move", 1, 0],
        ["shown"],  # back to a: C
        ["move", 0, 5],
        ["kernel", 3, 0, "E"],
        ["shown"],  # a drag ahead of the kernel: its frames show as they come
        ["kernel", 5, 0, "F"],
        ["shown"],
        ["move", 0, 3],
        ["shown"],  # E, kept
    ]
    assert view_log(steps) == ["A", "A", "B", "A", "A", "A", "A", "C", "C", "D", "C", "E", "F", "E"]


def test_the_view_forgets_what_may_no_longer_be_true():
    steps = [
        ["kernel", 1, 0, "B"],
        ["move", 0, 1],
        ["kernel", 0, 0, "A"],
        ["move", 0, 0],
        ["shown"],
        ["forget"],
        ["move", 0, 1],
        ["shown"],  # the kernel forgot its PNGs: so does the view (A stays)
        ["kernel", 1, 0, "B"],
        ["move", 0, 0],
        ["kernel", 0, 0, "A"],
        ["shown"],
        ["kernel", 0, 0, "A2", "T"],
        ["move", 0, 1],
        ["shown"],  # the figure's size changed: B (kept) is of the old size
        ["move", 0, 0],
        ["kernel", 0, 1, "G"],
        ["move", 1, 1],
        ["shown"],
        ["options"],
        ["move", 1, 0],
        ["move", 1, 1],
        ["shown"],  # options changed: index 1 may be another option
        ["kernel", None, 0, "H"],
        ["shown"],  # a frame the view cannot key: shown, never kept
        ["move", 0, 4],
        ["shown"],
    ]
    assert view_log(steps) == ["A", "A", "A", "A2", "G", "G", "H", "H"]


def test_the_kernels_frame_for_the_values_set_replaces_the_views_own():
    """A key may come to stand for another picture (a selector's options changed by code keep their labels; an
    update whose picture depends on more than the controls): the kernel's frame for the values now set wins."""
    steps = [
        ["kernel", 1, 0, "B"],
        ["move", 0, 1],
        ["shown"],  # B, from the view's frames
        ["move", 0, 0],
        ["kernel", 1, 0, "B2"],
        ["move", 0, 1],
        ["shown"],  # B2 replaced B while the hand was away
        ["kernel", 1, 0, "B3"],
        ["shown"],  # the kernel redrew n=1 differently: B3, although B2 was kept
        ["kernel", 1, 0, "B3"],
        ["shown"],  # the same bytes again: nothing to do (no URL made)
        ["urls"],
        ["forget"],
        ["kernel", 1, 0, "B3"],
        ["move", 0, 0],
        ["move", 0, 1],
        ["shown"],  # kept again after a forget
        ["move", 0, 5],
        ["shown"],
        ["ahead", 5, 0, "F"],
        ["shown"],  # drawn ahead for the values set: shown
        ["kernel", None, 0, "U"],
        ["shown"],  # an unkeyed frame while a kept one is shown: not shown, no URL made
        ["urls"],
        ["close"],
    ]
    assert view_log(steps) == ["B", "B2", "B3", "B3", "urls 2", "B3", "B3", "F", "F", "urls 2", "urls 0", "urls 0"]


def test_the_view_keeps_at_most_32_mib_and_revokes_what_it_drops():
    big = 6 * 2**20  # counted twice (bytes and blob): 12 MiB of the 32
    steps = [
        *(["kernel", n, 0, f"P{n}", None, big] for n in (1, 2, 3)),  # kept while A is shown; P1 (and A) dropped
        ["move", 0, 1],
        ["shown"],
        ["move", 0, 2],
        ["shown"],
        ["move", 0, 3],
        ["shown"],
        ["move", 0, 0],
        ["shown"],
        ["urls"],
        ["close"],
    ]
    assert view_log(steps) == ["A", "P2", "P3", "P3", "urls 2", "urls 0", "urls 0"]  # the last view closed: all go
    steps = [  # a frame shown from memory is used last: dropped after the others
        ["kernel", 1, 0, "P1", None, big],
        ["kernel", 2, 0, "P2", None, big],
        ["move", 0, 1],
        ["shown"],
        ["kernel", 3, 0, "P3", None, big],  # A, then P2 dropped (P1 was used since)
        ["move", 0, 2],
        ["shown"],
        ["move", 0, 3],
        ["shown"],
        ["move", 0, 1],
        ["shown"],
    ]
    assert view_log(steps) == ["P1", "P1", "P3", "P1"]


def test_a_view_closed_while_it_looks_for_its_controls_lets_go_of_its_urls():
    """Closed before its controls were found: no listener is added to them, and (the last view) it lets go of the
    frames too."""
    assert view_log([["urls"], ["ons"], ["close"]], abort=True) == ["urls 0", "ons 0", "urls 0", "urls 0"]


def test_two_views_share_the_frames_and_one_closing_leaves_the_others_picture():
    steps = [
        ["kernel", 1, 0, "B"],  # kept for both views
        ["move", 0, 1],
        ["shown", 0],
        ["shown", 1],  # both show B, one blob URL
        ["urls"],
        ["closeview", 0],
        ["forget"],  # B dropped from the store, but the other view still shows it: its URL stays (A's goes)
        ["shown", 1],
        ["urls"],
        ["close"],
    ]
    assert view_log(steps, views=2) == ["B", "B", "urls 2", "B", "urls 1", "urls 0", "urls 0"]


def test_frames_drawn_ahead_before_a_view_renders_are_kept_for_it():
    """Drawing ahead after the cell may beat JupyterLab's rendering of the output: the model keeps what comes
    (anywidget's initialize), and a view made later shows it."""
    assert view_log([["move", 0, 2], ["shown"]], early=[[2, 0, "C"]]) == ["C"]


def test_after_a_forget_the_kernels_last_frame_replaces_one_shown_from_memory():
    """A selector's options changed by code, labels alike: its index moves (the view shows what it kept for the
    new index: another value's picture) and the kernel, whose value did not change, sends only a forget. The
    view then shows the kernel's last frame, which is for the values the kernel holds."""
    steps = [
        ["kernel", 0, 1, "B"],  # the selector at b: B shown by the kernel
        ["move", 1, 0],  # the index moves to 0 (code changed the options): A, kept for (0, a), shown from memory
        ["shown"],
        ["forget"],  # the kernel's forget: its last frame (B, for the value it holds) comes back
        ["shown"],
    ]
    assert view_log(steps) == ["A", "B"]


def test_a_shown_frame_goes_with_its_key_in_one_message():
    """`_show` sets size, key and value under hold_sync: one update message, so the view never keeps a frame under
    the previous values' key."""
    ex = tiny({"n": widgets.IntSlider(value=2, min=0, max=9)})
    messages = []
    ex.image.comm.send = lambda data=None, metadata=None, buffers=None: messages.append((data, buffers))
    ex.set(n=5)
    updates = [data for data, _ in messages if data.get("method") == "update"]
    assert len(updates) == 1 and json.loads(updates[0]["state"]["key"])[1] == [5]  # size: unchanged, not sent
    assert updates[0]["buffer_paths"] == [["value"]] and [bytes(b) for b in messages[0][1]] == [ex.png]


def test_floats_set_by_code_are_snapped_as_a_hands_and_selector_options_changed_by_code_are_forgotten():
    ex = tiny(
        {
            "x": widgets.FloatSlider(value=0.0, min=0, max=1, step=0.1),
            "s": widgets.Dropdown(options=[("a", 1), ("b", 2)], value=1),
        }
    )
    sent = []
    ex.image.send = lambda content, buffers=None: sent.append(content)
    ex.set(x=0.1 * 3)  # 0.30000000000000004 by code: 0.3, as the front end keys it
    assert ex.values["x"] == 0.3 and repr(ex.values["x"]) == "0.3" and json.loads(ex.image.key)[1][0] == 0.3
    ex.set(x=0.37)  # off the steps: kept as it is
    assert ex.values["x"] == 0.37 and ex.drawn_ahead == 0  # code draws nothing ahead
    assert sent == []
    ex.controls["s"].options = [("a", 10), ("b", 20)]  # the same labels, other values: the front end forgets
    assert {"forget": True} in sent


def test_a_deck_without_frames_shows_each_explorers_stored_first_picture(tmp_path):
    """With no frames computed (`--frames reuse` after helpers/ changed), a deck or page keeps each explorer's first
    picture from the notebook's stored widget state as a plain image: no widget state is left for the page's widget
    renderer, which would fetch the picture widget's module from a CDN."""
    import nbformat

    from tools.explorer_player import replace_widgets

    nb = nbformat.read(ROOT / "notebooks" / "13_attention_in_vision.ipynb", as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", []) if "widget" in str(o.get("data", {}).keys())]
    assert len(outputs) == 2  # 13's two explorers
    assert replace_widgets(nb, [], tmp_path, "frames", "13_attention_in_vision") == 0  # no player
    assert "widgets" not in nb.metadata and all(list(o["data"]) == ["image/png", "text/plain"] for o in outputs)
    assert all(base64.b64decode(o["data"]["image/png"]).startswith(PNG) for o in outputs)


def test_a_frame_drawn_ahead_is_decoded_when_it_comes():
    """A frame drawn ahead is decoded as it arrives, while the hand has not got there: shown later, it costs the
    paint only. Frames the kernel shows are not decoded twice."""
    steps = [
        ["decoded"],
        ["kernel", 1, 0, "B"],
        ["decoded"],  # the kernel's frame for other values: kept, not decoded ahead
        ["ahead", 2, 0, "C"],
        ["decoded"],  # drawn ahead: decoded now
        ["move", 0, 2],
        ["shown"],
        ["decoded"],  # C, whose image was decoded before it was shown
    ]
    assert view_log(steps) == ["decoded 0 false", "decoded 0 false", "decoded 1 false", "C", "decoded 1 true"]
    # decoded pixels are some 30 times the PNG: only the last 12 frames drawn ahead hold theirs, a frame shown or
    # dropped lets go of it
    steps = [*(["ahead", n, 0, f"F{n}"] for n in range(1, 15)), ["held"], ["move", 0, 14], ["held"], ["forget"]]
    assert view_log([*steps, ["held"]]) == ["held 12 12", "held 11 11", "held 0 0"]
    big = 6 * 2**20  # frames pushed out by the 32 MiB limit let go of their Image too
    steps = [*(["ahead", n, 0, f"P{n}", big] for n in (1, 2, 3)), ["held"]]
    assert view_log(steps) == ["held 2 2"]


def test_a_frame_sent_as_its_key_alone_is_shown():
    """The kernel's frame for the values now set may have the bytes of its last one: only the key changes (traitlets
    sends no unchanged value). The view shows it over a frame it kept for those values."""
    steps = [["ahead", 2, 0, "C"], ["kernel", 1, 0, "B"], ["move", 0, 2], ["shown"], ["keyonly", 2, 0], ["shown"]]
    assert view_log(steps) == ["C", "B"]


def test_the_notebooks_store_the_current_front_end():
    """A notebook opened without a kernel shows its stored widget state with the front end stored in it (`_esm`):
    it must be this file (rebuild the notebooks after changing it: `python3 course.py build`)."""
    import nbformat

    source, stored = MODULE.read_text(encoding="utf-8"), {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        state = nbformat.read(path, as_version=4).metadata.get("widgets", {})
        for model in state.get("application/vnd.jupyter.widget-state+json", {}).get("state", {}).values():
            if model.get("model_name") == "AnyModel":
                stored[path.stem] = stored.get(path.stem, True) and model["state"].get("_esm") == source
    assert len(stored) >= 13 and all(stored.values()), [name for name, same in stored.items() if not same]
