"""How fast does every explorer follow the hand? End to end, in JupyterLab and headless Chromium.

    python3 course.py bench sliders            every notebook with an explorer
    python3 course.py bench sliders 04 05      only these numbers
    tools/bench_sliders.py --drags 3 --steps 6 --json build/bench-sliders.json

A benchmark, not a test (timings depend on the machine and its load). JupyterLab is started on
127.0.0.1 exactly as tests/test_browser.py starts it, on a temporary copy of notebooks/; each
notebook is opened and Run All, then every control of every explorer is moved:

- a slider is dragged (`--drags` drags, alternating direction, each `--steps` single pointer moves of
  an eighth of the track, the button held down); after each move that changes the readout the bench
  waits for the new picture. Latency = from the pointer event (timestamped in the page, capture
  phase) to the moment the new image is decoded and its frame is handed to the compositor (img.decode(),
  then a message posted from the next requestAnimationFrame callback, which runs once that frame's style,
  layout and paint recording are done, and after any task queued before it; raster and display are not
  measured), both on the page's clock;
- a selector is switched to each other option (from its change event to the painted image);
- a fast drag (one pointer move every 16 ms, like a real hand) counts the frames shown and the time
  from the last move to the last frame (`settle`): it shows whether moves pile up in a queue.

Before JupyterLab starts, one line gives the machine's speed: the median time of one whole redraw of
01's explorer in the bench's own process (`reference: ... ms`), so runs on different machines compare.
`--cgroup DIR` simulates a slower machine: JupyterLab, its kernels and Chromium run in that CPU cgroup (the
bench and Playwright's driver stay out), and the reference is measured in a child process inside it.
A slider with continuous_update=False draws only on release; it is measured from the pointerup and
marked `live = no`. The table lists every control (notebook, explorer, control, live, samples, median,
worst, new, fast-drag frames and settle); the last line is

    slider latency: median ≤ X ms, worst median Y ms (N explorers); values not shown before: median ≤ X' ms, worst median Y' ms

X = the median of all samples of all explorers, Y = the largest per-explorer median. An explorer keeps
the PNG of every value it has shown and shows it again without drawing (helpers/widgets.py,
`Explorer.redraw`), and after each move of a hand it draws into them, on the event loop of the thread that
handled the move, the values the hand may reach next: as far again the same way, a step either side of
that, and a step of each other control that is not a slider (`Explorer._draw_ahead`). The second and third drags go back over the first one's
values, so `new`, X' and Y' count only the moves to a value not shown before in that control's run: drawn
then, or drawn ahead after a move before, or (02, 06, 07) shown by a notebook cell's `set` before the run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tools import browser_support as bs

ROOT = Path(__file__).resolve().parents[1]

INSTRUMENT_JS = """(cell) => {
  if (!window.__courseBench) {
    const st = window.__courseBench = {input: 0};
    const stamp = e => { if (e.type !== 'pointermove' || e.buttons) st.input = performance.now(); };
    for (const type of ['pointermove', 'pointerup', 'change', 'click']) window.addEventListener(type, stamp, true);
  }
  const st = window.__courseBench;
  cell.__shown = [];
  cell.__waiters = [];  // wait_shown's promises: woken by a frame, not by polling (less CPU in the page measured)
  const seen = new WeakMap();
  const track = img => {
    const src = img.getAttribute('src');
    if (!src || seen.get(img) === src) return;
    seen.set(img, src);
    const input = st.input;
    // decoded, then the animation frame's rendering (style, layout, paint) done: a message posted from the
    // requestAnimationFrame callback runs after that frame is handed to the compositor
    img.decode().catch(() => {}).then(() => requestAnimationFrame(() => {
      const after = new MessageChannel();
      after.port1.onmessage = () => {
        cell.__shown.push({t: performance.now(), input});
        cell.__waiters = cell.__waiters.filter(waiter => !waiter());
      };
      after.port2.postMessage(null);
    }));
  };
  new MutationObserver(muts => {
    for (const m of muts) {
      if (m.type === 'attributes') { if (m.target.tagName === 'IMG') track(m.target); continue; }
      for (const n of m.addedNodes) {
        if (n.tagName === 'IMG') track(n);
        else if (n.querySelectorAll) n.querySelectorAll('img').forEach(track);
      }
    }
  }).observe(cell, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
  cell.querySelectorAll('.jp-OutputArea img').forEach(img => seen.set(img, img.getAttribute('src')));
}"""

SHOWN_COUNT = "(cell) => cell.__shown.length"
SHOWN_SINCE = "([cell, n]) => cell.__shown.slice(n)"
SHOWN_AFTER = """([cell, n, ms]) => new Promise(resolve => {
  const done = () => cell.__shown.length > n && (clearTimeout(timer), resolve(true), true);
  const timer = setTimeout(() => { cell.__waiters = cell.__waiters.filter(w => w !== done); resolve(false); }, ms);
  if (!done()) cell.__waiters.push(done);
})"""


def wait_shown(page, cell, n0: int, timeout_ms: int) -> list[dict]:
    """Frames painted since frame n0 (waits for the first up to timeout_ms, then 150 ms more)."""
    handle = cell.element_handle()
    # a lost page (crash, closed context) raises here: bench_notebook reports the notebook as not measured
    if not page.evaluate(SHOWN_AFTER, [handle, n0, timeout_ms]):
        return []
    page.wait_for_timeout(150)
    return page.evaluate(SHOWN_SINCE, [handle, n0])


def bench_slider(page, cell, control, drags: int, steps: int) -> dict:
    handle_el = control.locator(".noUi-handle").first
    track = control.locator(".noUi-target").bounding_box()
    samples, revisits, live = [], [], True
    seen = {control.evaluate(bs.STATE_JS)}  # values shown already: the explorer shows its kept PNG again
    direction = None
    for _ in range(drags):
        box = handle_el.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        room_right = track["x"] + track["width"] - x
        direction = 1 if (direction is None and room_right > track["width"] / 2) or direction == -1 else -1
        dx = direction * track["width"] / 8
        page.mouse.move(x, y)
        page.mouse.down()
        for s in range(1, steps + 1):
            before = control.evaluate(bs.STATE_JS)
            n0 = page.evaluate(SHOWN_COUNT, cell.element_handle())
            page.mouse.move(x + dx * s, y)  # one pointermove
            after = control.evaluate(bs.STATE_JS)
            if after == before:
                continue  # the value did not change (a coarse slider between two stops)
            if not live:
                continue
            frames = wait_shown(page, cell, n0, 3000 if not samples else 5000)
            if not frames:
                live = False  # draws only on release (continuous_update=False)
                continue
            samples.append(frames[0]["t"] - frames[0]["input"])
            revisits.append(after in seen)
            seen.add(after)
        n0 = page.evaluate(SHOWN_COUNT, cell.element_handle())
        page.mouse.up()
        if not live:
            frames = wait_shown(page, cell, n0, 10_000)
            if frames:
                after = control.evaluate(bs.STATE_JS)
                samples.append(frames[-1]["t"] - frames[-1]["input"])
                revisits.append(after in seen)
                seen.add(after)
        page.wait_for_timeout(300)
    return {"live": live, "samples": samples, "revisits": revisits, **fast_drag(page, cell, control)}


def fast_drag(page, cell, control, moves: int = 30, every_ms: int = 16) -> dict:
    """A quick sweep across the track: how many frames are painted, and how long after the last move
    the last frame comes (a queue of stale renders shows as a long settle time)."""
    handle_el = control.locator(".noUi-handle").first
    track = control.locator(".noUi-target").bounding_box()
    box = handle_el.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    direction = 1 if x < track["x"] + track["width"] / 2 else -1
    span = direction * track["width"] * 0.45
    n0 = page.evaluate(SHOWN_COUNT, cell.element_handle())
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(1, moves + 1):
        page.mouse.move(x + span * i / moves, y)
        page.wait_for_timeout(every_ms)
    last_input = page.evaluate("() => window.__courseBench.input")
    page.mouse.up()
    # Wait until no new frame for 1 s (or 20 s in all).
    deadline, count = time.monotonic() + 20, -1
    while time.monotonic() < deadline:
        page.wait_for_timeout(1000)
        now = page.evaluate(SHOWN_COUNT, cell.element_handle())
        if now == count:
            break
        count = now
    frames = page.evaluate(SHOWN_SINCE, [cell.element_handle(), n0])
    # 0 when the last frame was painted before the last move (that move did not change the value).
    settle = max(0.0, frames[-1]["t"] - last_input) if frames else float("nan")
    return {"fast_frames": len(frames), "fast_moves": moves, "settle_ms": settle}


def bench_selector(page, cell, control) -> dict:
    samples, revisits = [], []
    seen = {control.evaluate(bs.STATE_JS)}
    kind = bs.control_kind(control)
    tries = 3 if kind != "dropdown" else max(1, min(3, control.locator("option").count()))
    for _ in range(tries):
        n0 = page.evaluate(SHOWN_COUNT, cell.element_handle())
        bs.move_control(page, control)
        frames = wait_shown(page, cell, n0, 10_000)
        if frames:
            after = control.evaluate(bs.STATE_JS)
            samples.append(frames[-1]["t"] - frames[-1]["input"])
            revisits.append(after in seen)
            seen.add(after)
        page.wait_for_timeout(200)
    return {"live": True, "samples": samples, "revisits": revisits}


def bench_notebook(browser, lab, notebook: Path, drags: int, steps: int) -> list[dict]:
    rows = []
    page = bs.lab_tab(browser, lab)
    try:
        # Run All is not what is measured here
        bs.open_and_run_all(page, f"notebooks/{notebook.name}", f"bench_{notebook.stem}", run_all_timeout_s=600)
        for k, index in enumerate(bs.explorer_cells(notebook)):
            cell = bs.explorer_cell(page, index)
            cell.locator(bs.CONTROLS).first.wait_for(timeout=60_000)
            cell.scroll_into_view_if_needed()
            page.evaluate(INSTRUMENT_JS, cell.element_handle())
            for control in bs.controls_of(cell):
                control.scroll_into_view_if_needed()
                name = bs.control_label(control)
                kind = bs.control_kind(control)
                result = (
                    bench_slider(page, cell, control, drags, steps)
                    if kind == "slider"
                    else bench_selector(page, cell, control)
                )
                rows.append(
                    {"notebook": notebook.stem, "explorer": k, "cell": index, "control": name, "kind": kind, **result}
                )
                print(format_row(rows[-1]), flush=True)
    finally:
        bs.close_all(page)
        page.close()
    return rows


def first_visits(r: dict) -> list[float]:
    """The samples of values the explorer had not shown before in this control's run (drawn, not kept)."""
    return [x for x, again in zip(r["samples"], r.get("revisits", [False] * len(r["samples"]))) if not again]


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):7.0f}" if values else "      -"


