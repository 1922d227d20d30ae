"""The explorer's Graph view on a big graph (issue 23): shown in < 300 ms, p95 frame < 16 ms while
scrolling.

    python bench/graphview.py                   # corpus/traces/deep_stack (graphs of 1,400-9,400 nodes), 5 rounds
    python bench/graphview.py LOG --rounds 9    # e.g. the big trace, corpus/big/*.log
    python bench/graphview.py LOG --cpu         # and the renderer's CPU per scrolled frame

The log is parsed once into bench/out/graphview/<log name>/ (graphs/ included); its graph with
the most nodes is picked from graphs/*.json and the first event printing it from raw.jsonl.
`tlscope serve` serves the folder; each round launches chromium (as bench/viewers.py does: no
frame-rate limit, so a frame takes what its work takes). Measured:

* **opened**: ms from the navigation to `?view=graph&event=N` (the explorer loading the trace
  first) to the frame after the table of nodes is drawn; **opened_view**, of those, the view's
  own part (the hook's graphShownMs: from the event read to the rows built, its graphs file
  fetched and decoded);
* **idle rAF**: the animation-frame cadence of the page with nothing to do (p50 and p95): the
  floor of every frame time below, to judge the p95 by;
* then the explorer opened on that event's Payload tab, and "Graph view" clicked:
* **shown**: ms from the click to the frame after the table of nodes is drawn (the graphs file
  fetched and decoded, the rows built, the first screen of rows in the DOM, painted);
* **frame p95 / max**: ms between animation frames while the node table is scrolled by one
  screen per frame for 3 s (bench/viewers.py's SCROLL), then the same folded by user line with
  every fold open; and, as a control taken in the same browser at the same load, the event
  table's p95 scrolled the same way (bench/viewers.py's figure) before the view is opened;
* with `--cpu`, the renderer main thread's CPU ms per scrolled frame (the thread time of its tasks
  in a Chromium trace, divided by the frames), the Graph view's and the event table's, in a
  second pass of each scroll: what the frame costs, less shaken by the machine's load than the
  frame times (the trace slows the frames it records, so the p95 above is taken untraced).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from viewers import CHROMIUM_ARGS, SCROLL  # noqa: E402  (bench/ is a directory of scripts, not a package)

REPO = HERE.parent
OUT = HERE / "out" / "graphview"
CLICK = """async () => {
  const t0 = performance.now();
  document.querySelector('.g-open-button').click();
  await new Promise((resolve) => {
    const h = () => window.__tlscope;
    const poll = () => (h().graphReady && h().graphRows > 0 ? resolve() : setTimeout(poll, 1));
    poll();
  });
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return performance.now() - t0;
}"""


IDLE = """async () => {
  const frames = [];
  let last = performance.now();
  await new Promise((resolve) => {
    const tick = (now) => {
      frames.push(now - last);
      last = now;
      if (frames.length < 120) requestAnimationFrame(tick); else resolve();
    };
    requestAnimationFrame(tick);
  });
  return frames.slice(2);
}"""
OPENED = """async () => {
  await new Promise((resolve) => {
    const h = () => window.__tlscope;
    const poll = () => (h() && h().graphReady && h().graphRows > 0 ? resolve() : setTimeout(poll, 1));
    poll();
  });
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return [performance.now(), window.__tlscope.graphShownMs];
}"""


def default_log() -> Path | None:
    return next(iter(sorted((REPO / "corpus" / "traces" / "deep_stack").glob("*.log.gz"))), None)


def prepare(log: Path) -> Path:
    out = OUT / log.name.split(".")[0]
    if not (out / "manifest.json").is_file():
        subprocess.run(
            [sys.executable, "-m", "tlscope", str(log), "-o", str(out), "--no-browser", "--overwrite"], check=True
        )
    return out


def largest(folder: Path) -> tuple[int, int, str]:
    """(event index in raw.jsonl, nodes, payload name) of the graph with the most nodes."""
    sizes = {p.stem: len(json.loads(p.read_bytes())["graph"]["nodes"]) for p in (folder / "graphs").glob("*.json")}
    md5 = max(sizes, key=lambda k: sizes[k])
    name = f"payloads/{md5}.txt"
    with (folder / "raw.jsonl").open() as lines:
        next(lines)
        index = next(i for i, line in enumerate(lines) if f'"payload_filename":"{name}"' in line)
    return index, sizes[md5], name


def serve(folder: Path, src: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    """`tlscope serve` of `folder`, the viewers (and server) of `src` (a checkout's src/) if given."""
    command = [sys.executable, "-m", "tlscope", "serve", str(folder), "--port", "0", "--no-browser"]
    env = os.environ | ({"PYTHONPATH": str(src)} if src else {})
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
    assert server.stdout is not None
    found = re.search(r"http://127\.0\.0\.1:\d+", server.stdout.readline())
    if not found:
        raise SystemExit("tlscope serve printed no address")
    base = found.group(0)
    with urllib.request.urlopen(f"{base}/api/traces", timeout=120) as response:
        (trace,) = json.load(response)
    return server, f"{base}/viewers/explorer/?trace={urllib.parse.quote(trace['url'], safe='')}"


def wait(page: Any, test: str, timeout: float = 120) -> None:
    """Poll `test` (a JS expression) until true; the explorer's CSP allows no string eval in the
    page, so no wait_for_function."""
    end = time.monotonic() + timeout
    while not page.evaluate(f"() => Boolean({test})"):
        if time.monotonic() > end:
            raise SystemExit(f"timed out waiting for {test}")
        time.sleep(0.05)


def main_thread_ms(trace: Path) -> float:
    """CPU ms of the renderer main thread's tasks in a Chromium trace (their thread durations)."""
    data = json.loads(trace.read_bytes())
    events = data["traceEvents"] if isinstance(data, dict) else data
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"
    }
    return sum(
        float(e.get("tdur", 0)) / 1000
        for e in events
        if e.get("ph") == "X" and e.get("name") == "ThreadControllerImpl::RunTask" and (e["pid"], e["tid"]) in main
    )


