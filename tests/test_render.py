"""Report pages rendered in batches (render) and streamed to a file (render_to).

Both must give exactly what Jinja's own `Template.render` gives; only their memory differs
(no list of every fragment of a big page, no whole page in memory for render_to).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tlscope.write.report import render as render_module
from tlscope.write.report.render import batched, environment, render, render_to


def _index_context(outputs: int) -> dict[str, Any]:
    entries = [
        {
            "href": f"-_0_0_0/fx_graph_cache_miss_{i}.json",
            "name": f"-_0_0_0/fx_graph_cache_miss_{i}.json",
            "url": f"-_0_0_0/fx_graph_cache_miss_{i}.json",
            "readable_url": None,
            "suffix": "\u274c",
            "number": i,
        }
        for i in range(outputs)
    ]
    return {
        "custom_header_html": "",
        "stack_trie_html": "",
        "unknown_stack_trie_html": "",
        "num_breaks": 0,
        "has_chromium_events": False,
        # A generator, as a streaming caller passes it: the template only iterates it once.
        "directory": iter([("[0/0]", entries), ("(unknown)", [])]),
        "provenance_pages": [],
        "collectives_parity_link": False,
    }


def _jinja(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(**context)


def test_batched_joins_runs_of_fragments() -> None:
    assert list(batched(["a", "b", "c", "d", "e"], size=2)) == ["ab", "cd", "e"]
    assert list(batched([], size=2)) == []


def test_render_of_a_page_of_many_batches_is_jinjas() -> None:
    # Two thousand outputs are ~25,000 fragments: several batches.
    expected = _jinja("index.html.jinja", _index_context(2000))
    assert render("index.html.jinja", **_index_context(2000)) == expected
    assert expected.count("fx_graph_cache_miss_1999.json") == 2


def test_render_to_writes_jinjas_page(tmp_path: Path) -> None:
    dest = tmp_path / "index.html"
    render_to(dest, "index.html.jinja", **_index_context(2000))
    assert dest.read_bytes() == _jinja("index.html.jinja", _index_context(2000)).encode("utf-8")


def test_render_to_keeps_undecodable_text_as_the_other_pages_do(tmp_path: Path) -> None:
    # The report writes pages with surrogateescape: a name from undecodable bytes comes back out.
    context = _index_context(1)
    context["directory"] = [("[0/0]", [{"href": "", "name": "bad\udcff", "url": "u", "suffix": "", "number": 0}])]
    dest = tmp_path / "index.html"
    render_to(dest, "index.html.jinja", **context)
    assert b"bad\xff (<code>u</code>, not a web link)" in dest.read_bytes()


def test_render_never_holds_every_fragment(monkeypatch: Any) -> None:
    # The point of batching: each join sees at most a batch of fragments, never the whole page.
    seen: list[int] = []
    original = render_module.batched

    def spy(fragments: Any, size: int = 64) -> Any:
        for chunk in original(fragments, size):
            seen.append(len(chunk))
            yield chunk

    monkeypatch.setattr(render_module, "batched", spy)
    page = render("index.html.jinja", **_index_context(2000))
    assert len(seen) > 10 and max(seen) < len(page) / 10
