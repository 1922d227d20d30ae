"""The explorer as tlscope serve sends it (viewers/build.py): one bundled app.js instead of a request
per module, rebuilt when a source file changes, and the source files should a build fail.
The page's scripts as the browser asks for them are checked in test_explorer_browser.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import LiveServer

from tlscope.serve import app as serve_app
from tlscope.viewers import EXPLORER, LIB
from tlscope.viewers import build as explorer_build
from tlscope.viewers.build import BuildError, build_explorer, packed_page, without_preloads
from tlscope.viewers.bundle import bundle, modules

IMPORT_OR_EXPORT = re.compile(r"^\s*(import|export)\b[^(.]", re.M)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[httpx.Client]:
    """tlscope serve in a thread of this process (so a test can patch the build it uses)."""
    live = LiveServer([], tmp_path)
    try:
        with httpx.Client(base_url=live.url, timeout=60) as c:
            yield c
    finally:
        live.close()


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A copy of the explorer and the client that the build reads instead of the package's."""
    explorer, lib = tmp_path / "src" / "explorer", tmp_path / "src" / "lib"
    shutil.copytree(EXPLORER, explorer)
    shutil.copytree(LIB, lib)
    monkeypatch.setattr(explorer_build, "EXPLORER", explorer)
    monkeypatch.setattr(explorer_build, "LIB", lib)
    # bundle.py resolves /lib/ imports through its own LIB.
    monkeypatch.setattr("tlscope.viewers.bundle.LIB", lib)
    return explorer, lib