def format_row(r: dict) -> str:
    s = r["samples"]
    worst = f"{max(s):7.0f}" if s else "      -"
    fast = (
        f"{r['fast_frames']:>3}/{r['fast_moves']:<3} {r['settle_ms']:7.0f}"
        if "fast_frames" in r
        else f"{'':>7} {'':>7}"
    )
    return (
        f"{r['notebook']:<30} {r['explorer']:>3}  {r['control'][:14]:<14} {('yes' if r['live'] else 'no'):>4} "
        f"{len(s):>3} {_median(s)} {worst} {_median(first_visits(r))}   {fast}"
    )


HEADER = (
    f"{'notebook':<30} {'exp':>3}  {'control':<14} {'live':>4} {'n':>3} {'median':>7} {'worst':>7} {'new':>7}"
    f"   {'frames':>7} {'settle':>7}   (ms; new: the median of values not shown before)"
)


def summary(rows: list[dict]) -> str:
    def line(pick) -> tuple[float, float] | None:
        per_explorer: dict[tuple, list[float]] = {}
        for r in rows:
            per_explorer.setdefault((r["notebook"], r["explorer"]), []).extend(pick(r))
        medians = [statistics.median(v) for v in per_explorer.values() if v]
        everything = [x for v in per_explorer.values() for x in v]
        return (statistics.median(everything), max(medians)) if everything else None

    explorers = len({(r["notebook"], r["explorer"]) for r in rows})
    every, new = line(lambda r: r["samples"]), line(first_visits)
    if every is None:
        return f"slider latency: no samples ({explorers} explorers)"
    text = f"slider latency: median ≤ {every[0]:.0f} ms, worst median {every[1]:.0f} ms ({explorers} explorers)"
    if new is not None:
        text += f"; values not shown before: median ≤ {new[0]:.0f} ms, worst median {new[1]:.0f} ms"
    return text


