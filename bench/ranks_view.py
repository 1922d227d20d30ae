"""The explorer's Ranks view on a 1,000-rank job through `tlscope serve` (issue 22): first paint,
frame times while zooming and panning the timeline, and the tab's memory.

    python bench/ranks_view.py --job OUT [--runs 5]
    python bench/ranks_view.py --ranks 1000 --work DIR [--runs 5]   # builds the job first

The job is an output folder of `tlscope LOGS -o OUT` on `corpus/scale.py corpus/traces/ranks_same_4
--ranks N` (with --ranks, made in --work once: 2.46 GB of logs at 1,000 ranks, a few minutes).
`tlscope serve OUT` runs as a subprocess (the real server, port 0); each run is a freshly launched
headless chromium (bench/viewers.py's flags: `--disable-frame-rate-limit --disable-gpu-vsync`, so a
frame lasts what its work takes, not a 60 Hz vsync) opening `?view=ranks&trace=...`:

* **first paint**: ms from navigation start to the frame after the view's first drawing (table,
  matrix and the timeline of every rank): the hook's `ranksPaintedAt`;
* **frames while zooming and panning**: an in-page requestAnimationFrame recorder notes each
  frame's timestamp and whether the timeline drew in it, while Playwright drives the mouse over
  the timeline for `--seconds` s: wheel zooms in and out around moving points (time and lanes:
  from 8 ranks per lane to one) and drags that pan both ways. Reported: p95 and max of the
  intervals between frames that follow a drawing (what a user sees while moving), and p95 of all;
  then, with no input pacing, a wheel event dispatched in the page in every frame for 3 s (15 in,
  15 out: the whole job to 1/36 of it and back): p95 and max of those frames;
* **the same drive under Chromium's tracing** (the categories DevTools' Performance panel
  records): each presented frame's pipeline, begin frame to presentation (`PipelineReporter`),
  p95 and median, and two of its stages: the wait before its main-thread part is sent
  (`BeginImplFrameToSendBeginMainFrame`) and the main thread's part to the commit
  (`SendBeginMainFrameToCommit`: the page's drawing, style, layout, paint), and the frame from
  its main-thread part sent to its presentation (the total without that wait: the frame's tick
  waiting for the page to ask for a frame, an input arriving and reaching the page, which the
  wheel's latency below counts); the page's main thread busy time per main-thread frame (its
  tasks between two `BeginMainThreadFrame`: input handlers, requestAnimationFrame, style, layout,
  paint), in wall and in thread CPU time; and each wheel input's latency to presentation (`EventLatency`), with
  its stages: the wait on the main thread's input queue (`RendererCompositorToMain`: Chromium
  hands continuous input to the main thread aligned to its frames), the synthetic input's way to
  the browser (`GenerationToBrowserMain`), and the page's own work (`RendererMainProcessing` +
  `RendererMainFinishedToCommit`: its handler, then the main thread until the frame is
  committed, the drawing included). With the idle cadence (`idle_frame_median_ms`: frames of the
  first drive in which nothing was drawn) the reader can tell the view's cost from the browser's;
* **memory**: the JS heap in use (CDP Performance.getMetrics JSHeapUsedSize) after the
  interaction, and the renderer's private memory (RssAnon + RssShmem; bench/viewers.py) after a
  full garbage collection.

The machine's load average is recorded before each run. Results: a markdown table on stdout and
JSON in bench/results/ranks_view-<stamp>.json.

That drive (`--drive playwright`) sends one input at a time and waits on each round trip, so its
frames follow Playwright's pacing, not the view's. The default, `--drive native`, gives the page
**continuous input the way a device does**, and measures frames against the display's cadence:

* chromium at its normal 60 Hz frame clock (none of the frame-rate flags above; `--free` adds them);
* the first paint as above; then 1 s with no input: the **idle cadence** (median rAF interval);
* then the gestures, through CDP from the browser side: `Input.synthesizeScrollGesture` with a
  mouse source (Chromium's own smoothness benchmarks use it: the browser generates wheel events
  at its input cadence, each an ordinary wheel event for the page), a zoom in (2,000 px of wheel
  down at 2,000 px/s... the whole job to about 1/30 of it, 8 ranks a lane to one), a sideways wheel
  (pan), a drag by `Input.dispatchMouseEvent` moves sent every 4 ms (a 250 Hz mouse) without
  waiting on each one, the sideways wheel back, the zoom out, and a drag back: about 6 s;
* recorded in the page: every animation frame's time and the view's draws (the hook's `draws`
  counter), the wheel and mousemove events that reached the page, and `long-animation-frame`
  entries (frames whose work took over 50 ms). Reported: the frame intervals' p50, p95 and max
  against the idle cadence, **dropped frames** (an interval over 1.5 times the idle cadence: a
  frame the display showed late), the most draws in one frame, and the view's draw ms;
* after the drive, the JS heap and the renderer's private memory after a full GC, as above.

`--base REV` serves REV's src/ (extracted with git archive, as bench/ab.py does) beside this
checkout's and alternates the runs A B B A ...: an interleaved A/B on the same job.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import viewers  # noqa: E402  (bench/ is scripts: its chromium flags and memory probe)

RECORD = """() => {
  const rec = { frames: [], drew: [], draws: [], last: null, stop: false };
  window.__rankFrames = rec;
  const tick = (now) => {
    const tl = window.__tlscope && window.__tlscope.timeline;
    rec.frames.push(now);
    rec.drew.push(tl !== rec.last);
    if (tl !== rec.last) rec.draws.push(tl.drawMs);
    rec.last = tl;
    if (!rec.stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
# A wheel event dispatched on the timeline in every frame for 3 s, 15 in then 15 out (the whole
# job to 1/36 of it and back, 8 ranks per lane to 1), around points moving over the plot: every
# frame draws, with no input pacing between them.
WHEEL_EVERY_FRAME = """async () => {
  const c = document.querySelector('.rk-canvas');
  const box = c.getBoundingClientRect();
  const gaps = [];
  let last = performance.now();
  let n = 0;
  const end = last + 3000;
  await new Promise((resolve) => {
    const tick = (now) => {
      gaps.push(now - last);
      last = now;
      n += 1;
      const x = box.left + 80 + ((n * 37) % (box.width - 100));
      const y = box.top + 24 + ((n * 13) % (box.height - 30));
      const deltaY = n % 30 < 15 ? -120 : 120;
      c.dispatchEvent(new WheelEvent('wheel', { deltaY, clientX: x, clientY: y, bubbles: true, cancelable: true }));
      if (now < end) requestAnimationFrame(tick); else resolve();
    };
    requestAnimationFrame(tick);
  });
  return gaps.slice(2);
}"""
STOP = """() => {
  const rec = window.__rankFrames;
  rec.stop = true;
  return { frames: rec.frames, drew: rec.drew, draws: rec.draws };
}"""


# Chromium's trace categories for the frames and inputs of a traced drive (DevTools' own).
TRACE_CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.frame",
    "input",
    "benchmark",
    "cc",
    "latencyInfo",
]
# EventLatency's stages that are the page's own work for an input: its handler on the main thread,
# then the main thread until the frame with its effect is committed (the view's drawing is there).
PAGE_STAGES = ("RendererMainProcessing", "RendererMainFinishedToCommit")


def async_spans(events: list[dict[str, Any]], name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(begin, end) of the trace's nestable async events called `name`, by id and process."""
    opened: dict[tuple[Any, Any], dict[str, Any]] = {}
    out = []
    for e in sorted((e for e in events if e.get("name") == name and e.get("ph") in ("b", "e")), key=lambda e: e["ts"]):
        key = (e.get("id") or (e.get("id2") or {}).get("local"), e.get("pid"))
        if e["ph"] == "b":
            opened[key] = e
        elif key in opened:
            out.append((opened.pop(key), e))
    return out


def wheel_stages(events: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Each MOUSE_WHEEL EventLatency's stages (ms), by stage name; "total" is input to presentation.
    A stage is a nested async event with its EventLatency's id (ids are reused: in time order, a
    stage belongs to the EventLatency open on its id)."""
    stages: dict[str, list[float]] = {"total": []}
    open_wheel: dict[tuple[Any, Any], float] = {}  # id -> the open wheel EventLatency's begin
    opened: dict[tuple[Any, ...], float] = {}
    for e in sorted((e for e in events if e.get("ph") in ("b", "e") and "id2" in e), key=lambda e: e["ts"]):
        key = (e["id2"].get("local"), e["pid"])
        if e["name"] == "EventLatency":
            kind = (e.get("args") or {}).get("event_latency", {}).get("event_type")
            if e["ph"] == "b" and kind == "MOUSE_WHEEL":
                open_wheel[key] = e["ts"]
            elif e["ph"] == "e" and key in open_wheel:
                stages["total"].append((e["ts"] - open_wheel.pop(key)) / 1000)
            continue
        if key not in open_wheel:
            continue
        if e["ph"] == "b":
            opened[(*key, e["name"])] = e["ts"]
        elif (*key, e["name"]) in opened:
            stages.setdefault(e["name"], []).append((e["ts"] - opened.pop((*key, e["name"]))) / 1000)
    return stages


def frame_stages(events: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Each presented frame's pipeline (ms): "total" (PipelineReporter, begin frame to
    presentation) and its stages by name (its nested events, on its id, in time order as
    wheel_stages reads EventLatency's)."""
    frames: list[dict[str, float]] = []
    current: dict[tuple[Any, Any], tuple[float, dict[str, float]]] = {}
    opened: dict[tuple[Any, ...], float] = {}
    frame_events = (e for e in events if e.get("ph") in ("b", "e") and "frame" in e.get("cat", ""))
    for e in sorted(frame_events, key=lambda e: e["ts"]):
        key = (e.get("id") or (e.get("id2") or {}).get("local"), e["pid"])
        if e["name"] == "PipelineReporter":
            state = (e.get("args") or {}).get("frame_reporter", {}).get("state")
            if e["ph"] == "b" and state == "STATE_PRESENTED_ALL":
                current[key] = (e["ts"], {})
            elif e["ph"] == "e" and key in current:
                began, stages = current.pop(key)
                frames.append({"total": (e["ts"] - began) / 1000, **stages})
            continue
        if key not in current:
            continue
        if e["ph"] == "b":
            opened[(*key, e["name"])] = e["ts"]
        elif (*key, e["name"]) in opened:
            current[key][1][e["name"]] = (e["ts"] - opened.pop((*key, e["name"]))) / 1000
    return frames


def main_thread_busy(events: list[dict[str, Any]], key: str = "dur") -> list[float]:
    """Per main-thread frame (between two BeginMainThreadFrame), the page's main thread busy time
    (ms): the tasks it ran, input handlers, requestAnimationFrame callbacks, style, layout, paint.
    `key` "dur": wall time; "tdur": the thread's CPU time (what a loaded machine does not stretch)."""
    dispatch = [e for e in events if e.get("name") == "EventDispatch"]
    if not dispatch:
        return []
    where = (dispatch[0]["pid"], dispatch[0]["tid"])
    on_main = [e for e in events if (e.get("pid"), e.get("tid")) == where]
    begins = sorted(e["ts"] for e in on_main if e.get("name") == "BeginMainThreadFrame")
    busy = [0.0] * max(0, len(begins) - 1)
    tasks = sorted((e["ts"], e.get(key, 0)) for e in on_main if e.get("name") == "RunTask" and e.get("ph") == "X")
    k = 0
    for ts, dur in tasks:
        while k + 1 < len(begins) and begins[k + 1] <= ts:
            k += 1
        if begins and begins[0] <= ts and k < len(busy):
            busy[k] += dur / 1000
    return busy


def traced_drive(browser: Any, page: Any, seconds: float) -> dict[str, Any]:
    """The drive again under Chromium's tracing (what DevTools' Performance panel records): each
    presented frame's pipeline (begin frame to presentation), the page's main-thread busy time per
    frame, and each wheel input's latency to presentation with the stages it spent."""
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    inputs = drive(page, seconds)
    data = json.loads(browser.stop_tracing())
    events: list[dict[str, Any]] = data["traceEvents"] if isinstance(data, dict) else data
    frames = frame_stages(events)
    presented = [f["total"] for f in frames]
    # The frame from its main-thread part being sent to its presentation: the wait before it
    # (BeginImplFrameToSendBeginMainFrame) is the frame's tick waiting for the page to ask for a
    # frame, i.e. for an input to arrive and reach the page (counted in the wheel's latency).
    sent = [f["total"] - f.get("BeginImplFrameToSendBeginMainFrame", 0.0) for f in frames]
    busy = [b for b in main_thread_busy(events) if b > 0]
    cpu = [b for b in main_thread_busy(events, "tdur") if b > 0]
    wheel = wheel_stages(events)
    own = [sum(v) for v in zip(*(wheel.get(s, []) for s in PAGE_STAGES), strict=False)]

    def med(values: list[float]) -> float | None:
        return round(statistics.median(values), 1) if values else None

    return {
        "traced_inputs": inputs,
        "traced_frames_presented": len(presented),
        "traced_frame_p95_ms": p95(presented),
        "traced_frame_median_ms": med(presented),
        # A frame's wait before its main-thread part starts, then the main thread to the commit
        # (the page's drawing, style, layout and paint).
        "traced_frame_wait_p95_ms": p95([f.get("BeginImplFrameToSendBeginMainFrame", 0.0) for f in frames]),
        "traced_frame_main_p95_ms": p95(
            [f["SendBeginMainFrameToCommit"] for f in frames if "SendBeginMainFrameToCommit" in f]
        ),
        "traced_frame_sent_p95_ms": p95(sent),
        "traced_frame_sent_median_ms": med(sent),
        "traced_main_busy_p95_ms": p95(busy),
        "traced_main_busy_max_ms": round(max(busy), 1) if busy else None,
        "traced_main_cpu_p95_ms": p95(cpu),
        "traced_main_cpu_max_ms": round(max(cpu), 1) if cpu else None,
        "wheels": len(wheel["total"]),
        "wheel_latency_median_ms": med(wheel["total"]),
        "wheel_latency_p95_ms": p95(wheel["total"]),
        "wheel_wait_for_main_median_ms": med(wheel.get("RendererCompositorToMain", [])),
        "wheel_injection_median_ms": med(wheel.get("GenerationToBrowserMain", [])),
        "wheel_page_work_median_ms": med(own),
        "wheel_page_work_p95_ms": p95(own),
    }


@contextlib.contextmanager
def served(job: Path, src: Path | None = None) -> Iterator[str]:
    """`tlscope serve JOB` on 127.0.0.1, port 0 (tlscope from `src`, a src/ folder, when given);
    yields the Ranks view's URL."""
    command = [sys.executable, "-m", "tlscope", "serve", str(job), "--port", "0", "--no-browser"]
    env = {**os.environ, "PYTHONPATH": str(src)} if src is not None else None
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
    try:
        assert server.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:\d+", server.stdout.readline())
        if not found:
            raise SystemExit("tlscope serve printed no address")
        base = found.group(0)
        with urllib.request.urlopen(f"{base}/api/traces", timeout=60) as response:
            (trace,) = json.load(response)
        # The parse (none: an output folder) and the explorer's build, before the first run.
        urllib.request.urlopen(f"{base}/api/traces/{trace['id']}/status", timeout=120).read()
        urllib.request.urlopen(f"{base}/viewers/explorer/app.js", timeout=120).read()
        yield f"{base}/viewers/explorer/?view=ranks&trace={urllib.parse.quote(trace['url'], safe='')}"
    finally:
        server.terminate()
        server.wait()


def build_job(ranks: int, work: Path) -> Path:
    logs, out = work / f"logs_{ranks}", work / f"job_{ranks}"
    if not (logs / "job_plan.json").is_file():
        scale = [str(REPO / "corpus" / "scale.py"), str(REPO / "corpus" / "traces" / "ranks_same_4")]
        subprocess.run([sys.executable, *scale, "--ranks", str(ranks), "-o", str(logs)], check=True)
    if not (out / "ranks.json").is_file():
        subprocess.run([sys.executable, "-m", "tlscope", str(logs), "-o", str(out), "--no-browser"], check=True)
    return out


def hook(page: Any) -> dict[str, Any]:
    value: dict[str, Any] = page.evaluate("JSON.parse(JSON.stringify(window.__tlscope || {}))")
    return value


def wait_painted(page: Any, timeout: float = 120) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        h = hook(page)
        if h.get("error"):
            raise SystemExit(f"the page failed: {h['error']}")
        if h.get("ranksPaintedAt") is not None and h.get("timeline"):
            return h
        time.sleep(0.05)
    raise SystemExit("the Ranks view did not paint")


def drive(page: Any, seconds: float) -> int:
    """Wheel zooms (in, then out) around moving points, and drags, over the timeline for `seconds`."""
    box = page.locator(".rk-canvas").bounding_box()
    x0, y0, w, h = box["x"] + 80, box["y"] + 24, box["width"] - 90, box["height"] - 30
    inputs, step, end = 0, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        phase = step % 40
        fx, fy = 0.15 + 0.7 * ((step * 7) % 10) / 10, 0.1 + 0.8 * ((step * 3) % 10) / 10
        if phase < 14 or 20 <= phase < 34:
            page.mouse.move(x0 + fx * w, y0 + fy * h)
            page.mouse.wheel(0, -120 if phase < 14 else 120)
        else:
            page.mouse.move(x0 + w / 2, y0 + h / 2)
            page.mouse.down()
            for k in range(1, 9):
                page.mouse.move(
                    x0 + w / 2 + (k * 25 if phase < 20 else -k * 25), y0 + h / 2 + (k * 6 if phase < 20 else -k * 6)
                )
            page.mouse.up()
        inputs += 1
        step += 1
    return inputs


def p95(values: list[float]) -> float | None:
    return round(statistics.quantiles(values, n=20)[-1], 1) if len(values) >= 2 else None


def one_run(p: Any, url: str, seconds: float) -> dict[str, Any]:
    load = os.getloadavg()[0]
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=viewers.CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url, wait_until="commit", timeout=120_000)
        h = wait_painted(page)
        page.evaluate(RECORD)
        inputs = drive(page, seconds)
        rec = page.evaluate(STOP)
        t, drew = rec["frames"], rec["drew"]
        gaps = [t[i] - t[i - 1] for i in range(1, len(t))]
        after_draw = [t[i] - t[i - 1] for i in range(2, len(t)) if drew[i - 1]]
        traced = traced_drive(browser, page, seconds)
        wheel = page.evaluate(WHEEL_EVERY_FRAME)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        heap = metrics.get("JSHeapUsedSize")
        cdp.send("HeapProfiler.collectGarbage")
        time.sleep(0.5)
        return {
            "load_before": round(load, 2),
            "ranks": h["ranks"],
            "events": h["timelineEvents"],
            "first_paint_ms": round(h["ranksPaintedAt"]),
            "inputs": inputs,
            "frames": len(gaps),
            "frames_drawn": len(after_draw),
            "frame_p95_ms": p95(after_draw),
            "frame_max_ms": round(max(after_draw), 1) if after_draw else None,
            "all_frames_p95_ms": p95(gaps),
            "frame_median_ms": round(statistics.median(after_draw), 1) if after_draw else None,
            "idle_frame_median_ms": round(
                statistics.median(g for g, d in zip(gaps, drew[:-1], strict=True) if not d), 1
            ),
            "draw_p95_ms": p95(rec["draws"]),
            "wheel_every_frame_p95_ms": p95(wheel),
            "wheel_every_frame_max_ms": round(max(wheel), 1),
            "read_ms": round(h["ranksTimings"]["readAt"] - h["ranksTimings"]["startedAt"]),
            "script_start_ms": round(h["ranksTimings"]["startedAt"]),
            "js_heap_mb": round(heap / 1e6, 1) if heap else None,
            "renderer_mb_after_gc": viewers.renderer_memory(browser),
            **traced,
        }
    finally:
        with contextlib.suppress(Exception):
            browser.close()


def spread(runs: list[dict[str, Any]], key: str) -> str:
    values = [r[key] for r in runs if r.get(key) is not None]
    if not values:
        return "—"
    return f"{statistics.median(values):g} ({min(values):g}-{max(values):g})"


# --drive native: continuous input from the browser side (the module's docstring).
NATIVE_RECORD = """() => {
  const hook = () => (window.__tlscope && window.__tlscope.timeline) || { drawMs: 0 };
  const rec = { frames: [], loaf: [], wheels: 0, moves: 0, stop: false };
  window.__nativeFrames = rec;
  addEventListener('wheel', () => { rec.wheels += 1; }, { capture: true, passive: true });
  addEventListener('mousemove', () => { rec.moves += 1; }, { capture: true, passive: true });
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) rec.loaf.push(e.duration);
    }).observe({ type: 'long-animation-frame' });
  } catch { rec.loaf = null; }
  let seen = 0;
  let last = hook();
  const tick = (now) => {
    const tl = hook();
    // A tree before the hook's draws counter (a --base) shows a new timeline object per draw:
    // at most one a frame is seen there.
    if (tl !== last) seen += 1;
    last = tl;
    rec.frames.push([now, tl.draws ?? seen, tl.drawMs]);
    if (!rec.stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
NATIVE_STOP = """() => {
  const rec = window.__nativeFrames;
  rec.stop = true;
  return { frames: rec.frames, loaf: rec.loaf, wheels: rec.wheels, moves: rec.moves };
}"""


async def native_drag(cdp: Any, at: tuple[float, float], by: tuple[float, float], seconds: float) -> None:
    """A drag: press, moves every 4 ms (a 250 Hz mouse) sent without waiting on each, release."""
    (x, y), (dx, dy) = at, by
    press = {"x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1}
    await cdp.send("Input.dispatchMouseEvent", {"type": "mousePressed", **press})
    steps, began, sent = max(1, int(seconds / 0.004)), time.monotonic(), []
    for k in range(1, steps + 1):
        move = {"type": "mouseMoved", "x": x + dx * k / steps, "y": y + dy * k / steps, "button": "left", "buttons": 1}
        sent.append(asyncio.ensure_future(cdp.send("Input.dispatchMouseEvent", move)))
        await asyncio.sleep(max(0.0, began + k * 0.004 - time.monotonic()))
    await asyncio.gather(*sent)
    release = {"type": "mouseReleased", "x": x + dx, "y": y + dy, "button": "left", "buttons": 0, "clickCount": 1}
    await cdp.send("Input.dispatchMouseEvent", release)


async def native_drive(page: Any, cdp: Any) -> None:
    """Zoom in (wheel), pan (sideways wheel), drag, pan back, zoom out, drag back: about 6 s of
    gestures the browser generates at its own input cadence."""
    box = await page.locator(".rk-canvas").bounding_box()
    x, y = box["x"] + 72 + (box["width"] - 72) * 0.3, box["y"] + box["height"] / 2

    async def scroll(**distance: float) -> None:
        gesture = {"x": x, "y": y, "speed": 2000, "gestureSourceType": "mouse", "preventFling": True, **distance}
        await cdp.send("Input.synthesizeScrollGesture", gesture)

    await scroll(yDistance=2000)  # wheel toward the user: deltaY < 0, zoom in
    await scroll(xDistance=-2000)
    await native_drag(cdp, (x, y), (-300, -150), 1.0)
    await scroll(xDistance=2000)
    await scroll(yDistance=-2000)
    await native_drag(cdp, (x, y), (300, 150), 1.0)


async def async_painted(page: Any, timeout: float = 120) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        h: dict[str, Any] = await page.evaluate("JSON.parse(JSON.stringify(window.__tlscope || {}))")
        if h.get("error"):
            raise SystemExit(f"the page failed: {h['error']}")
        if h.get("ranksPaintedAt") is not None and h.get("timeline"):
            return h
        await asyncio.sleep(0.05)
    raise SystemExit("the Ranks view did not paint")


def frame_figures(idle: dict[str, Any], drive: dict[str, Any]) -> dict[str, Any]:
    """The drive's frames against the idle cadence (NATIVE_STOP's records)."""
    cadence = statistics.median(b[0] - a[0] for a, b in itertools.pairwise(idle["frames"]))
    frames = drive["frames"]
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(frames)]
    per_frame = [b[1] - a[1] for a, b in itertools.pairwise(frames)]
    draws = [b[2] for a, b in itertools.pairwise(frames) if b[1] != a[1]]
    loaf = drive["loaf"]
    return {
        "idle_cadence_ms": round(cadence, 2),
        "frames": len(gaps),
        "frame_p50_ms": round(statistics.median(gaps), 1),
        "frame_p95_ms": p95(gaps),
        "frame_max_ms": round(max(gaps), 1),
        "dropped_frames": sum(g > 1.5 * cadence for g in gaps),
        "draws": sum(per_frame),
        "max_draws_per_frame": max(per_frame),
        "draw_p50_ms": round(statistics.median(draws), 1) if draws else None,
        "draw_p95_ms": p95(draws),
        "draw_max_ms": round(max(draws), 1) if draws else None,
        "wheels": drive["wheels"],
        "mousemoves": drive["moves"],
        "long_animation_frames": None if loaf is None else len(loaf),
        "long_animation_frame_max_ms": round(max(loaf), 1) if loaf else None,
    }


async def native_run(p: Any, url: str, free: bool) -> dict[str, Any]:
    load = os.getloadavg()[0]
    flags = ("--disable-frame-rate-limit", "--disable-gpu-vsync")
    args = viewers.CHROMIUM_ARGS if free else [a for a in viewers.CHROMIUM_ARGS if a not in flags]
    browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
    try:
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        await page.goto(url, wait_until="commit", timeout=120_000)
        h = await async_painted(page)
        await asyncio.sleep(1.5)  # the zoom levels, built while the page is idle after its first paint
        cdp = await page.context.new_cdp_session(page)
        await page.evaluate(NATIVE_RECORD)
        await asyncio.sleep(1.0)
        idle = await page.evaluate(NATIVE_STOP)
        await page.evaluate(NATIVE_RECORD)
        await native_drive(page, cdp)
        drive = await page.evaluate(NATIVE_STOP)
        await cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in (await cdp.send("Performance.getMetrics"))["metrics"]}
        await cdp.send("HeapProfiler.collectGarbage")
        await asyncio.sleep(0.5)
        info = await (await browser.new_browser_cdp_session()).send("SystemInfo.getProcessInfo")
        heap = metrics.get("JSHeapUsedSize")
        return {
            "load_before": round(load, 2),
            "ranks": h["ranks"],
            "events": h["timelineEvents"],
            "first_paint_ms": round(h["ranksPaintedAt"]),
            "script_start_ms": round(h["ranksTimings"]["startedAt"]),
            "read_ms": round(h["ranksTimings"]["readAt"] - h["ranksTimings"]["startedAt"]),
            **frame_figures(idle, drive),
            "js_heap_mb": round(heap / 1e6, 1) if heap else None,
            "renderer_mb_after_gc": viewers.private_memory(info),
        }
    finally:
        with contextlib.suppress(Exception):
            await browser.close()


NATIVE_KEYS = [
    "first_paint_ms", "idle_cadence_ms", "frame_p50_ms", "frame_p95_ms", "frame_max_ms", "dropped_frames",
    "frames", "draws", "max_draws_per_frame", "draw_p50_ms", "draw_p95_ms", "draw_max_ms", "wheels",
    "mousemoves", "long_animation_frames", "js_heap_mb", "renderer_mb_after_gc", "load_before",
]  # fmt: skip


async def native_main(urls: dict[str, str], runs: int, free: bool) -> dict[str, list[dict[str, Any]]]:
    """`runs` native runs per side, the sides alternating A B B A ... (one side: in a row)."""
    from playwright.async_api import async_playwright

    sides = list(urls)
    out: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    async with async_playwright() as p:
        for k in range(runs):
            for side in sides if k % 2 == 0 else sides[::-1]:
                out[side].append(await native_run(p, urls[side], free))
                print(json.dumps({"side": side, **out[side][-1]}), file=sys.stderr)
    return out


def base_src(rev: str, into: Path) -> Path:
    """REV's src/ extracted with git archive (as bench/ab.py does)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def native_report(job: Path, args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as stack:
        srcs: dict[str, Path | None] = {"this": None}
        if args.base:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ranks-view-base-")))
            srcs = {f"base {args.base}": base_src(args.base, tmp), "this": REPO / "src"}
        urls = {side: stack.enter_context(served(job, src)) for side, src in srcs.items()}
        results = asyncio.run(native_main(urls, args.runs, args.free))
    print("| side | ranks | timeline events | runs | " + " | ".join(NATIVE_KEYS) + " |")
    print("|---" * (4 + len(NATIVE_KEYS)) + "|")
    for side, runs in results.items():
        cells = " | ".join(spread(runs, k) for k in NATIVE_KEYS)
        print(f"| {side} | {runs[0]['ranks']:,} | {runs[0]['events']:,} | {len(runs)} | {cells} |")
    clock = "no frame-rate limit, no vsync" if args.free else "60 Hz"
    print(f"\nmedian (min-max) over cold runs; chromium at {clock}; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    results_dir = HERE / "results"
    results_dir.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (results_dir / f"ranks_view-native-{stamp}.json").write_text(json.dumps(results, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--job", type=Path, help="a parsed multi-rank output folder")
    parser.add_argument("--ranks", type=int, default=1000, help="with --work: build a job of this many ranks")
    parser.add_argument("--work", type=Path, help="where to build (and keep) the job")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=4.0, help="--drive playwright: of zooming and panning per run")
    parser.add_argument("--drive", choices=["native", "playwright"], default="native", help="how input is given")
    parser.add_argument("--free", action="store_true", help="--drive native: no frame-rate limit, no vsync")
    parser.add_argument("--base", help="--drive native: also serve this revision's src/, runs alternating")
    args = parser.parse_args()
    job = args.job if args.job is not None else build_job(args.ranks, args.work or Path("/tmp/tlscope-ranks-view"))
    if args.drive == "native":
        native_report(job, args)
        return
    from playwright.sync_api import sync_playwright

    runs = []
    with served(job) as url, sync_playwright() as p:
        for _ in range(args.runs):
            runs.append(one_run(p, url, args.seconds))
            print(json.dumps(runs[-1]), file=sys.stderr)
    keys = ["first_paint_ms", "script_start_ms", "read_ms", "frame_p95_ms", "frame_max_ms", "all_frames_p95_ms"]
    keys += ["draw_p95_ms", "wheel_every_frame_p95_ms", "wheel_every_frame_max_ms", "frames_drawn", "js_heap_mb"]
    keys += ["renderer_mb_after_gc", "load_before"]
    keys += ["idle_frame_median_ms", "traced_frame_p95_ms", "traced_frame_median_ms", "traced_main_busy_p95_ms"]
    keys += ["traced_main_cpu_p95_ms", "traced_main_cpu_max_ms", "traced_frame_wait_p95_ms", "traced_frame_main_p95_ms"]
    keys += ["traced_frame_sent_p95_ms", "traced_frame_sent_median_ms"]
    keys += ["wheel_latency_median_ms", "wheel_latency_p95_ms", "wheel_wait_for_main_median_ms"]
    keys += ["wheel_injection_median_ms", "wheel_page_work_median_ms", "wheel_page_work_p95_ms"]
    print("| ranks | timeline events | runs | " + " | ".join(keys) + " |")
    print("|---" * (3 + len(keys)) + "|")
    print(
        f"| {runs[0]['ranks']:,} | {runs[0]['events']:,} | {len(runs)} | "
        + " | ".join(spread(runs, k) for k in keys)
        + " |"
    )
    print(
        f"\nmedian (min-max) over {len(runs)} cold runs; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / f"ranks_view-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
