"""Viewer benchmarks in headless chromium: the explorer against a plain full-DOM table.

    python bench/viewers.py                      # every case
    python bench/viewers.py --cases 40k 1m       # some
    python bench/viewers.py --server serve       # through `tlscope serve` instead (its events API past the limit)
    python bench/viewers.py --list

Cases (output folders made under bench/out/viewers/ on first use):

| case | events | what |
|---|---|---|
| `big` | ~20k | the big corpus trace (corpus/big_trace.py; `ln -s /work/big corpus/big`), parsed |
| `40k` | 40,000 | the big trace's events repeated (bench/synth.py `synthesize`) |
| `1m` | 1,000,000 | small synthetic events, ~130 bytes each (bench/synth.py `compact`) |

Each case is opened in a fresh chromium by each viewer: `explorer` (the default viewer) and
`fulldom` (bench/fulldom/: the whole raw.jsonl as one table in the DOM, what tlparse-scope does),
both through one local server on 127.0.0.1: `--server static` (default; bench/staticserve.py,
http.server over HTTP/1.1 with Range, serving the explorer as tlscope serve sends it, its modules
bundled in one app.js (viewers/build.py): every case is held in the tab) or `--server serve`
(`tlscope serve CASES --viewer bench/fulldom`: text sent gzip-encoded, and past 300,000 events or
128 MiB the explorer pages through the events API instead of loading raw.jsonl). Measured:

* **first rows**: ms from navigation start to the frame after the first rows are drawn
  (`window.__tlscope.firstRowsAt`), and (in brackets) from the moment the viewer's script
  starts (`startedAt`: the page and its modules are loaded, what is left is the viewer's work).
  The browser is freshly launched (`--browser cold`, the default), has drawn a blank page first
  (`warm`), or has also opened the tab and gone idle (`settled`: its processes used under 10% of
  a core for 0.5 s, at most 15 s after launch). A fresh chromium spends about 0.4 CPU-s starting up (its browser
  process and a top-chrome WebUI renderer) in the very time the page loads, which on two cores
  makes the cold figure mostly chromium's own start; `settled` is a user's running, idle browser
  opening a link;
* **loaded**: ms until every event is in (`loadedAt`);
* **frame p95 / max**: the time between animation frames while the table is scrolled by one
  screen per frame for 3 s. Chromium runs with `--disable-frame-rate-limit --disable-gpu-vsync`,
  so a frame takes what its work takes instead of waiting for a 60 Hz vsync;
* **tab memory**: the renderer process's memory (MB) after loading and
  scrolling (private memory of the tab's renderer: RssAnon + RssShmem), again after a full
  garbage collection (what the tab settles to), and the JS heap in use (with array buffers).

The full-DOM table gets `--timeout` seconds (default 180) to load; past that it is reported as
not finished. `--rounds N` runs each case and viewer N times and gives medians. Results: a
markdown table on stdout and bench/results/viewers-<stamp>.{md,json}.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out" / "viewers"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-frame-rate-limit",
    "--disable-gpu-vsync",
    "--no-first-run",
    "--enable-precise-memory-info",
]
SCROLL = """async ({ selector, seconds }) => {
  const el = document.querySelector(selector);
  const frames = [];
  let last = performance.now();
  const end = last + seconds * 1000;
  await new Promise((resolve) => {
    const tick = (now) => {
      frames.push(now - last);
      last = now;
      el.scrollTop += el.clientHeight;
      if (el.scrollTop + el.clientHeight >= el.scrollHeight) el.scrollTop = 0;
      if (now < end) requestAnimationFrame(tick); else resolve();
    };
    requestAnimationFrame(tick);
  });
  return frames.slice(2);
}"""


@dataclass
class Result:
    case: str
    viewer: str
    events: int
    raw_mb: float
    first_rows_ms: float | None = None
    script_to_rows_ms: float | None = None
    loaded_ms: float | None = None
    frame_p95_ms: float | None = None
    frame_max_ms: float | None = None
    frames: int = 0
    rss_mb: float | None = None
    settled_mb: float | None = None
    heap_mb: float | None = None
    note: str = ""


def _synth() -> Any:
    sys.path.insert(0, str(HERE))
    import synth

    return synth


def prepare(case: str) -> Path:
    """The output folder of a case, made once."""
    folder = OUT / case
    if (folder / "manifest.json").is_file():
        return folder
    OUT.mkdir(parents=True, exist_ok=True)
    if case == "big":
        logs = sorted((REPO / "corpus" / "big").glob("*.log*"))
        if not logs:
            raise SystemExit("corpus/big has no log: run corpus/big_trace.py (or ln -s /work/big corpus/big)")
        subprocess.run([sys.executable, "-m", "tlscope", str(logs[0]), "-o", str(folder), "--no-browser"], check=True)
    elif case == "40k":
        _synth().synthesize(folder, 40_000, prepare("big"))
    elif case == "1m":
        _synth().compact(folder, 1_000_000)
    else:
        raise SystemExit(f"unknown case {case!r}")
    return folder


def site_root() -> Path:
    """One folder served by http.server: symlinks to the JS client, the viewers and the cases."""
    from tlscope.viewers import LIB
    from tlscope.viewers.build import build_explorer

    root = OUT / "site"
    # The explorer as tlscope serve sends it (one bundled app.js: viewers/build.py), made afresh.
    explorer = root / "viewers" / "explorer"
    explorer.parent.mkdir(parents=True, exist_ok=True)
    if explorer.is_symlink():
        explorer.unlink()
    shutil.rmtree(explorer, ignore_errors=True)
    build_explorer(explorer)
    links = {root / "lib": LIB, root / "viewers" / "fulldom": HERE / "fulldom"}
    links.update({root / "traces" / p.name: p for p in OUT.iterdir() if p.is_dir() and p.name != "site"})
    for link, target in links.items():
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(target.resolve())
    return root


PageUrl = Callable[[str, str], str]


@contextlib.contextmanager
def static_site(folders: dict[str, Path]) -> Iterator[PageUrl]:
    """bench/staticserve.py over site_root(); yields (viewer, case) -> the page's URL."""
    server = subprocess.Popen(
        [sys.executable, str(HERE / "staticserve.py"), str(site_root())],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip()
        yield lambda viewer, case: f"{base}/viewers/{viewer}/?trace=/traces/{case}/"
    finally:
        server.terminate()
        server.wait()


@contextlib.contextmanager
def serve_site(folders: dict[str, Path]) -> Iterator[PageUrl]:
    """`tlscope serve CASES --viewer bench/fulldom` on 127.0.0.1, port 0; yields (viewer, case) -> URL."""
    command = [sys.executable, "-m", "tlscope", "serve", *map(str, folders.values()),
               "--viewer", str(HERE / "fulldom"), "--port", "0", "--no-browser"]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    try:
        assert server.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:\d+", server.stdout.readline())
        if not found:
            raise SystemExit("tlscope serve printed no address")
        base = found.group(0)
        with urllib.request.urlopen(f"{base}/api/traces", timeout=60) as response:
            traces = json.load(response)
        urls = {case: next(t["url"] for t in traces if t["id"].startswith(f"{folder.name}-"))
                for case, folder in folders.items()}  # fmt: skip
        yield lambda viewer, case: f"{base}/viewers/{viewer}/?trace={urllib.parse.quote(urls[case], safe='')}"
    finally:
        server.terminate()
        server.wait()


def renderer_memory(browser: Any) -> float | None:
    """The tab's private memory in MB: RssAnon + RssShmem of the biggest renderer process.

    Chromium keeps spare renderers beside the page's, and VmRSS counts the shared chromium
    binary in each, so neither a sum nor VmRSS says what the tab costs; its private resident
    memory (what Chrome's task manager calls the memory footprint, near enough) does.
    """
    return private_memory(browser.new_browser_cdp_session().send("SystemInfo.getProcessInfo"))


def private_memory(info: dict[str, Any]) -> float | None:
    """renderer_memory's figure from CDP SystemInfo.getProcessInfo's answer (also for async callers)."""
    best = 0
    for proc in info.get("processInfo", []):
        if proc.get("type") != "renderer":
            continue
        try:
            fields = dict(line.split(":", 1) for line in Path(f"/proc/{proc['id']}/status").read_text().splitlines())
        except OSError:
            continue
        private = sum(int(fields[k].split()[0]) for k in ("RssAnon", "RssShmem") if k in fields)
        best = max(best, private)
    return round(best / 1024, 1) if best else None


def wait_loaded(page: Any, timeout: float) -> dict[str, Any]:
    """The hook once `loaded`, or {} after `timeout` s. Polled from here with plain evaluates:
    Playwright's wait_for_function evaluates its predicate in a way a viewer CSP without
    'unsafe-eval' (tlscope serve's) refuses. A page whose script holds its thread (a full-DOM
    table of a million rows) cannot answer an evaluate: the watchdog ends that browser."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.evaluate("Boolean(window.__tlscope && window.__tlscope.loaded)"):
            hook: dict[str, Any] = page.evaluate("JSON.parse(JSON.stringify(window.__tlscope))")
            return hook
        time.sleep(0.1)
    return {}


def _chromium_pids() -> set[int]:
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"chromium" in (entry / "cmdline").read_bytes():
                    pids.add(int(entry.name))
            except OSError:
                pass
    return pids


def _watchdog(pids: set[int], after: float) -> threading.Timer:
    """Kill this run's chromium after `after` s: a page stuck building a million DOM rows holds
    its renderer, and Playwright's calls (even close) wait on it."""

    def kill() -> None:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    timer = threading.Timer(after, kill)
    timer.daemon = True
    timer.start()
    return timer


def _cpu_seconds(pids: set[int]) -> float:
    ticks = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def settle(pids: Callable[[], set[int]], idle: float = 0.1, window: float = 0.5, limit: float = 15) -> float:
    """Wait until the processes `pids()` use under `idle` of a core over `window` s (at most
    `limit` s); the seconds waited."""
    start = last_at = time.monotonic()
    last = _cpu_seconds(pids())
    while time.monotonic() - start < limit:
        time.sleep(window)
        now, at = _cpu_seconds(pids()), time.monotonic()
        if now - last < idle * (at - last_at):
            break
        last, last_at = now, at
    return time.monotonic() - start


def measure(p: Any, page_url: str, viewer: str, case: str, folder: Path, timeout: float, start: str = "cold") -> Result:
    manifest = json.loads((folder / "manifest.json").read_text())
    result = Result(case, viewer, manifest["raw_jsonl_events"], round((folder / "raw.jsonl").stat().st_size / 1e6, 1))
    before = _chromium_pids()
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    watchdog = _watchdog(_chromium_pids() - before, timeout + 30)
    try:
        if start != "cold":  # a browser already running, as a user's is: one page drawn first, on no site of ours
            browser.new_page().set_content("<p>warm</p>")
        idle = (lambda: settle(lambda: _chromium_pids() - before)) if start == "settled" else None
        return _measure_in(browser, page_url, viewer, result, timeout, idle)
    except Exception as err:  # the watchdog killed a stuck browser
        result.note = result.note or f"did not finish within {timeout:.0f} s ({type(err).__name__})"
        return result
    finally:
        watchdog.cancel()
        with contextlib.suppress(Exception):
            browser.close()


def _measure_in(
    browser: Any, page_url: str, viewer: str, result: Result, timeout: float, idle: Callable[[], object] | None
) -> Result:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    if idle is not None:  # the tab open (its renderer started) and the browser idle: then the link
        idle()
    page.goto(page_url, wait_until="commit", timeout=120_000)
    hook = wait_loaded(page, timeout)
    if not hook.get("loaded"):
        result.note = f"not loaded after {timeout:.0f} s"
        result.rss_mb = renderer_memory(browser)
        return result
    result.first_rows_ms = round(hook["firstRowsAt"])
    result.script_to_rows_ms = round(hook["firstRowsAt"] - hook.get("startedAt", 0))
    result.loaded_ms = round(hook["loadedAt"])
    assert hook["total"] == result.events, (hook["total"], result.events)
    frames = page.evaluate(SCROLL, {"selector": "#table" if viewer == "explorer" else "#scroller", "seconds": 3})
    if len(frames) >= 2:
        result.frames = len(frames)
        result.frame_p95_ms = round(statistics.quantiles(frames, n=20)[-1], 1)
        result.frame_max_ms = round(max(frames), 1)
    result.rss_mb = renderer_memory(browser)
    # Then after a full collection (what the tab settles to: garbage of the load, and bytes
    # dropped once indexed, are only returned by the next major GC).
    page.context.new_cdp_session(page).send("HeapProfiler.collectGarbage")
    for _ in range(5):  # the process list can come back empty: ask again
        time.sleep(0.5)
        result.settled_mb = renderer_memory(browser)
        if result.settled_mb is not None:
            break
    heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : null")
    result.heap_mb = round(heap / 1e6, 1) if heap else None
    return result


def combine(runs: list[Result]) -> Result:
    """One result of several runs of a case and viewer: each figure's median over the runs that
    have it, the spread of first rows in the note."""
    if len(runs) == 1:
        return runs[0]
    out = Result(runs[0].case, runs[0].viewer, runs[0].events, runs[0].raw_mb)
    for name in ("first_rows_ms", "script_to_rows_ms", "loaded_ms", "frame_p95_ms", "frame_max_ms", "frames",
                 "rss_mb", "settled_mb", "heap_mb"):  # fmt: skip
        values = [getattr(r, name) for r in runs if getattr(r, name) is not None]
        if values:
            setattr(out, name, round(statistics.median(values), 1))
    firsts = sorted(r.first_rows_ms for r in runs if r.first_rows_ms is not None)
    spread = f"first rows {firsts[0]:.0f}-{firsts[-1]:.0f}" if firsts else ""
    notes = sorted({r.note for r in runs if r.note})
    out.note = "; ".join([f"median of {len(runs)} runs", spread, *notes]).strip("; ")
    return out


def table(results: list[Result]) -> str:
    head = "| case | viewer | events | raw.jsonl MB | first rows ms | loaded ms | frame p95 ms | frame max ms | tab memory MB | after GC MB | JS heap MB | note |"
    rows = [head, "|" + "---|" * 12]
    for r in results:
        rows_ms = None if r.first_rows_ms is None else f"{r.first_rows_ms} ({r.script_to_rows_ms})"
        cells = [
            r.case,
            r.viewer,
            f"{r.events:,}",
            r.raw_mb,
            rows_ms,
            r.loaded_ms,
            r.frame_p95_ms,
            r.frame_max_ms,
            r.rss_mb,
            r.settled_mb,
            r.heap_mb,
            r.note,
        ]
        rows.append("| " + " | ".join("—" if c is None else str(c) for c in cells) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="*", default=["big", "40k", "1m"])
    parser.add_argument("--viewers", nargs="*", default=["explorer", "fulldom"])
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--server", choices=["static", "serve"], default="static")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each case and viewer (a new browser each); the table gives medians")  # fmt: skip
    parser.add_argument("--browser", choices=["cold", "warm", "settled"], default="cold",
                        help="the browser a page opens in: fresh, after a blank page, or idle too")  # fmt: skip
    args = parser.parse_args()
    if args.list:
        print("big 40k 1m")
        return
    folders = {case: prepare(case) for case in args.cases}
    site = serve_site if args.server == "serve" else static_site
    with site(folders) as page_url:
        from playwright.sync_api import sync_playwright

        results = []
        with sync_playwright() as p:
            for case, folder in folders.items():
                for viewer in args.viewers:
                    runs = []
                    for _ in range(args.rounds):
                        runs.append(
                            measure(p, page_url(viewer, case), viewer, case, folder, args.timeout, args.browser)
                        )
                        print(table(runs[-1:]).splitlines()[-1], flush=True)
                    results.append(combine(runs))
    text = table(results)
    print(f"\n{text}\n\nmachine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    results_dir = HERE / "results"
    results_dir.mkdir(exist_ok=True)
    head = f"server: {args.server}, browser: {args.browser}, rounds: {args.rounds}"
    (results_dir / f"viewers-{stamp}.md").write_text(f"{head}\n\n{text}\n")
    (results_dir / f"viewers-{stamp}.json").write_text(json.dumps([asdict(r) for r in results], indent=1))


if __name__ == "__main__":
    main()