def test_serve_sends_the_explorer_as_one_module(client: httpx.Client) -> None:
    page = client.get("/viewers/explorer/").text
    assert 'rel="modulepreload"' not in page
    # prefetch.js first, as a classic script (it must not wait for the module graph).
    assert page.index('<script src="prefetch.js"></script>') < page.index('<script type="module" src="app.js">')
    script = client.get("/viewers/explorer/app.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert IMPORT_OR_EXPORT.search(script.text) is None
    bundled = modules(EXPLORER / "app.js")
    assert {p.name for p in bundled} >= {"app.js", "table.js", "tlscope.js", "trace.js", "store.js", "virtual.js"}
    for path in bundled:
        assert f"// {path.name}\n" in script.text
    # The bundled modules are not sent on their own; the rest of the folder is, as it is.
    assert client.get("/viewers/explorer/table.js").status_code == 404
    for name in ("prefetch.js", "explorer.css"):
        assert client.get(f"/viewers/explorer/{name}").content == (EXPLORER / name).read_bytes()
    # The client stays at /lib/ for every other viewer.
    assert client.get("/lib/trace.js").status_code == 200


def test_a_failed_build_falls_back_to_the_source_files(client: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Path:
        raise BuildError("cannot bundle")

    monkeypatch.setattr(serve_app, "built_explorer", broken)
    assert client.get("/viewers/explorer/app.js").content == (EXPLORER / "app.js").read_bytes()
    assert client.get("/viewers/explorer/table.js").status_code == 200
    assert 'rel="modulepreload"' in client.get("/viewers/explorer/").text


def test_the_build_follows_edits_and_keeps_the_last_good_one(sources: tuple[Path, Path]) -> None:
    explorer, lib = sources
    builds = explorer_build._Builds()
    first = builds.get()
    assert builds.get() == first  # nothing changed: the same build
    table = explorer / "table.js"
    table.write_text(table.read_text() + "\n// edited-marker-1\n")
    os.utime(table, ns=(1, 2_000_000_000_000_000_000))
    second = builds.get()
    assert second != first and "edited-marker-1" in (second / "app.js").read_text()
    assert first.is_dir()  # a response may still be reading it
    # A client module edited too: /lib/ is a source of the build as well.
    store = lib / "store.js"
    store.write_text(store.read_text() + "\n// edited-marker-2\n")
    third = builds.get()
    assert "edited-marker-2" in (third / "app.js").read_text()
    assert not first.exists()  # the build before last is gone
    # A module the bundler cannot read: an error, and nothing half-made beside the last build.
    store.write_text(store.read_text() + "\nexport default 1;\n")
    with pytest.raises(BuildError):
        builds.get()
    assert builds.root is not None
    assert sorted(p.name for p in builds.root.iterdir()) == [second.name, third.name]
    shutil.rmtree(builds.root)


def test_build_explorer_is_whole_or_nothing(sources: tuple[Path, Path], tmp_path: Path) -> None:
    explorer, _ = sources
    index = explorer / "index.html"
    index.write_text(index.read_text().replace('<script src="prefetch.js"></script>', ""))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(BuildError, match=r"prefetch\.js"):
        build_explorer(out / "x")
    assert list(out.iterdir()) == []
    # A failure while writing (a module that cannot be bundled) leaves nothing either.
    index.write_text((EXPLORER / "index.html").read_text())
    (explorer / "sidebar.js").write_text("export default 1;\n")
    with pytest.raises(BuildError, match=r"sidebar\.js"):
        build_explorer(out / "x")
    assert list(out.iterdir()) == []
    (explorer / "sidebar.js").write_text((EXPLORER / "sidebar.js").read_text())
    build_explorer(out / "x")
    assert sorted(p.name for p in (out / "x").iterdir()) == ["app.js", "explorer.css", "index.html", "prefetch.js"]


def test_without_preloads_drops_the_links_and_their_note() -> None:
    page = (EXPLORER / "index.html").read_text()
    assert page.count('rel="modulepreload"') >= 10
    out = without_preloads(page)
    assert "modulepreload" not in out and "import level by import level" not in out
    assert out.count("\n") == page.count("\n") - page.count('rel="modulepreload"') - 2


def test_packed_page_inlines_everything_and_fetches_nothing() -> None:
    page = packed_page('{"files":{}}')
    assert 'rel="modulepreload"' not in page and '"prefetch.js"' not in page
    assert re.search(r"<script[^>]*\bsrc=", page) is None and '<link rel="stylesheet"' not in page
    assert '<script type="application/json" id="tlscope-pack">{"files":{}}</script>' in page


def test_the_source_folder_hosted_by_path_replaces_the_build(tmp_path: Path) -> None:
    """`tlscope serve --viewer src/tlscope/viewers/explorer`: the modules one by one (docs/VIEWERS.md)."""
    live = LiveServer([], tmp_path, viewers=[str(EXPLORER)])
    try:
        with httpx.Client(base_url=live.url, timeout=60) as c:
            assert c.get("/viewers/explorer/app.js").content == (EXPLORER / "app.js").read_bytes()
            assert c.get("/viewers/explorer/table.js").status_code == 200
            assert 'rel="modulepreload"' in c.get("/viewers/explorer/").text
    finally:
        live.close()


def test_bundle_binds_a_name_both_imported_and_re_exported_once(tmp_path: Path) -> None:
    # lib/trace.js uses Trace and KEEP_BYTES and re-exports them (its public import path).
    (tmp_path / "a.js").write_text("export const X = 2;\nexport const Y = 3;\n")
    (tmp_path / "b.js").write_text(
        "import { X } from './a.js';\nexport { X, Y } from './a.js';\nexport const Z = X * 10;\n"
    )
    (tmp_path / "main.js").write_text("import { X, Y, Z } from './b.js';\nglobalThis.out = [X, Y, Z];\n")
    script = bundle(tmp_path / "main.js")
    module_b = script.split("// b.js")[1].split("// main.js")[0]
    assert module_b.count("X: X") == 1, script
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the bundle's evaluation is not checked")
    run = subprocess.run(
        [node, "--input-type=module", "-e", script + "console.log(JSON.stringify(globalThis.out));"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[2,3,20]"
