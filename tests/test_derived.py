"""Derived report files: written by worker processes (or in-process), once per distinct payload."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tlscope.analyse.fold.compile_fold import cache_fields, json_error
from tlscope.write.report.derived import DerivedFiles, make_page
from tlscope.write.report.highlight import render_code


@pytest.mark.parametrize("workers", [None, 1, 2])
def test_each_kind_is_written_once_and_linked_after(tmp_path: Path, workers: int | None) -> None:
    code = tmp_path / "code.txt"
    code.write_text("def f():\n    return 1\n")
    traces = tmp_path / "traces.txt"
    traces.write_text(json.dumps({"k2": ["a\\nb<script>"], "k1": ["x"]}))
    derived = DerivedFiles(workers)
    derived.submit("code", "m1", code, tmp_path / "a.html")
    derived.submit("code", "m1", code, tmp_path / "b.html")  # same payload: linked, not rendered
    derived.submit("json", "m2", traces, tmp_path / "t.json")
    derived.submit("readable", "m2", traces, tmp_path / "t_readable.html")
    derived.close()
    assert (tmp_path / "a.html").read_text() == render_code(code.read_text())
    assert (tmp_path / "a.html").stat().st_ino == (tmp_path / "b.html").stat().st_ino
    assert (tmp_path / "t.json").read_text() == '{\n  "k1": [\n    "x"\n  ],\n  "k2": [\n    "a\\\\nb<script>"\n  ]\n}'
    readable = (tmp_path / "t_readable.html").read_text()
    assert readable.index("k1") < readable.index("k2") and "a\nb&lt;script&gt;" in readable


def test_a_failed_job_fails_close_but_the_others_are_written(tmp_path: Path) -> None:
    source = tmp_path / "code.txt"
    source.write_text("x = 1\n")
    derived = DerivedFiles(2)
    derived.submit("code", "m1", tmp_path / "missing.txt", tmp_path / "c.html")
    derived.submit("code", "m2", source, tmp_path / "d.html")
    with pytest.raises(RuntimeError, match=r"c\.html: FileNotFoundError"):
        derived.close()
    assert (tmp_path / "d.html").is_file()


def test_not_json_is_kept_as_it_was(tmp_path: Path) -> None:
    source = tmp_path / "p.txt"
    source.write_bytes(b"0/0: not json")
    make_page("json", str(source), str(tmp_path / "out.json"))
    assert (tmp_path / "out.json").read_bytes() == b"0/0: not json"
    # The report's verdict for a stack-trace JSON's readable page, the compile fold's by MD5.
    assert json_error(b"0/0: not json", None) and json_error(b"[1]", None) == ""


def test_cache_artifact_fields_are_read_once_per_payload() -> None:
    # A job's ranks log the same cache artifacts: their key and reason are kept by the payload's MD5.
    payload = b'{"key": "fabc", "cache_bypass_reason": "no", "reason": "later", "time_taken_ns": 2500000}'
    assert cache_fields(payload, None) == ("fabc", "no", None, 0.0025)
    assert cache_fields(b'{"key": "fabc", "reason": "why"}', None) == ("fabc", "why", None, None)
    assert cache_fields(b"not json", None) is None and cache_fields(b'{"key": 1}', None) is None
    md5 = hashlib.md5(payload).hexdigest()
    assert cache_fields(payload, md5) == ("fabc", "no", None, 0.0025)
    assert cache_fields(b"", md5) == ("fabc", "no", None, 0.0025)  # known by its MD5: not decoded again
    assert cache_fields(b"not json", "0" * 32) is None and cache_fields(b"{}", "0" * 32) is None  # a failure too


def test_in_process_pages_are_reused_by_later_runs_by_payload_md5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Multi-rank workers render in-process and parse several ranks: a page whose payload (by its
    # MD5, which names the payload file) was rendered before is copied, not rendered again, and
    # the payload is not even read; another payload is rendered.
    from tlscope.write.report import derived as module

    monkeypatch.setattr(module, "_memo", module._PageMemo(1 << 20))
    rendered: list[bytes] = []
    real = module.JOBS["code"]

    def counting(payload: bytes) -> bytes:
        rendered.append(payload)
        return real(payload)

    monkeypatch.setitem(module.JOBS, "code", counting)
    pages_by_run = []
    for run, text in enumerate(["def f():\n    return 1\n", "def f():\n    return 1\n", "x = 2\n"]):
        folder = tmp_path / f"rank_{run}"
        folder.mkdir()
        (folder / "code.txt").write_text(text)
        files = DerivedFiles(1)
        files.submit("code", hashlib.md5(text.encode()).hexdigest(), folder / "code.txt", folder / "page.html")
        files.close()
        if run == 0:
            (folder / "code.txt").unlink()  # gone: the next run's page comes from memory
        pages_by_run.append((folder / "page.html").read_text())
    assert rendered == [b"def f():\n    return 1\n", b"x = 2\n"]
    assert pages_by_run[0] == pages_by_run[1] == render_code("def f():\n    return 1\n")
    assert pages_by_run[2] == render_code("x = 2\n")


def test_page_memo_stays_within_its_budget(tmp_path: Path) -> None:
    from tlscope.write.report.derived import _PageMemo

    memo = _PageMemo(40_000)  # pages of ~7.5 KB: a few fit
    for i in range(20):
        source = tmp_path / f"{i}.txt"
        source.write_text(f"x = {i}\n" * 20)
        memo.write("code", hashlib.md5(source.read_bytes()).hexdigest(), source, tmp_path / f"{i}.html")
        assert memo._size <= 40_000
        assert (tmp_path / f"{i}.html").read_bytes() == memo.get("code", hashlib.md5(source.read_bytes()).hexdigest())
    assert 0 < len(memo._pages) < 20


@pytest.mark.parametrize("workers", [None, 1])
def test_a_page_is_handed_over_as_rendered(
    tmp_path: Path, workers: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Multi-rank's rank facts read each output-code page with a collective schedule: rendered in
    # this process, the page comes from memory (its file gone, the text is still there); rendered
    # by a page worker, from its file.
    import hashlib

    from tlscope.write.report import derived as module

    monkeypatch.setattr(module, "_memo", module._PageMemo(1 << 20))
    code = tmp_path / "code.txt"
    code.write_text("def f():\n    return all_reduce(x)\n")
    md5 = hashlib.md5(code.read_bytes()).hexdigest()
    derived = DerivedFiles(workers)
    derived.submit("code", md5, code, tmp_path / "a.html")
    derived.submit("code", md5, code, tmp_path / "b.html")
    derived.close()
    expected = render_code(code.read_text()).encode()
    assert derived.page(tmp_path / "b.html") == expected
    (tmp_path / "a.html").unlink()
    (tmp_path / "b.html").unlink()
    if workers == 1:
        assert derived.page(tmp_path / "a.html") == derived.page(tmp_path / "b.html") == expected
    else:
        with pytest.raises(FileNotFoundError):
            derived.page(tmp_path / "a.html")
