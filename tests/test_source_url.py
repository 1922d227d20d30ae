"""--source-url (issue 23, the Graph view's links to user lines): only http(s) URLs with a host are
accepted (docs/SECURITY.md); serve adds it to each trace's viewer link, pack into the packed page
(with the graphs files of the payloads it packs)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest
from helpers import REPO

from tlscope.serve.config import ConfigError, ServeConfig, check, viewer_query


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "https://", "//example.com/x",
     "https://user:pw@example.com/r", "https://example.com/a b", 'https://example.com/"x'],
)  # fmt: skip
def test_only_http_urls_with_a_host_are_accepted(url: str) -> None:
    with pytest.raises(ConfigError):
        check(ServeConfig(source_url=url))


def test_serve_adds_the_source_url_to_each_viewer_link() -> None:
    config = check(ServeConfig(source_url="https://github.com/o/r/blob/0123abc", source_root="/home/u/r"))
    query = viewer_query(config)
    assert query == "&source_url=https%3A%2F%2Fgithub.com%2Fo%2Fr%2Fblob%2F0123abc&source_root=%2Fhome%2Fu%2Fr"
    assert viewer_query(check(ServeConfig())) == ""


def test_pack_carries_the_source_url_and_the_graphs_files(tmp_path: Path) -> None:
    from tlscope.cli import main

    out = tmp_path / "t.html"
    log = REPO / "corpus" / "traces" / "simple"
    assert main(["pack", str(log), "-o", str(out), "--source-url", "https://example.com/r/blob/abc"]) == 0
    found = re.search(r'<script type="application/json" id="tlscope-pack">(.*?)</script>', out.read_text(), re.S)
    assert found
    data = json.loads(found.group(1))
    assert data["source_url"] == "https://example.com/r/blob/abc"
    graphs = [name for name in data["files"] if name.startswith("graphs/")]
    assert graphs
    stored = json.loads(gzip.decompress(base64.b64decode(data["files"][graphs[0]])))
    assert stored["payload"] in data["files"] and stored["graph"]["nodes"]
    assert main(["pack", str(log), "-o", str(tmp_path / "u.html"), "--source-url", "javascript:alert(1)"]) != 0
