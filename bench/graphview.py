"""The explorer's Graph view on the largest graph of the big trace (issue 23): shown in < 300 ms,
p95 frame < 16 ms while scrolling.

    python bench/graphview.py                                   # corpus/big/*.log, 5 rounds
    python bench/graphview.py LOG --rounds 9

The log is parsed once into bench/out/graphview/ (graphs/ included); its graph with the most
nodes is picked from graphs/*.json and the first event printing it from raw.jsonl. `tlscope serve`
serves the folder; each round launches chromium (as bench/viewers.py does: no frame-rate limit,
so a frame takes what its work takes), opens the explorer on that event's Payload tab and clicks
"Graph view". Measured:

* **shown**: ms from the click to the frame after the table of nodes is drawn (the graphs file
  fetched and decoded, the rows built, the first screen of rows in the DOM, painted);
* **frame p95 / max**: ms between animation frames while the node table is scrolled by one
  screen per frame for 3 s (bench/viewers.py's SCROLL), then the same folded by user line with
  every fold open; and, as a control taken in the same browser at the same load, the event
  table's p95 scrolled the same way (bench/viewers.py's figure) before the view is opened.
"""

from __future__ import annotations

import argparse
import json
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


def prepare(log: Path) -> Path:
    out = OUT / "big"
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


def serve(folder: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "tlscope", "serve", str(folder), "--port", "0", "--no-browser"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
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


def one_round(p: Any, url: str, index: int) -> dict[str, float]:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}#row={index}", timeout=120_000)
        hook = "window.__tlscope && window.__tlscope.payload && window.__tlscope.selected"
        wait(page, f"{hook} && window.__tlscope.selected.row === {index}")
        page.wait_for_selector(".g-open-button")
        # The control: the event table scrolled the same way in the same browser, at the same load.
        control = page.evaluate(SCROLL, {"selector": "#table", "seconds": 3})
        shown = page.evaluate(CLICK)
        frames = page.evaluate(SCROLL, {"selector": ".g-table", "seconds": 3})
        page.select_option(".g-f-fold", "source")
        page.click(".g-expand")
        folded = page.evaluate(SCROLL, {"selector": ".g-table", "seconds": 3})
        return {
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
    parser.add_argument(
        "log", nargs="?", type=Path, default=next(iter(sorted((REPO / "corpus" / "big").glob("*.log"))), None)
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.log is None:
        raise SystemExit("no log: generate corpus/big with python corpus/big_trace.py, or name one")
    folder = prepare(args.log)
    index, nodes, name = largest(folder)
    print(f"largest graph: {name}, {nodes} nodes, raw.jsonl event {index}")
    server, url = serve(folder)
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            runs = [one_round(p, url, index) for _ in range(args.rounds)]
    finally:
        server.terminate()
        server.wait()
    for key in ("shown_ms", "p95_ms", "max_ms", "folded_p95_ms", "events_table_p95_ms"):
        values = [r[key] for r in runs]
        print(f"{key}: median {statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})")


if __name__ == "__main__":
    main()
