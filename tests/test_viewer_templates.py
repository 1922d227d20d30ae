"""Both templates from `tlscope viewer new` to a passing test (docs/VIEWERS.md).

vanilla: the copy is served (/lib/ beside it, a real corpus trace) and opened in chromium.
react: `npm ci`, its Vitest tests, `npm run build`, the built dist/ opened in chromium from a
plain static host, then (once tlscope serve is on main) its own @playwright/test browser test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import StaticSite, manifest_ids, raw_events, wait_hook

from tlscope.cli import main as tlscope_main
from tlscope.commands import COMMANDS
from tlscope.viewers import LIB


def test_viewer_new_refuses_bad_names_and_existing_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tlscope_main(["viewer", "new", str(tmp_path / "Bad_Name"), "--template", "vanilla"]) == 1
    assert "not a viewer name" in capsys.readouterr().err
    (tmp_path / "taken").mkdir()
    assert tlscope_main(["viewer", "new", str(tmp_path / "taken")]) == 1
    assert "exists" in capsys.readouterr().err
    assert tlscope_main(["viewer", "templates"]) == 0
    assert capsys.readouterr().out.split() == ["react", "vanilla"]


#: Before the page's scripts: keep every state window.__tlscope passes through (a copy taken once
#: the script that changed it has run), so that a test checks all of them, not only those its
#: polls happen to see. A state a poll can see is one some test could wait for: on a loaded
#: machine polls come late and rare, and see any state that lasts from one task to the next.
RECORD_HOOK = """
(() => {
  const states = [];
  let hook, queued = false;
  const snap = () => { queued = false; states.push(JSON.parse(JSON.stringify(hook))); };
  const changed = () => { if (!queued) { queued = true; queueMicrotask(snap); } };
  const watch = (target) => new Proxy(target, {
    set(t, key, value) { t[key] = value; changed(); return true; },
  });
  Object.defineProperty(window, '__tlscopeStates', { value: states });
  Object.defineProperty(window, '__tlscope', {
    configurable: true,
    get() { return hook; },
    set(value) { if (value !== hook) { hook = watch(value); changed(); } },
  });
})();
"""


def hook_states(page: Any) -> list[dict[str, Any]]:
    states = page.evaluate("JSON.parse(JSON.stringify(window.__tlscopeStates))")
    assert isinstance(states, list) and states
    return states


def check_viewer_page(browser: object, url: str, folder: Path) -> None:
    """The page's hook, as its tests wait on it: `loaded` only with every event counted, and
    `filter` only with the filtered count (never a stale total beside a new flag)."""
    page = browser.new_page()  # type: ignore[attr-defined]
    page.add_init_script(RECORD_HOOK)
    page.goto(url)
    events = len(raw_events(folder))
    hook = wait_hook(page, lambda h: h.get("loaded") is True)
    assert hook["total"] == events
    assert set(hook["compileIds"]) == manifest_ids(folder)
    page.locator("li", has_text="[0/0]").first.click()
    hook = wait_hook(page, lambda h: h.get("filter") == "[0/0]")
    assert 0 < hook["total"] < events
    assert "cid=%5B0%2F0%5D" in page.url
    states = hook_states(page)
    assert [s for s in states if s.get("loaded") and not s.get("filter") and s["total"] != events] == []
    assert [s for s in states if s.get("filter") == "[0/0]" and not 0 < s["total"] < events] == []
    page.close()


def test_vanilla_template(browser: object, viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "my-view"
    assert tlscope_main(["viewer", "new", str(target), "--template", "vanilla"]) == 0
    assert (target / "index.html").is_file()
    assert "<title>my-view</title>" in (target / "index.html").read_text()
    assert 'my-view = "tlscope_viewer_my_view:folder"' in (target / "pyproject.toml").read_text()
    for name, folder in viewer_traces.items():
        site = StaticSite({"/lib": LIB, "/viewers/my-view": target, f"/traces/{name}": folder})
        try:
            check_viewer_page(browser, f"{site.url}/viewers/my-view/?trace=/traces/{name}/", folder)
        finally:
            site.close()


def npm(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", "TLSCOPE_CMD": f"{sys.executable} -m tlscope"}
    run = subprocess.run(["npm", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"npm {' '.join(args)} failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    return run.stdout


def test_react_template(browser: object, viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    target = tmp_path / "my-react-view"
    assert tlscope_main(["viewer", "new", str(target), "--template", "react"]) == 0
    package = json.loads((target / "package.json").read_text())
    assert package["name"] == "my-react-view"
    assert "react" in package["dependencies"] and "vite" in package["devDependencies"]
    assert (target / "vite.config.ts").is_file() and (target / "package-lock.json").is_file()
    assert (target / "src" / "vendor" / "tlscope" / "tlscope.d.ts").is_file()
    npm(["ci", "--no-audit", "--no-fund"], target)
    out = npm(["test"], target)
    assert "3 passed" in out
    npm(["run", "build"], target)
    dist = target / "dist"
    assert (dist / "index.html").is_file()
    for name, folder in viewer_traces.items():
        site = StaticSite({"/viewers/my-react-view": dist, f"/traces/{name}": folder})
        try:
            check_viewer_page(browser, f"{site.url}/viewers/my-react-view/?trace=/traces/{name}/", folder)
        finally:
            site.close()
    if "serve" in COMMANDS:
        # Its own browser test, as its user runs it: @playwright/test starts `tlscope serve --viewer dist`.
        out = npm(["run", "test:browser"], target)
        assert "1 passed" in out
