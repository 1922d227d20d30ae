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


@pytest.mark.parametrize(
    ("file", "root", "href"),
    [
        ("$CWD/corpus/scenarios/x.py", "", "https://h/r/blob/abc/corpus/scenarios/x.py#L7"),
        ("/home/u/r/pkg/m.py", "/home/u/r", "https://h/r/blob/abc/pkg/m.py#L7"),
        ("/home/u/r/pkg/m.py", "/home/u/r/", "https://h/r/blob/abc/pkg/m.py#L7"),
        ("pkg/a b#c.py", "", "https://h/r/blob/abc/pkg/a%20b%23c.py#L7"),
        ("/home/u/other/m.py", "/home/u/r", None),  # outside the root: stays absolute
        ("/etc/passwd", "", None),
        ("$CWD/../../etc/passwd", "", None),
        ("/home/u/r/../../../etc/passwd", "/home/u/r", None),
        ("pkg//m.py", "", None),
        ("", "", None),
    ],
)
def test_a_user_line_links_under_the_source_url_only(file: str, root: str, href: str | None) -> None:
    """write/source_link.py, the rule the report's links follow (graphrows.js sourceHref, the
    explorer's): a logged path never reaches outside the URL's tree."""
    from tlscope.write.source_link import source_href

    assert source_href("https://h/r/blob/abc/", root, file, 7) == href
    assert source_href("", root, file, 7) is None and source_href("javascript:x", root, file, 7) is None


def test_the_plain_command_links_the_reports_user_lines_and_its_explorer_link(tmp_path: Path) -> None:
    """`tlscope LOG --source-url URL`: the report's graph breaks and recompile fixes link their
    user lines to URL/<file>#L<line>; its explorer note's commands and link carry the URL; a
    javascript: URL is refused (exit status 2) before anything is written."""
    from tlscope.cli import main

    url = "https://github.com/o/r/blob/0123abc"
    for name, count in (("graph_breaks", 4), ("recompiles_dynamic", 4)):
        out = tmp_path / name
        log = next((REPO / "corpus" / "traces" / name).glob("*.log.gz"))
        assert main([str(log), "-o", str(out), "--no-browser", "--source-url", url]) == 0
        page = (out / "index.html").read_text()
        data = json.loads((out / "compiles.json").read_text())
        frames = [g["user_frame"] for g in data["graph_breaks"][:20]] + [
            c["recompile"]["fix"]["where"] for c in data["compiles"] if c["recompile"] and c["recompile"]["fix"]
        ]
        links = re.findall(r'<a href="(https://github\.com/o/r/blob/0123abc/[^"]*)" rel="noreferrer">', page)
        assert len(links) >= count
        assert sorted(set(links)) == sorted(
            {f"{url}/{f['file'].removeprefix('$CWD/')}#L{f['line']}" for f in frames if f}
        )
        assert f"<code>tlscope serve FOLDER --source-url {url}</code>" in page
        assert '+ "&source_url=https%3A%2F%2Fgithub.com%2Fo%2Fr%2Fblob%2F0123abc";' in page
    plain = tmp_path / "plain"
    log = next((REPO / "corpus" / "traces" / "graph_breaks").glob("*.log.gz"))
    assert main([str(log), "-o", str(plain), "--no-browser"]) == 0
    assert "source_url" not in (plain / "index.html").read_text() and url not in (plain / "index.html").read_text()
    refused = tmp_path / "refused"
    assert main([str(log), "-o", str(refused), "--no-browser", "--source-url", "javascript:alert(1)"]) == 2
    assert not refused.exists()
