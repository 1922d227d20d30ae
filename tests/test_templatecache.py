"""Compiled templates kept between runs: same pages, and a cache problem never fails a run."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import DictLoader, Environment, FileSystemBytecodeCache

from tlscope.write import templates as templatecache
from tlscope.write.templates import _NeverFailing

_TEMPLATES = {"page.html": "{% for x in items %}<li>{{ x }}</li>{% endfor %}"}


def _render(cache: FileSystemBytecodeCache) -> str:
    env = Environment(loader=DictLoader(_TEMPLATES), autoescape=True, bytecode_cache=cache)
    return env.get_template("page.html").render(items=["a", "<b>"])


def test_a_cached_template_renders_the_same(tmp_path: Path) -> None:
    cache = _NeverFailing(str(tmp_path), "__tlscope_%s.cache")
    first = _render(cache)  # compiled and stored
    assert len(list(tmp_path.iterdir())) == 1
    assert _render(cache) == first == "<li>a</li><li>&lt;b&gt;</li>"  # loaded


def test_an_unusable_cache_directory_only_means_compiling(tmp_path: Path) -> None:
    cache = _NeverFailing(str(tmp_path / "missing"), "__tlscope_%s.cache")
    assert _render(cache) == "<li>a</li><li>&lt;b&gt;</li>"
    stored = _NeverFailing(str(tmp_path), "__tlscope_%s.cache")
    _render(stored)
    (entry,) = tmp_path.glob("__tlscope_*")
    entry.unlink()
    entry.mkdir()  # the entry's name taken by a folder: it can be neither read nor replaced
    assert _render(stored) == "<li>a</li><li>&lt;b&gt;</li>"


def test_no_safe_temp_directory_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def unsafe(self: FileSystemBytecodeCache) -> str:
        raise RuntimeError("Cannot determine safe temp directory.")

    monkeypatch.setattr(FileSystemBytecodeCache, "_get_default_cache_dir", unsafe)
    assert templatecache.bytecode_cache.__wrapped__() is None


def test_every_template_folder_gets_the_same_environment_settings_and_cache() -> None:
    """One factory (write/templates.py) makes every environment: single-rank runs load compiled
    templates too, not only multi-rank workers."""
    from tlscope.write.landing.writer import _template
    from tlscope.write.report.render import environment

    report, landing = environment(), _template().environment
    assert report.bytecode_cache is landing.bytecode_cache is templatecache.bytecode_cache()
    for env in (report, landing):
        assert env.trim_blocks and env.lstrip_blocks
        assert env.autoescape("any.html.jinja") and env.autoescape(None)  # type: ignore[operator]


def test_a_kept_text_is_made_once_then_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templatecache, "bytecode_cache", lambda: _NeverFailing(str(tmp_path), "__tlscope_%s.cache"))
    made: list[int] = []

    def make() -> str:
        made.append(1)
        return "a { color: red }\n"

    assert templatecache.kept_text("style/x 1.css", make) == "a { color: red }\n"
    assert templatecache.kept_text("style/x 1.css", make) == "a { color: red }\n"
    assert len(made) == 1  # the second came from the file
    assert [p.name for p in tmp_path.iterdir()] == ["__tlscope_style_x_1.css"]  # inside, and no temporary left


def test_a_kept_text_never_fails_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = _NeverFailing(str(tmp_path / "missing"), "__tlscope_%s.cache")
    monkeypatch.setattr(templatecache, "bytecode_cache", lambda: missing)
    assert templatecache.kept_text("t", lambda: "made") == "made"
    (tmp_path / "__tlscope_t").mkdir()  # the entry's name taken by a folder: neither read nor written
    monkeypatch.setattr(templatecache, "bytecode_cache", lambda: _NeverFailing(str(tmp_path), "__tlscope_%s.cache"))
    assert templatecache.kept_text("t", lambda: "made") == "made"
    monkeypatch.setattr(templatecache, "bytecode_cache", lambda: None)
    assert templatecache.kept_text("t", lambda: "made") == "made"


def test_output_code_pages_colours_are_pygments_whether_kept_or_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pygments.formatters import HtmlFormatter

    from tlscope.write.report import highlight

    monkeypatch.setattr(templatecache, "bytecode_cache", lambda: _NeverFailing(str(tmp_path), "__tlscope_%s.cache"))
    css = HtmlFormatter(style="friendly").get_style_defs(".highlight")
    made, kept = highlight.tail.__wrapped__(), highlight.tail.__wrapped__()
    assert made == kept == highlight.tail()
    assert f"\n{css}\n</style>\n" in made
    assert len(list(tmp_path.iterdir())) == 1