def cpu_per_frame(browser: Any, page: Any, selector: str) -> float:
    """The main thread's CPU ms per frame while `selector` is scrolled a screen a frame for 2 s."""
    trace = OUT / "scroll-trace.json"
    browser.start_tracing(page=page, path=str(trace), categories=["toplevel"])
    frames = page.evaluate(SCROLL, {"selector": selector, "seconds": 2})
    browser.stop_tracing()
    return main_thread_ms(trace) / (len(frames) + 2)  # SCROLL drops its first two frames


def opened(p: Any, url: str, index: int) -> dict[str, float]:
    """ms from navigating to ?view=graph&event=N to the table drawn, in a browser of its own; and
    of those, the view's own (graphShownMs: from the event known, the trace's events read, to
    the rows built: the graphs file fetched and decoded)."""
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}&view=graph&event={index}", timeout=120_000)
        at, own = page.evaluate(OPENED)
        return {"opened_ms": float(at), "opened_view_ms": float(own)}
    finally:
        browser.close()


def one_round(p: Any, url: str, index: int, cpu: bool) -> dict[str, float]:
    result = opened(p, url, index)
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}#row={index}", timeout=120_000)
        hook = "window.__tlscope && window.__tlscope.payload && window.__tlscope.selected"
        wait(page, f"{hook} && window.__tlscope.selected.row === {index}")
        page.wait_for_selector(".g-open-button")
        idle = page.evaluate(IDLE)
        # The control: the event table scrolled the same way in the same browser, at the same load.
        control = page.evaluate(SCROLL, {"selector": "#table", "seconds": 3})
        if cpu:
            result["events_table_cpu_ms"] = cpu_per_frame(browser, page, "#table")
        shown = page.evaluate(CLICK)
        frames = page.evaluate(SCROLL, {"selector": ".g-table", "seconds": 3})
        if cpu:
            result["cpu_ms"] = cpu_per_frame(browser, page, ".g-table")
        page.select_option(".g-f-fold", "source")
        page.click(".g-expand")
        folded = page.evaluate(SCROLL, {"selector": ".g-table", "seconds": 3})
        return result | {
            "idle_raf_p50_ms": statistics.median(idle),
            "idle_raf_p95_ms": statistics.quantiles(idle, n=20)[-1],
            "shown_ms": shown,
            "p95_ms": statistics.quantiles(frames, n=20)[-1],
            "max_ms": max(frames),
            "folded_p95_ms": statistics.quantiles(folded, n=20)[-1],
            "events_table_p95_ms": statistics.quantiles(control, n=20)[-1],
            "rows": page.evaluate("window.__tlscope.graphRows"),
        }
    finally:
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", nargs="?", type=Path, default=default_log())
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpu", action="store_true", help="also the renderer's CPU per scrolled frame (traced)")
    parser.add_argument(
        "--base", type=Path, help="a checkout's src/ (e.g. from git archive): its viewers too, in alternate rounds"
    )
    args = parser.parse_args()
    if args.log is None:
        raise SystemExit("no log: corpus/traces/deep_stack has none; name one")
    folder = prepare(args.log)
    index, nodes, name = largest(folder)
    print(f"largest graph: {name}, {nodes} nodes, raw.jsonl event {index}")
    servers = {"this checkout": serve(folder)} | ({"base": serve(folder, args.base)} if args.base else {})
    from playwright.sync_api import sync_playwright

    runs: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
    try:
        with sync_playwright() as p:
            for _ in range(args.rounds):
                for name, (_, url) in servers.items():
                    runs[name].append(one_round(p, url, index, args.cpu))
    finally:
        for server, _ in servers.values():
            server.terminate()
            server.wait()
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, results in runs.items():
        print(f"{name}:")
        for key in results[0]:
            values = [r[key] for r in results]
            print(f"  {key}: median {statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})")


if __name__ == "__main__":
    main()