def reference_redraw(repeats: int = 21) -> float:
    """This machine's speed, for comparing runs on different machines: the median ms of one whole redraw
    of 01's explorer in this process (with --cgroup, a child process in the cgroup), with nothing else running:
    update, matplotlib's own Agg draw and Pillow's PNG at compress_level=1, as Explorer drew when the first
    tables were measured (less its walk over stale marks), so it stays a yardstick while Explorer's drawing
    gets faster (its glyph cache and PNG writer are not used here). Drawn at dpi 100 (the explorer is at 80 now). Runs on one
    machine differ by up to about 3x over a day (29-92 ms on one machine on 2026-11-30)."""
    import io

    os.environ.setdefault("MPLBACKEND", "Agg")
    import koreanize_matplotlib  # noqa: F401  (a Hangul font only, not the course style: a fixed yardstick)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    from helpers.lessons.weighted_average import softmax_explorer

    explorer = softmax_explorer(["국어", "영어", "수학", "탐구"], [1.0, 0.5, 2.0, -1.0], values=[88, 92, 76, 63])
    explorer.figure.set_dpi(100)  # the size the first tables were measured at (the explorer is drawn at 80 now)
    canvas = FigureCanvasAgg(explorer.figure)  # a plain Agg canvas, not the explorer's
    times = []
    for k in range(repeats):
        started = time.perf_counter()
        explorer.update(s0=-5.0 + k % 10, s1=0.5, s2=2.0, s3=-1.0)
        canvas.draw()
        rgb = np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3])
        Image.fromarray(rgb).save(io.BytesIO(), format="png", compress_level=1)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def into_cgroup(folder: Path) -> int:
    """Move the processes measured into a CPU cgroup (a slower machine, simulated): JupyterLab and its kernels,
    Chromium and its helpers (their later children follow). The bench itself and Playwright's driver stay out: their
    polling and messages are not the course's. One walk of /proc: a process forked meanwhile by one not yet
    moved stays out (unlikely: the server and Chromium's zygotes are up before). Returns the number of processes moved."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(stat.parent.name))
    moved, todo = 0, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            is_node = Path(f"/proc/{pid}/exe").resolve().name == "node"  # Playwright's driver (Chromium: its child)
        except OSError:  # gone, or a link this user may not read
            is_node = False
        if is_node:
            continue
        try:
            (folder / "cgroup.procs").write_text(str(pid))
            moved += 1
        except (ProcessLookupError, FileNotFoundError):
            continue
        except OSError as error:  # no permission; on cgroup v2 also a cgroup with controllers of its own
            raise SystemExit(
                f"bench sliders: cannot move process {pid} into {folder}: {error} (README: bench sliders)"
            ) from None
    return moved


def reference_in(folder: Path | None) -> float:
    """reference_redraw in this process, or (with a cgroup) in a child process inside it."""
    if folder is None:
        return reference_redraw()
    import subprocess

    # the child moves itself into the cgroup first: an error there is its own (the last line of its stderr)
    procs = str(folder / "cgroup.procs")
    code = (  # `with`: a write the cgroup refuses fails at the flush, which must raise, not vanish at GC
        f"import os\nwith open({procs!r}, 'w') as f: f.write(str(os.getpid()))\n"
        "from tools.bench_sliders import reference_redraw\nprint(reference_redraw())"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,  # `-c` puts the working folder first on sys.path: tools and helpers import from ROOT
            capture_output=True,
            text=True,
            check=True,
        )
    except (subprocess.SubprocessError, OSError) as error:  # e.g. no permission to write the cgroup's procs
        detail = (getattr(error, "stderr", "") or str(error)).strip().splitlines()[-1:]
        raise SystemExit(
            f"bench sliders: the reference could not run in {folder}: {' '.join(detail)} (README: bench sliders)"
        ) from None
    try:
        return float(done.stdout.split()[-1])
    except (IndexError, ValueError):
        raise SystemExit(
            f"bench sliders: the reference printed no number in {folder} (README: bench sliders)"
        ) from None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="*", help="notebook numbers (default: every notebook with an explorer)")
    parser.add_argument("--drags", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks", help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write every sample here")
    parser.add_argument(
        "--cgroup",
        type=Path,
        help="a CPU cgroup folder (README: bench sliders): JupyterLab, its kernels and Chromium run in it",
    )
    args = parser.parse_args(argv)
    reason = bs.missing_browser()
    if reason:
        print(f"bench sliders: {reason}")
        return 1
    notebooks = [p for p in sorted(args.notebooks.glob("[0-9][0-9]_*.ipynb")) if bs.explorer_cells(p)]
    if args.numbers:
        notebooks = [p for p in notebooks if p.name[:2] in args.numbers]
    if not notebooks:
        print("bench sliders: no notebook with an explorer matches")
        return 1
    if args.cgroup and not (args.cgroup / "cgroup.procs").exists():
        print(f"bench sliders: {args.cgroup} is not a cgroup folder (no cgroup.procs; README: bench sliders)")
        return 1
    reference = reference_in(args.cgroup)
    print(
        f"reference: 01's explorer drawn whole in {'the cgroup' if args.cgroup else 'this process'} in {reference:.0f} ms"
        " (median; machine speed)",
        flush=True,
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-sliders-") as tmp:
        site = Path(tmp) / "site"
        (site / "notebooks").mkdir(parents=True)
        for p in notebooks:
            shutil.copy2(p, site / "notebooks" / p.name)
        home = Path(tmp) / "jupyter"
        home.mkdir()
        with bs.jupyter_lab(site, home) as lab, bs.chromium() as browser:
            if args.cgroup:
                print(f"cgroup: {into_cgroup(args.cgroup)} processes moved into {args.cgroup}", flush=True)
            print(HEADER, flush=True)
            for notebook in notebooks:
                try:
                    rows += bench_notebook(browser, lab, notebook, args.drags, args.steps)
                except Exception as error:  # a benchmark reports what it could measure
                    print(f"{notebook.stem:<30} not measured: {type(error).__name__}: {str(error)[:200]}", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"reference_ms": reference, "rows": rows}, indent=1), encoding="utf-8")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
