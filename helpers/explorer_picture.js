// The picture of a helpers.widgets.Explorer in a live front end (JupyterLab, RISE), loaded by anywidget.
//
// The kernel draws every frame. This view keeps the frames the kernel sent (each one shown, and each one drawn
// ahead of a hand) under the values they were drawn for. When a control moves to values it already has a frame
// for, it shows that frame at once instead of waiting for the kernel (on a slow 2-core machine, 64-67 ms from
// input to screen even for a picture the kernel kept: the trips to the kernel and back and its handling, then
// 18-32 ms of decoding and painting). Frames drawn ahead are decoded as they come (decodeNow). The kernel still
// sends its frame; it replaces what the view showed only if its bytes differ, and a frame for other values than
// those now set is shown only while the view has nothing for these.
//
// A frame's key is the figure's size and the controls' values as the kernel holds them (helpers/widgets.py:
// Explorer._front_key): a slider's float that is a step's value but for rounding is that value (the kernel
// snaps it too), a selector's value is [index, label], a checkbox's a boolean. An off-step float is keyed as it
// is; a value this view cannot key (not finite, another widget) keys nothing, and the view then waits for the
// kernel, as a plain image widget would.

const KEEP_BYTES = 32 * 2 ** 20; // frames kept per widget (bytes and blob counted), as Explorer.MAX_SHOWN_BYTES
const KEEP_DECODED = 12; // frames drawn ahead held decoded per widget: 4 bytes a pixel (05's: 1.2 MB, its PNG 40 KB)

function isClose(a, b) {
  // Python's math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), as Explorer._on_change snaps a hand's float
  return Math.abs(a - b) <= Math.max(1e-9 * Math.max(Math.abs(a), Math.abs(b)), 1e-12);
}

function clamp(x, low, high) {
  return Math.min(Math.max(x, low), high);
}

// A control's value as the kernel holds it once a hand's move reached it (helpers/widgets.py: _steps and
// Explorer._on_change), or undefined (not keyed).
export function heldValue(control) {
  const labels = control.get("_options_labels");
  if (Array.isArray(labels)) {
    const index = control.get("index");
    return Number.isInteger(index) && index < labels.length ? [index, labels[index]] : undefined;
  }
  const value = control.get("value");
  const kind = control.get("_model_name");
  if (typeof value === "boolean" && (kind === "CheckboxModel" || kind === "ToggleButtonModel")) return value;
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  if (kind === "IntSliderModel") return value;
  const [low, high, step] = [control.get("min"), control.get("max"), control.get("step")];
  if (!(step > 0) || !(high >= low)) return undefined;
  const count = Math.floor((high - low) / step + 1e-9) + 1;
  let at;
  if (kind === "FloatSliderModel") {
    const k = clamp(Math.round((value - low) / step), 0, count - 1);
    at = clamp(Number((low + k * step).toFixed(12)), low, high);
  } else if (kind === "FloatLogSliderModel") {
    const base = control.get("base");
    if (!(value > 0) || !(base > 0) || base === 1) return undefined;
    const k = clamp(Math.round((Math.log(value) / Math.log(base) - low) / step), 0, count - 1);
    at = clamp(Number((base ** (low + k * step)).toPrecision(12)), base ** low, base ** high);
  } else {
    return undefined;
  }
  return isClose(at, value) ? at : value;
}

// The frames of one widget, shared by its views in this page and filled from the moment the model exists
// (anywidget's initialize), so that frames drawn ahead before a view renders are not lost. (RISE's slideshow is
// another page, with its own models and stores.)
// Keyed by the model's `controls` list: one object per model, set once by the kernel (a re-sync that replaced it
// would start a new store: frames are lost, never mixed up).
const stores = new WeakMap();

export function storeOf(model) {
  const id = model.get("controls");
  if (!stores.has(id)) {
    stores.set(id, { frames: new Map(), kept: 0, onScreen: new Map(), views: new Set(), decoded: new Set() });
  }
  return stores.get(id);
}

const frameOf = (bytes) => ({ url: URL.createObjectURL(new Blob([bytes], { type: "image/png" })), bytes });

function decodeNow(store, frame) {
  // A frame drawn ahead is decoded when it arrives, while the hand is still deciding: an <img> given its URL
  // later usually finds it decoded (decoding and painting took 18-32 ms of a kept frame's time on a slow
  // machine). The Image is held with the frame, so the browser is less likely to let the decoded copy go; only
  // the last KEEP_DECODED frames drawn ahead are held (decoded pixels are some 30 times their PNG), and a frame
  // lets go of its Image once shown (the view's <img> has it then) or dropped.
  frame.image = new Image();
  frame.image.src = frame.url;
  frame.image.decode().catch(() => {}); // a frame that cannot be decoded shows as the img would show it
  store.decoded.add(frame);
  for (const old of store.decoded) {
    if (store.decoded.size <= KEEP_DECODED) break;
    undecode(store, old);
  }
  return frame;
}

function undecode(store, frame) {
  frame.image = null;
  store.decoded.delete(frame);
}
const bytesOf = (view) => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
const canonical = (key) => (key ? JSON.stringify(JSON.parse(key)) : null); // the kernel's floats as JS writes them

function release(store, frame) {
  // a frame no view shows and the store does not keep: its blob URL is let go
  if (!store.onScreen.get(frame.url) && ![...store.frames.values()].includes(frame)) URL.revokeObjectURL(frame.url);
}

