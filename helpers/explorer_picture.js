// The picture of a helpers.widgets.Explorer in a live front end (JupyterLab, RISE), loaded by anywidget.
//
// The kernel draws every frame. This view keeps the frames the kernel sent (each one shown, and each one drawn
// ahead of a hand) under the values they were drawn for. When a control moves to values it already has a frame
// for, it shows that frame at once instead of waiting for the kernel (on a slow 2-core machine, 64-67 ms from
// input to screen even for a picture the kernel kept; of that only decoding and painting, 18-32 ms, is left
// for a kept frame). The kernel still sends its frame; it replaces what the view showed only if its bytes
// differ, and a frame for other values than those now set is shown only while the view has nothing for these.
//
// A frame's key is the figure's size and the controls' values as the kernel holds them (helpers/widgets.py:
// Explorer._front_key): a slider's float that is a step's value but for rounding is that value (the kernel
// snaps it too), a selector's value is [index, label], a checkbox's a boolean. An off-step float is keyed as it
// is; a value this view cannot key (not finite, another widget) keys nothing, and the view then waits for the
// kernel, as a plain image widget would.

const KEEP_BYTES = 32 * 2 ** 20; // frames kept per view, as the kernel's Explorer.MAX_SHOWN_BYTES

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

export default {
  async render({ model, el, host, signal }) {
    const img = document.createElement("img");
    img.style.cssText = "display: block; width: 100%; height: auto;";
    el.appendChild(img);

    const frames = new Map(); // frame key -> {url, bytes}, least recently used first
    let kept = 0;
    let shown = null; // {key, frame} in img; key null: a frame the view cannot key
    let controls = []; // the controls' models once found; until then every frame is unkeyed

    const keyNow = () => {
      const values = controls.map(heldValue);
      return !controls.length || values.includes(undefined) ? null : JSON.stringify([model.get("size"), values]);
    };
    const canonical = (key) => (key ? JSON.stringify(JSON.parse(key)) : null); // the kernel's floats as JS writes them
    const bytesOf = (view) => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    const same = (a, b) => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
    const frameOf = (bytes) => ({ url: URL.createObjectURL(new Blob([bytes], { type: "image/png" })), bytes });

    const drop = (key) => {
      const frame = frames.get(key);
      frames.delete(key);
      kept -= frame.bytes.byteLength;
      if (!shown || shown.frame !== frame) URL.revokeObjectURL(frame.url);
    };
    const put = (key, frame) => {
      if (frames.has(key)) drop(key);
      frames.set(key, frame);
      kept += frame.bytes.byteLength;
      for (const old of frames.keys()) {
        if (kept <= KEEP_BYTES) break;
        if (old !== key) drop(old);
      }
      return frame;
    };
    const show = (key, frame) => {
      if (shown && shown.frame !== frame && frames.get(shown.key) !== shown.frame) URL.revokeObjectURL(shown.frame.url);
      shown = { key, frame };
      img.src = frame.url;
    };

    // A frame from the kernel: kept under its key; shown if it is for the values now set (it replaces what the view
    // showed from memory unless the bytes are the same), or if the view has no frame for those values (a drag ahead
    // of the kernel then shows the kernel's frames as they come).
    const fromKernel = () => {
      const view = model.get("value");
      if (!view || !view.byteLength) return;
      const [key, bytes, now] = [canonical(model.get("key")), bytesOf(view), keyNow()];
      if (key !== now && now !== null && frames.has(now)) {
        if (key !== null) put(key, frameOf(bytes));
      } else if (key !== null && shown && shown.key === key && same(shown.frame.bytes, bytes)) {
        if (frames.get(key) !== shown.frame) put(key, shown.frame); // on screen already: kept again after a forget
      } else {
        show(key, key !== null ? put(key, frameOf(bytes)) : frameOf(bytes));
      }
    };
    // A hand (or the kernel) moved a control: the frame for the new values, if kept.
    const moved = () => {
      const now = keyNow();
      const frame = now !== null && frames.get(now);
      if (!frame || (shown && shown.frame === frame)) return;
      frames.delete(now); // most recently used
      frames.set(now, frame);
      show(now, frame);
    };
    const forget = () => {
      for (const key of [...frames.keys()]) drop(key);
    };
    const custom = (message, buffers) => {
      if (message.forget) {
        forget();
      } else if (message.keep && buffers && buffers.length) {
        const key = canonical(message.keep);
        const frame = put(key, frameOf(bytesOf(buffers[0])));
        if (key === keyNow() && !(shown && shown.key === key)) show(key, frame);
      }
    };
    const cleanup = () => {
      forget();
      if (shown) URL.revokeObjectURL(shown.frame.url);
    };

    fromKernel();
    model.on("change:value", fromKernel);
    model.on("msg:custom", custom);
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
      control.on("change:_options_labels", forget); // an index may now name another option
    }
    return cleanup;
  },
};