function drop(store, key) {
  const frame = store.frames.get(key);
  store.frames.delete(key);
  store.kept -= 2 * frame.bytes.byteLength;
  undecode(store, frame);
  release(store, frame);
}

function put(store, key, frame) {
  if (store.frames.has(key)) drop(store, key);
  store.frames.set(key, frame);
  store.kept += 2 * frame.bytes.byteLength; // the bytes (to compare) and the blob (to show)
  for (const old of store.frames.keys()) {
    if (store.kept <= KEEP_BYTES) break;
    if (old !== key) drop(store, old);
  }
  return frame;
}

function forget(store) {
  for (const key of [...store.frames.keys()]) drop(store, key);
}

export default {
  initialize({ model }) {
    const store = storeOf(model);
    model.on("msg:custom", (message, buffers) => {
      if (message.forget) forget(store);
      else if (message.keep && buffers && buffers.length) {
        put(store, canonical(message.keep), decodeNow(store, frameOf(bytesOf(buffers[0]))));
      }
      for (const view of store.views) view(message.forget ? null : canonical(message.keep));
    });
    return () => forget(store); // the model is closed: its views are gone, its blob URLs go too
  },

  async render({ model, el, host, signal }) {
    const store = storeOf(model);
    const img = document.createElement("img");
    img.style.cssText = "display: block; width: 100%; height: auto;";
    el.appendChild(img);
    let shown = null; // {key, frame} in img; key null: a frame the view cannot key
    let controls = []; // the controls' models once found; until then every frame is unkeyed

    const keyNow = () => {
      const values = controls.map(heldValue);
      return !controls.length || values.includes(undefined) ? null : JSON.stringify([model.get("size"), values]);
    };
    const same = (a, b) => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
    const unshow = (frame) => {
      const count = store.onScreen.get(frame.url) - 1;
      if (count > 0) store.onScreen.set(frame.url, count);
      else store.onScreen.delete(frame.url);
      release(store, frame);
    };
    const show = (key, frame) => {
      const old = shown;
      shown = { key, frame };
      undecode(store, frame);
      store.onScreen.set(frame.url, (store.onScreen.get(frame.url) || 0) + 1);
      img.src = frame.url;
      if (old) unshow(old.frame);
    };

    // The kernel's frame (value, key, size): kept under its key; shown if it is for the values now set (it
    // replaces what the view showed from memory unless the bytes are the same), or if the view has no frame for
    // those values (a drag ahead of the kernel then shows the kernel's frames as they come).
    let handled = null; // the message last handled: change:value and change:key may both fire for one
    const fromKernel = () => {
      const view = model.get("value");
      if (!view || !view.byteLength || (handled && handled[0] === view && handled[1] === model.get("key"))) return;
      handled = [view, model.get("key")];
      const [key, bytes, now] = [canonical(model.get("key")), bytesOf(view), keyNow()];
      if (key !== now && now !== null && store.frames.has(now)) {
        if (key !== null) put(store, key, frameOf(bytes));
      } else if (shown && shown.key === key && same(shown.frame.bytes, bytes)) {
        if (key !== null && store.frames.get(key) !== shown.frame) put(store, key, shown.frame); // kept again
      } else {
        show(key, key !== null ? put(store, key, frameOf(bytes)) : frameOf(bytes));
      }
    };
    // A hand (or the kernel) moved a control: the frame for the new values, if kept.
    const moved = () => {
      const now = keyNow();
      const frame = now !== null && store.frames.get(now);
      if (!frame || (shown && shown.frame === frame)) return;
      store.frames.delete(now); // most recently used
      store.frames.set(now, frame);
      show(now, frame);
    };
    // After a custom message: a frame drawn ahead for the values now set is shown; after a forget, the kernel's
    // last frame (for the values it holds) replaces one shown from memory (a selector's options changed).
    const told = (key) => {
      const view = model.get("value");
      if (key !== null) {
        if (key === keyNow() && !(shown && shown.key === key)) moved();
      } else if (view && view.byteLength && !(shown && same(shown.frame.bytes, bytesOf(view)))) {
        show(null, frameOf(bytesOf(view))); // not kept: its key may now name other values
      }
    };
    const cleanup = () => {
      store.views.delete(told);
      if (shown) unshow(shown.frame);
      shown = null;
      if (!store.views.size) forget(store); // the last view closed (its cell ran again): nothing will show them
    };

    fromKernel();
    model.on("change:value", fromKernel);
    model.on("change:key", fromKernel); // a frame of the same bytes as the last sends only its key
    store.views.add(told);
    try {
      // ipywidgets writes a reference to a widget as IPY_MODEL_<id>; anywidget's host reads anywidget:<id>
      const ids = model.get("controls").map((ref) => `anywidget:${ref.replace(/^IPY_MODEL_/, "")}`);
      const found = await Promise.all(ids.map((ref) => host.getModel(ref)));
      if (signal && signal.aborted) return cleanup(); // the view was closed meanwhile
      controls = found;
    } catch (error) {
      console.warn("explorer picture: controls not found; every frame waits for the kernel", error);
    }
    for (const control of controls) {
      control.on("change:value", moved);
      control.on("change:index", moved);
      control.on("change:_options_labels", () => forget(store)); // an index may now name another option
    }
    moved();
    return cleanup;
  },
};
