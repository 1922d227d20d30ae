"""tools/identity.py, the byte-identity check of refactors: its comparison and its plumbing.

The check itself (a base revision against this checkout on every corpus trace) is run by hand
before merging a refactor (`python tools/identity.py --base <rev>`); these tests make sure it
would see a difference, and masks nothing but the split folder's random name.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, load_tool

identity = load_tool("identity")


def _outcome(tree: dict[str, bytes | str], status: int = 0, out: bytes = b"") -> object:
    return identity.Outcome(status, out, b"", dict(tree))


def test_identical_outcomes_have_no_differences() -> None:
    tree: dict[str, bytes | str] = {"a": "dir", "a/b.txt": b"x", "l": "link:a"}
    assert identity.differences(_outcome(tree), _outcome(tree)) == []


def test_every_kind_of_difference_is_reported() -> None:
    base = _outcome({"same": b"1", "changed": b"old\n", "gone": b"", "kind": "dir"}, status=0, out=b"hi")
    new = _outcome({"same": b"1", "changed": b"new\n", "extra": b"", "kind": b"file"}, status=1, out=b"ho")
    found = "\n".join(identity.differences(base, new))
    for expected in (
        "exit status 0 -> 1",
        "stdout differs",
        "missing in the new tree: gone",
        "only in the new tree: extra",
        "changed differs",
        "-old",
        "+new",
        "kind: dir -> file",
    ):
        assert expected in found
    assert "same" not in found.replace("same:", "")


def test_only_the_split_folder_path_is_masked() -> None:
    tmp = identity.tempfile.gettempdir()
    before = f'"path": "{tmp}/tlscope-split-ab12_x/dedicated_log_torch_trace_rank_0.log"'.encode()
    since = b'"path": "/s/0/.out.tlscope-o94a81rn/.split/dedicated_log_torch_trace_rank_0.log"'
    again = b'"path": "/s/1/.out.tlscope-az8w5n_m/.split/dedicated_log_torch_trace_rank_0.log"'
    assert identity.normalise(before) == identity.normalise(since) == identity.normalise(again)
    # The log's own name after the folder is still compared.
    assert identity.normalise(since) != identity.normalise(since.replace(b"rank_0", b"rank_1"))
    # Other temporary names, and everything outside a JSON string's path, are left alone.
    other = f'"path": "{tmp}/tlscope-other-ab12/x.log"'.encode()
    assert identity.normalise(other) == other
    assert identity.normalise(b"/s/.out.tlscope-ab12/.split/x") == b"/s/.out.tlscope-ab12/.split/x"
    assert identity.normalise(b"size 2814178") != identity.normalise(b"size 2814179")


def _git_ok() -> bool:
    return shutil.which("git") is not None and (REPO / ".git").exists()


@pytest.mark.skipif(not _git_ok(), reason="needs git and this repository's history")
def test_a_revision_runs_in_isolation_and_a_change_is_seen(tmp_path: Path) -> None:
    src = identity.extract("HEAD", tmp_path / "head")
    case = next(c for c in identity.discover() if c.name.startswith("parse simple/"))
    changed = tmp_path / "changed" / "src"
    shutil.copytree(src, changed)
    init = changed / "tlscope" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9'))
    first = identity.run(src, case, tmp_path / "1")
    assert first.status == 0 and "manifest.json" in first.tree
    assert identity.differences(first, identity.run(src, case, tmp_path / "2")) == []
    found = identity.differences(first, identity.run(changed, case, tmp_path / "3"))
    assert any(f.startswith("manifest.json differs") for f in found), found


@pytest.mark.skipif(not _git_ok(), reason="needs git and this repository's history")
def test_command_line_control_run_passes() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "identity.py"), "--base", "HEAD", "--control", "--cases", "split muxed"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 cases identical" in done.stdout


def test_only_the_format_19_additions_are_forgiven() -> None:
    """Against a base before format 1.9: format_minor 8 -> 9 and compiles.json's two new fields."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"statuses":{"ok":"x"}'
    order = b',"status_order":["failed","ok","outside"]'
    entry = b'{"id":"[0/1]","recompile":{"reason":null,"guard_failures":[]%s,"compared_with":"[0/0]"}}'
    recommended = b',"recommended":{"index":2,"why":"the newest entry [0/4] \\"x\\" came closest"}'
    old = head % 8 + b',"compiles":[\n' + entry % b"" + b"\n]}\n"
    new = head % 9 + order + b',"compiles":[\n' + entry % recommended + b"\n]}\n"
    assert identity.without_19_additions("rank_0/compiles.json", new) == old
    assert identity.without_19_additions("x/compiles.json", new.replace(recommended, b',"recommended":null')) == old
    manifest = b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": 9,\n  "x": 8\n}'
    older = manifest.replace(b'"format_minor": 9', b'"format_minor": 8')
    assert identity.without_19_additions("manifest.json", manifest) == older
    # Nothing else: other files, another minor, a field elsewhere, a changed reason.
    assert identity.without_19_additions("index.html", new) == new
    assert identity.without_19_additions("compiles.json", (head % 10)) == head % 10
    moved = new.replace(b',"compared_with":"[0/0]"', b"").replace(b"[]" + recommended, b"[]" + recommended + b',"x":1')
    assert identity.without_19_additions("compiles.json", moved) != old
    changed = new.replace(b'"reason":null', b'"reason":"r"')
    assert identity.without_19_additions("compiles.json", changed) != old
    base, now = _outcome({"compiles.json": old}), _outcome({"compiles.json": new})
    assert identity.differences(base, now) == []
    assert identity.differences(now, base) != []  # only ever forgiven in the new tree


def test_only_the_format_110_additions_are_forgiven() -> None:
    """Against a 1.9 base: format_minor 9 -> 10, compiles.json's `symbols` and `input_shapes`
    (its last two lists) and each recompile's `fix` (last in `recompile`)."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"statuses":{"ok":"x"}'
    entry = b'{"id":"[0/1]","recompile":{"reason":null,"compared_with":"[0/0]","event":null%s}}'
    fix = (
        b',"fix":{"kind":"mark_dynamic","input":"x","source":"L[\'x\']","dim":0,"code":"m(x, 0)",'
        b'"where":{"file":"a.py","line":17,"name":"main","code":"f(x)  # {not} \\"json\\""},"why":"w {x}"}'
    )
    tail = b'\n],"symbols":[\n{"symbol":"s77"},\n{"symbol":"s27"}\n],"input_shapes":[\n{"frame":"[0/0]"}\n]}\n'
    old = head % 9 + b',"compiles":[\n' + entry % b"" + b'\n],"graph_breaks":[\n]}\n'
    new = head % 10 + b',"compiles":[\n' + entry % fix + b'\n],"graph_breaks":[' + tail
    assert identity.without_110_additions("rank_0/compiles.json", new) == old
    assert identity.without_110_additions("compiles.json", new.replace(fix, b',"fix":null')) == old
    empty = new.replace(tail, b'\n],"symbols":[\n],"input_shapes":[\n]}\n')
    assert identity.without_110_additions("compiles.json", empty) == old
    # Nothing else: another file, a fix not last in its recompile, a changed entry.
    assert identity.without_110_additions("index.html", new) == new
    moved = new.replace(b',"event":null' + fix, fix + b',"event":null')
    assert identity.without_110_additions("compiles.json", moved) != old
    assert identity.without_110_additions("compiles.json", new.replace(b'"[0/0]"', b'"[0/2]"', 1)) != old
    base, now = _outcome({"compiles.json": old}), _outcome({"compiles.json": new})
    assert identity.differences(base, now) == []
    assert identity.differences(now, base) != []
    # The report's index.html: the fix's line under its recompile, nothing else.
    page = b"<table>\n</table>\n</div>\n"
    said = b'<p class="answers-fix">To avoid it, add <code>m(x, 0)</code> before a.py:17: why.</p>\n'
    with_fix = page.replace(b"</div>", said + b"</div>")
    assert identity.without_110_additions("index.html", with_fix) == page
    assert identity.without_110_additions("index.html", with_fix.replace(b"To avoid", b"To skip")) != page


def test_only_the_format_111_additions_are_forgiven() -> None:
    """Against a 1.10 base: format_minor 10 -> 11, manifest `graphs` after `payloads`, files under graphs/."""
    manifest = (
        b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": %d,\n'
        b'  "payloads": {\n    "files": 1\n  },%s\n  "chromium_events": 0\n}\n'
    )
    stats = b'\n  "graphs": {\n    "files": 2,\n    "bytes": 30,\n    "failed": 0\n  },'
    old, new = manifest % (10, b""), manifest % (11, stats)
    assert identity.without_111_additions("manifest.json", new) == old
    assert identity.without_111_additions("rank_0/manifest.json", new) == old
    # Nothing else: the stats elsewhere, another file, another minor.
    assert identity.without_111_additions("index.html", new) == new
    assert identity.without_111_additions("manifest.json", manifest % (12, stats)) != old
    assert identity.without_111_additions("compiles.json", new) != old
    base = _outcome({"manifest.json": old})
    now = _outcome({"manifest.json": new, "graphs": "dir", "graphs/a.json": b"{}"})
    assert identity.differences(base, now) == []
    assert identity.differences(now, base) != []  # only ever forgiven in the new tree
    assert identity.differences(base, _outcome({"manifest.json": new, "other/a.json": b"{}"})) != []


def test_only_the_format_112_additions_are_forgiven() -> None:
    """Against a 1.11 base: format_minor 11 -> 12 (graphs/ files too), and each failure's `hints`
    and `docs_url` after its `traceback`; a graph break's own hints (1.8) stay compared."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"statuses":{"ok":"x"}'
    failure = b'"failure":{"type":"Unsupported","reason":"r","user_frame":null,"traceback":%s%s}'
    hints = (
        b',"hints":["To monitor recompilations, enable \\"x\\".","See https://a/b"],"docs_url":"https://c/gb0039.html"'
    )
    ref = b'{"kind":"dynamo_error","payload_filename":null,"payload_size":0,"raw_line":3,"log_line":9}'
    brk = b'"graph_breaks":[{"reason":"b","traceback":null,"stack":[],"hints":["h"],"docs_url":null}]'
    entry = b'{"id":"[0/1]",' + brk + b"," + failure + b',"metrics_records":[{"kind":"m",' + failure + b"}]}"
    old = head % 11 + b',"compiles":[\n' + entry % (b"null", b"", ref, b"") + b"\n]}\n"
    new = head % 12 + b',"compiles":[\n' + entry % (b"null", hints, ref, b',"hints":[],"docs_url":null') + b"\n]}\n"
    assert identity.without_112_additions("compiles.json", new) == old
    assert identity.without_112_additions("rank_1/compiles.json", new) == old
    graph = b'{"format":"tlscope","format_version":1,"format_minor":%d,"payload":"p"}'
    assert identity.without_112_additions("graphs/a.json", graph % 12) == graph % 11
    # Nothing else: a graph break's hints, another file, hints not after a traceback.
    assert identity.without_112_additions("compiles.json", new.replace(b'"hints":["h"]', b'"hints":["i"]')) != old
    assert identity.without_112_additions("index.html", new) == new
    assert (
        identity.without_112_additions("compiles.json", new.replace(b'"traceback":null,"hints"', b'"hints"', 1)) != old
    )
    base, now = _outcome({"compiles.json": old}), _outcome({"compiles.json": new})
    assert identity.differences(base, now) == []
    assert identity.differences(now, base) != []


def test_only_the_format_117_additions_are_forgiven() -> None:
    """Against a 1.16 base: format_minor 16 -> 17 (provenance.json and graphs/ files too), each
    compiles.json graph's `collectives` after its `inputs`, ranks.json's `divergence.collectives`
    and multi_rank_summary.json's `overview.collectives`."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n'
    graph = b'{"kind":"dynamo_output_graph","nodes":3,"inputs":[{"name":"L_x_","type":"f32[4][1]cpu"}]%s}'
    calls = b',"collectives":[{"op":"all_reduce","tensor":"f32[4][1]cpu","args":["\'sum\'","\'0\'"]}]'
    old = head % 16 + b'{"id":"[0/0]","graphs":[' + graph % b"" + b"," + graph % b"" + b"]}\n]}\n"
    new = head % 17 + b'{"id":"[0/0]","graphs":[' + graph % calls + b"," + graph % b',"collectives":[]' + b"]}\n]}\n"
    assert identity.without_117_additions("compiles.json", new) == old
    assert identity.without_117_additions("rank_3/compiles.json", new) == old
    ranks = (
        b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": %d,\n'
        b'  "divergence": {\n    "diverges": false%s\n  }\n}\n'
    )
    listed = b',\n    "collectives": [\n      {\n        "id": "[0/0]",\n        "at": 0\n      }\n    ]'
    assert identity.without_117_additions("ranks.json", ranks % (17, listed)) == ranks % (16, b"")
    assert identity.without_117_additions("ranks.json", ranks % (17, b',\n    "collectives": []')) == ranks % (16, b"")
    summary = b'{\n  "ranks": [\n    {\n      "recompiles": {}%s\n    }\n  ]\n}\n'
    overview = b',\n      "collectives": {\n        "[0/0]": "all_reduce f32[4] \'sum\' \'0\'"\n      }'
    assert identity.without_117_additions("multi_rank_summary.json", summary % overview) == summary % b""
    provenance = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compilations":[]}'
    assert identity.without_117_additions("provenance.json", provenance % 17) == provenance % 16
    # Nothing else: collectives elsewhere than after a graph's inputs, another file, another minor.
    moved = new.replace(b'"nodes":3,"inputs"', b'"nodes":3' + calls + b',"inputs"', 1)
    assert identity.without_117_additions("compiles.json", moved) != old
    assert identity.without_117_additions("index.html", new) == new
    assert (
        identity.without_117_additions("compiles.json", new.replace(b'"format_minor":17', b'"format_minor":18')) != old
    )
    base, now = _outcome({"compiles.json": old}), _outcome({"compiles.json": new})
    assert identity.differences(base, now) == []
    assert identity.differences(now, base) != []


def test_only_the_format_118_additions_are_forgiven() -> None:
    """Against a 1.17 base: format_minor 17 -> 18, compiles.json's `exports` (its last field), its
    symbols' `retrace_of` (last in each) and ranks.json's `divergence.rows` (last in `divergence`)."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n{"id":"[-/-]"}\n'
    tail = b'],"input_shapes":[\n]}\n'
    old = head % 17 + tail
    calls = b'\n],"exports":[\n{"index":0,"status":"failed","sentence":"Failed: x"},\n{"index":1,"status":"exported"}'
    assert identity.without_118_additions("compiles.json", head % 18 + tail[:-4] + calls + b"\n]}\n") == old
    assert (
        identity.without_118_additions("rank_2/compiles.json", head % 18 + tail[:-4] + b'\n],"exports":[\n]}\n') == old
    )
    manifest = b'{"format":"tlscope","format_version":1,"format_minor":%d,"inputs":[]}'
    assert identity.without_118_additions("manifest.json", manifest % 18) == manifest % 17
    ranks = (
        b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": %d,\n'
        b'  "divergence": {\n    "diverges": false,\n    "collectives": []%s\n  }\n}\n'
    )
    rows = b',\n    "rows": [\n      {\n        "ranks": [\n          0\n        ]\n      }\n    ]'
    assert identity.without_118_additions("ranks.json", ranks % (18, rows)) == ranks % (17, b"")
    assert identity.without_118_additions("ranks.json", ranks % (18, b',\n    "rows": []')) == ranks % (17, b"")
    # Nothing else: an `exports` that is not the last field, another file, another minor.
    symbol = b'{"compile_id":"[0/0]","symbol":"u2","fix":null%s}'
    symbols = b'],"symbols":[\n' + symbol % b"" + b",\n" + symbol % b"" + b"\n"
    with_symbols = head % 18 + symbols + b'],"symbols":[\n'
    new = with_symbols.replace(b"[\n" + symbol % b"", b"[\n" + symbol % b',"retrace_of":"u0"', 1)
    new = new.replace(b",\n" + symbol % b"", b",\n" + symbol % b',"retrace_of":null', 1)
    assert identity.without_118_additions("compiles.json", new) == head % 17 + symbols + b'],"symbols":[\n'
    inner = head % 18 + b'],"exports":[\n],"input_shapes":[\n]}\n'
    assert identity.without_118_additions("compiles.json", inner) != old
    assert identity.without_118_additions("index.html", manifest % 18) == manifest % 18
    assert identity.without_118_additions("manifest.json", manifest % 19) != manifest % 17


def test_only_the_format_119_additions_are_forgiven() -> None:
    """Against a 1.18 base: 1.19 added an export issue kind (`dynamo_error`) that no earlier log
    had and compiles.json's `exports_note` (its last field): format_minor 19 -> 18 and that field
    removed; a file of the same minor, another file, the field elsewhere or a changed field is not
    forgiven."""
    manifest = b'{"format":"tlscope","format_version":1,"format_minor":%d,"inputs":[]}'
    assert identity.without_119_additions("manifest.json", manifest % 19) == manifest % 18
    assert identity.without_119_additions("rank_3/compiles.json", manifest % 19) == manifest % 18
    assert identity.without_119_additions("graphs/ab.json", manifest % 19) == manifest % 18
    assert identity.without_119_additions("index.html", manifest % 19) == manifest % 19
    assert identity.without_119_additions("manifest.json", manifest % 20) == manifest % 20
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"input_shapes":[\n],"exports":[\n%s]}\n'
    old = compiles % (18, b"")
    for note in (b"null", b'"only failed calls show: \\"TORCH_DTRACE\\""'):
        new = (compiles % (19, b"")).replace(b"\n]}\n", b'\n],"exports_note":' + note + b"}\n")
        assert identity.without_119_additions("compiles.json", new) == old
    # Not its last field: not forgiven.
    inner = (compiles % (19, b"")).replace(b'"input_shapes":[', b'"exports_note":null,"input_shapes":[')
    assert identity.without_119_additions("compiles.json", inner) != old
    changed = (manifest % 19).replace(b'"inputs":[]', b'"inputs":[1]')
    base, now = _outcome({"manifest.json": manifest % 18}), _outcome({"manifest.json": changed})
    assert identity.differences(base, _outcome({"manifest.json": manifest % 19})) == []
    assert identity.differences(base, now) != []


def test_only_the_format_120_additions_are_forgiven() -> None:
    """Against a 1.19 base: 1.20 added each compile entry's `capture` (its last field), null but
    for a fullgraph capture's compile: format_minor 20 -> 19 and the null field removed; a
    capture that names an API (whose entry changed in other fields too), another file or another
    minor is not forgiven."""
    manifest = b'{"format":"tlscope","format_version":1,"format_minor":%d,"inputs":[]}'
    assert identity.without_120_additions("manifest.json", manifest % 20) == manifest % 19
    assert identity.without_120_additions("rank_1/compiles.json", manifest % 20) == manifest % 19
    assert identity.without_120_additions("index.html", manifest % 20) == manifest % 20
    assert identity.without_120_additions("manifest.json", manifest % 21) == manifest % 21
    entry = b'{"id":"[0/0]","log_lines":[1,9]%s}'
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n%s,\n%s\n]}\n'
    old = compiles % (19, entry % b"", entry % b"")
    new = compiles % (20, entry % b',"capture":null', entry % b',"capture":null')
    assert identity.without_120_additions("compiles.json", new) == old
    named = compiles % (20, entry % b',"capture":null', entry % b',"capture":"aot_compile"')
    assert identity.without_120_additions("compiles.json", named) != old
    # Through the chain: a 1.18 base against a 1.20 file without captures.
    base, now = _outcome({"manifest.json": manifest % 18}), _outcome({"manifest.json": manifest % 20})
    assert identity.differences(base, now) == []


def test_only_the_format_121_additions_are_forgiven() -> None:
    """Against a 1.20 base: 1.21 added compiles.json's `aot_inductor` (its last field), empty but in
    a log of AOT Inductor compiles: format_minor 21 -> 20 and the empty list removed; a list with
    a compile, the field elsewhere, another file or another minor is not forgiven."""
    manifest = b'{"format":"tlscope","format_version":1,"format_minor":%d,"inputs":[]}'
    assert identity.without_121_additions("manifest.json", manifest % 21) == manifest % 20
    assert identity.without_121_additions("index.html", manifest % 21) == manifest % 21
    assert identity.without_121_additions("manifest.json", manifest % 22) == manifest % 22
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"exports":[\n],"exports_note":null%s}\n'
    old = compiles % (20, b"")
    assert identity.without_121_additions("compiles.json", compiles % (21, b',"aot_inductor":[\n]')) == old
    one = compiles % (21, b',"aot_inductor":[\n{"index":0}\n]')
    assert identity.without_121_additions("compiles.json", one) != old
    inner = (compiles % (21, b"")).replace(b'"exports":[', b'"aot_inductor":[\n],"exports":[')
    assert identity.without_121_additions("compiles.json", inner) != old
    base, now = _outcome({"manifest.json": manifest % 19}), _outcome({"manifest.json": manifest % 21})
    assert identity.differences(base, now) == []


def test_only_the_format_122_additions_are_forgiven() -> None:
    """Against a 1.21 base: 1.22 added compiles.json's `vllm` (its last field), empty but in a log of
    vLLM's compiles: format_minor 22 -> 21 and the empty list removed, nothing else."""
    manifest = b'{"format":"tlscope","format_version":1,"format_minor":%d,"inputs":[]}'
    assert identity.without_122_additions("manifest.json", manifest % 22) == manifest % 21
    assert identity.without_122_additions("index.html", manifest % 22) == manifest % 22
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"aot_inductor":[\n]%s}\n'
    old = compiles % (21, b"")
    assert identity.without_122_additions("compiles.json", compiles % (22, b',"vllm":[\n]')) == old
    assert identity.without_122_additions("compiles.json", compiles % (22, b',"vllm":[\n{"index":0}\n]')) != old
    base, now = _outcome({"manifest.json": manifest % 19}), _outcome({"manifest.json": manifest % 22})
    assert identity.differences(base, now) == []


def test_only_the_format_123_additions_are_forgiven() -> None:
    """Against a 1.22 base: 1.23 added each export issue's `event_kind` (its last field)."""
    manifest = b'{"format":"tlscope","format_version":1,"format_minor":%d,"inputs":[]}'
    assert identity.without_123_additions("manifest.json", manifest % 23) == manifest % 22
    issue = b'{"kind":"partial_graph","log_line":3,"raw_line":2%s}'
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"exports":[\n{"issues":[%s,%s]}\n]}\n'
    old = compiles % (22, issue % b"", issue % b"")
    new = compiles % (23, issue % b',"event_kind":"make_fx_fail_partial"', issue % b',"event_kind":null')
    assert identity.without_123_additions("compiles.json", new) == old
    inner = compiles % (23, b'{"event_kind":"x","kind":"k"}', issue % b"")
    assert identity.without_123_additions("compiles.json", inner) != compiles % (22, b'{"kind":"k"}', issue % b"")
    base, now = _outcome({"manifest.json": manifest % 19}), _outcome({"manifest.json": manifest % 23})
    assert identity.differences(base, now) == []


def test_only_the_format_124_additions_are_forgiven() -> None:
    """Against a 1.23 base: 1.24 added each metrics record's `co_name` (its last field); the entry's
    `metrics` has a `co_name` too, never last, and stays."""
    record = b'{"kind":"compilation_metrics","log_line":3,"status":"ok"%s}'
    metrics = b'"metrics":{"co_name":"f","records":2}'
    compiles = (
        b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n{%s,"metrics_records":[%s,%s]}\n]}\n'
    )
    old = compiles % (23, metrics, record % b"", record % b"")
    new = compiles % (24, metrics, record % b',"co_name":"scale"', record % b',"co_name":null')
    assert identity.without_124_additions("compiles.json", new) == old
    assert identity.without_124_additions("index.html", new) == new


def test_only_the_format_125_additions_are_forgiven() -> None:
    """Against a 1.24 base: 1.25 added a graph_dump reference's `name` (its last field, written
    only when set); a source location's `name` (followed by its `code`) stays."""
    ref = b'{"kind":"graph_dump","payload_filename":"payloads/a.txt","payload_size":3,"raw_line":4,"log_line":9%s}'
    frame = b'"function":{"file":"a.py","line":1,"name":"f","code":null}'
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n{%s,"code":[%s,%s]}\n]}\n'
    old = compiles % (24, frame, ref % b"", ref % b"")
    new = compiles % (25, frame, ref % b',"name":"inductor_aot_wrapper_code"', ref % b',"name":"a\\"b"')
    assert identity.without_125_additions("compiles.json", new) == old
    assert identity.without_125_additions("index.html", new) == new
    last = compiles % (25, b'"function":{"log_line":1,"name":"f"}', ref % b"", ref % b"")
    assert identity.without_125_additions("compiles.json", last) != compiles % (
        24,
        b'"function":{"log_line":1}',
        ref % b"",
        ref % b"",
    )


def test_only_the_format_126_additions_are_forgiven() -> None:
    """Against a 1.25 base: 1.26 added each cache lookup's `time_saved_s` and `time_taken_s` (its
    last fields, after its `event`)."""
    event = b'"event":{"kind":"fx_graph_cache_hit","log_line":9}'
    lookup = b'{"cache":"fx_graph","outcome":"hit","key":"k","reason":null,%s%s}'
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n{"cache":[%s,%s]}\n]}\n'
    old = compiles % (25, lookup % (event, b""), lookup % (event, b""))
    times = (b',"time_saved_s":8.624101,"time_taken_s":null', b',"time_saved_s":null,"time_taken_s":1e-06')
    new = compiles % (26, lookup % (event, times[0]), lookup % (event, times[1]))
    assert identity.without_126_additions("compiles.json", new) == old
    assert identity.without_126_additions("index.html", new) == new
    one = compiles % (26, lookup % (event, b',"time_saved_s":1.0'), lookup % (event, b""))
    assert identity.without_126_additions("compiles.json", one).count(b"time_saved_s") == 1


def test_only_the_format_127_additions_are_forgiven() -> None:
    """Against a 1.26 base: 1.27 added each metrics record's `co_filename` and `co_firstlineno`
    (its last fields, after `co_name`); the entry's `function` keeps its own."""
    record = b'{"kind":"compilation_metrics","log_line":3,"status":"ok","co_name":"f"%s}'
    function = b'"function":{"file":"a.py","line":1,"name":"f","code":null}'
    compiles = (
        b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n{%s,"metrics_records":[%s,%s]}\n]}\n'
    )
    old = compiles % (26, function, record % b"", record % b"")
    place = (b',"co_filename":"/a \\"b\\".py","co_firstlineno":12', b',"co_filename":null,"co_firstlineno":null')
    new = compiles % (27, function, record % place[0], record % place[1])
    assert identity.without_127_additions("compiles.json", new) == old
    assert identity.without_127_additions("index.html", new) == new


def test_only_the_format_128_additions_are_forgiven() -> None:
    """Against a 1.27 base: 1.28 added each export call's `trace_id` (its last field, after its
    issues); a `traced` call itself is new and stays a difference."""
    call = b'{"index":0,"status":"failed","sentence":"s","log_line":3,"called_at":null,"program":null,"issues":[%s]%s}'
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n],"exports":[%s,%s]}\n'
    issue = b'{"kind":"dynamo_error"}'
    old = compiles % (27, call % (issue, b""), call % (b"", b""))
    new = compiles % (28, call % (issue, b',"trace_id":"[0/0]"'), call % (b"", b',"trace_id":null'))
    assert identity.without_128_additions("compiles.json", new) == old
    assert identity.without_128_additions("index.html", new) == new


def test_only_the_format_129_additions_are_forgiven() -> None:
    """Against a 1.28 base: 1.29 added compiles.json's `dynamic` and each symbol's `why`, both
    last, forgiven when null; a `why` said (or a `dynamic`) stays a difference."""
    symbol = b'{"compile_id":"[0/1]","symbol":"s77","retrace_of":%s%s}'
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n],"symbols":[%s,%s\n]%s}\n'
    old = compiles % (28, symbol % (b"null", b""), symbol % (b'"u\\"0"', b""), b"")
    tail = b',"dynamic":null,"settings":null'
    new = compiles % (29, symbol % (b"null", b',"why":null'), symbol % (b'"u\\"0"', b',"why":null'), tail)
    assert identity.without_129_additions("compiles.json", new) == old
    assert identity.without_129_additions("index.html", new) == new
    said = compiles % (29, symbol % (b"null", b',"why":"automatic"'), symbol % (b"null", b""), tail)
    plain = compiles % (28, symbol % (b"null", b""), symbol % (b"null", b""), b"")
    assert identity.without_129_additions("compiles.json", said) != plain


def test_only_the_format_131_additions_are_forgiven() -> None:
    """Against a 1.30 base: 1.31 added ranks.json's `divergence.frames` (last), forgiven when
    empty, and each graph group's `id` (last); frames said stay a difference."""
    group = b'          {\n            "ranks": [0],\n            "payload": "payloads/a.txt"%s\n          }'
    head = b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": %d,\n'
    ranks = head + b'  "divergence": {\n    "graphs": [%s]%s\n  },\n  "stragglers": null\n}\n'
    old = ranks % (30, group % b"", b"")
    new = ranks % (31, group % b',\n            "id": "[4/0]"', b',\n    "frames": []')
    assert identity.without_131_additions("ranks.json", new) == old
    assert identity.without_131_additions("index.html", new) == new
    said = ranks % (31, group % b"", b',\n    "frames": [{"ranks": [0]}]')
    assert identity.without_131_additions("ranks.json", said) != old


_COMPILES_WHY = b'{"format":"tlscope","format_version":1,"format_minor":%d,"symbols":[{"why":%s}]}\n'
_RANKS_ROWS = b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": %d,\n  "rows": [%s]\n}\n'


@pytest.mark.parametrize(
    ("minor", "name", "text", "unsaid", "said"),
    [
        # 1.32 added two values of a symbol's `why`, said where it was null.
        (32, "compiles.json", _COMPILES_WHY, b"null", b'"maybe_marked"'),
        # 1.33's `rows[].columns` is written only where ranks number functions differently, which
        # also says the groups by function.
        (33, "ranks.json", _RANKS_ROWS, b"", b'{"columns": {"[2/0]": "[1/0]"}}'),
        # 1.37's graph mismatch kind `output_code` is said only where ranks' output code differs.
        (37, "ranks.json", _RANKS_ROWS, b"", b'{"kind": "output_code"}'),
    ],
)
def test_only_the_format_version_is_forgiven(minor: int, name: str, text: bytes, unsaid: bytes, said: bytes) -> None:
    """Against the format before `minor`: only the version is forgiven; what it says is a difference."""
    without = getattr(identity, f"without_{100 + minor}_additions")
    assert without(name, text % (minor, unsaid)) == text % (minor - 1, unsaid)
    assert without(name, text % (minor, said)) != text % (minor - 1, unsaid)
    assert without("index.html", text % (minor, unsaid)) == text % (minor, unsaid)


def test_the_format_140_addition_is_forgiven() -> None:
    """Against a 1.39 base: ranks.json's `divergence.said` (the divergence's last field) is
    forgiven, empty or not (it orders lists the file holds); nothing else, nor in another file."""
    text = _RANKS_HEAD + b'  "divergence": {\n    "caches": []%s\n  },\n  "stragglers": null\n}\n'
    said = b',\n    "said": [\n      {\n        "list": "groups",\n        "title": "Ranks diverge"\n      }\n    ]'
    assert identity.without_140_additions("ranks.json", text % (40, said)) == text % (39, b"")
    assert identity.without_140_additions("ranks.json", text % (40, b',\n    "said": []')) == text % (39, b"")
    assert identity.without_140_additions("ranks.json", text % (40, b',\n    "saying": []')) != text % (39, b"")
    assert identity.without_140_additions("manifest.json", text % (40, said)) != text % (39, b"")


def test_the_format_139_additions_are_forgiven_when_null() -> None:
    """Against a 1.38 base: a symbol's `op` (its last field) is forgiven when null; an operator
    said (with its `why`) is not, nor the field in another file."""
    text = b'{"format":"tlscope","format_version":1,"format_minor":%d,"symbols":[\n{"why":%s%s}\n]}\n'
    old = text % (38, b"null", b"")
    assert identity.without_139_additions("compiles.json", text % (39, b"null", b',"op":null')) == old
    assert identity.without_139_additions("rank_1/compiles.json", text % (39, b"null", b',"op":null')) == old
    said = text % (39, b'"data_dependent"', b',"op":"item"')
    assert identity.without_139_additions("compiles.json", said) != old
    assert identity.without_139_additions("index.html", text % (39, b"null", b',"op":null')) != old


def test_the_format_134_additions_are_forgiven() -> None:
    """Against a 1.33 base: a compile's `collective_schedules` and a collective mismatch's `kind`
    `graph` are forgiven; a `schedule` mismatch is not."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,'
    compiles = head + b'"compiles":[\n{"id":"[0/0]","capture":null%s}\n]}\n'
    schedules = b',"collective_schedules":[["torch.ops._c10d_functional.all_reduce_.default","wait"],["x"]]'
    assert identity.without_134_additions("compiles.json", compiles % (34, schedules)) == compiles % (33, b"")
    ranks = b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": %d,\n'
    ranks += b'  "collectives": [\n    {\n      "at": 0%s\n    }\n  ]\n}\n'
    graph = identity.without_134_additions("ranks.json", ranks % (34, b',\n      "kind": "graph"'))
    assert graph == ranks % (33, b"")
    scheduled = identity.without_134_additions("ranks.json", ranks % (34, b',\n      "kind": "schedule"'))
    assert scheduled != ranks % (33, b"")
    summary = b'[\n  {\n    "overview": {\n      "collectives": {}%s\n    }\n  }\n]\n'
    empty = summary % b',\n      "schedules": {}'
    assert identity.without_134_additions("multi_rank_summary.json", empty) == summary % b""
    said = summary % b',\n      "schedules": {\n        "[0/0]": "all_reduce_"\n      }'
    assert identity.without_134_additions("multi_rank_summary.json", said) != summary % b""


_RANKS_HEAD = b'{\n  "format": "tlscope",\n  "format_version": 1,\n  "format_minor": %d,\n'
_STRAGGLER = (
    _RANKS_HEAD + b'  "stragglers": {\n    "ranks": [\n      {\n        "ratio": 3.1%s\n      }\n    ]\n  }\n}\n'
)
_CACHES = _RANKS_HEAD + b'  "divergence": {\n    "frames": []%s\n  },\n  "stragglers": null\n}\n'


@pytest.mark.parametrize(
    ("minor", "text", "unsaid", "said"),
    [
        # 1.35: a straggler's `why`, forgiven when null.
        (35, _STRAGGLER, b',\n        "why": null', b',\n        "why": "most in [0/0]"'),
        # 1.36: ranks.json's `divergence.caches`, forgiven when empty.
        (36, _CACHES, b',\n    "caches": []', b',\n    "caches": [\n      {}\n    ]'),
    ],
)
def test_a_ranks_json_field_is_forgiven_when_it_says_nothing(
    minor: int, text: bytes, unsaid: bytes, said: bytes
) -> None:
    """Against the format before `minor`: the field it added is forgiven when empty or null, not when said."""
    without = getattr(identity, f"without_{100 + minor}_additions")
    assert without("ranks.json", text % (minor, unsaid)) == text % (minor - 1, b"")
    assert without("ranks.json", text % (minor, said)) != text % (minor - 1, b"")


def test_the_format_143_addition_is_forgiven() -> None:
    """The slowest compile's first answer (1.43), wherever a run says it: compiles.json's last
    item, a rank overview's, the report's index (its list gone when it was alone), stdout."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[],"first_answers":[%s\n]}\n'
    failure = b'\n{"kind":"failure","compile_id":"[0/0]","text":"first failure: x"}'
    slow = b'\n{"kind":"slow_compile","compile_id":"[0/0]","text":"most compile time: [0/0] f took 2.00 s"}'
    assert identity.without_143_additions("compiles.json", head % (43, failure + b"," + slow)) == head % (42, failure)
    assert identity.without_143_additions("compiles.json", head % (43, slow)) == head % (42, b"")
    other = slow.replace(b"slow_compile", b"recompile")
    assert identity.without_143_additions("compiles.json", head % (43, failure + b"," + other)) != head % (42, failure)
    overview = b'{\n  "ranks": [\n    {\n      "first_answers": [%s\n      ]\n    }\n  ]\n}\n'
    item = b'\n        {\n          "kind": "%s",\n          "compile_id": "[4/0]",\n          "text": "t"%s\n        }'
    kept, said = item % (b"graph_break", b""), item % (b"slow_compile", b"")
    rel = "multi_rank_summary.json"
    assert identity.without_143_additions(rel, overview % (kept + b"," + said)) == overview % kept
    assert (
        identity.without_143_additions(rel, overview % said)
        == b'{\n  "ranks": [\n    {\n      "first_answers": []\n    }\n  ]\n}\n'
    )
    job = b'{\n  "format_minor": %d,\n  "first_answers": {\n    "lines": [%s\n    ],\n    "more": 0\n  }\n}\n'
    job = job.replace(b'"format_minor"', b'"format": "tlscope",\n  "format_version": 1,\n  "format_minor"')
    line = (
        b'\n      {\n        "kind": "%s",\n        "text": "t",\n        "ranks": [\n          0\n        ]\n      }'
    )
    brk, slow_line = line % b"graph_break", line % b"slow_compile"
    assert identity.without_143_additions("ranks.json", job % (43, brk + b"," + slow_line)) == job % (42, brk)
    assert identity.without_143_additions("ranks.json", job % (43, slow_line)) == (job % (42, b"")).replace(
        b"[\n    ]", b"[]"
    )
    page = b'<p>x</p>\n<ul id="first-answers">\n%s</ul>\n<p id="cache-times">y</p>\n'
    line = b"<li>most compile time: [0/0] f took 2.00 s</li>\n"
    assert identity.without_143_additions("index.html", page % (b"<li>first failure: x</li>\n" + line)) == page % (
        b"<li>first failure: x</li>\n"
    )
    assert identity.without_143_additions("index.html", page % line) == b'<p>x</p>\n<p id="cache-times">y</p>\n'
    landing = b"<table></table>\n%s<p>next</p>\n"
    title = b"<p><strong>First answers, all ranks</strong> (each rank's first failure, most frequent graph break"
    lists = title + b'%s said once for the ranks that say it):</p>\n<ul id="rank-first-answers">\n%s</ul>\n'
    said = (b" and first recompile,", b", first recompile and slowest compile,")
    brk, slow = (
        b"<li>rank 1: most frequent graph break: x</li>\n",
        b"<li>every rank: most compile time: [0/0] f took 2 s</li>\n",
    )
    assert identity.without_143_additions("index.html", landing % (lists % (said[1], brk + slow))) == landing % (
        lists % (said[0], brk)
    )
    assert identity.without_143_additions("index.html", landing % (lists % (said[1], slow))) == landing % b""
    job = b"Multi-rank report generated\nFirst answers, all ranks:\n%sRanks diverge:\n"
    said_job = b"  rank 0: most compile time: [0/0] f took 2.00 s, in code_gen\n"
    assert identity._stdout_same(b"Multi-rank report generated\nRanks diverge:\n", job % said_job)
    assert identity._stdout_same(job % b"  every rank: x\n", job % (b"  every rank: x\n" + said_job))
    assert not identity._stdout_same(job % b"", job % b"  every rank: first failure: x\n")
    out = b"Compiles: 1 ok.\nExplore it: ...\n"
    assert identity._stdout_same(out, out.replace(b"\nExplore", b"\n  most compile time: [0/0] f took 2.00 s\nExplore"))
    assert not identity._stdout_same(out, out.replace(b"\nExplore", b"\n  first failure: x\nExplore"))


def test_the_format_144_change_is_forgiven() -> None:
    """A failure's announced error joined to `backend='b' raised:` (1.44), forgiven in JSON, HTML
    and stdout; any other change of the reason is not."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[{"reason":"%s"}]}\n'
    joined = b"backend='b' raised: RuntimeError: corpus: boom"
    assert identity.without_144_changes("compiles.json", head % (44, joined)) == head % (43, b"backend='b' raised:")
    assert identity.without_144_changes("compiles.json", head % (44, b"raised: something")) != head % (
        43,
        b"raised:",
    )
    page = b"<td>backend=&#39;b&#39; raised: InductorError: LoweringException: x</td>"
    assert identity.without_144_changes("failures.html", page) == b"<td>backend=&#39;b&#39; raised:</td>"
    out = b"  first failure: [0/0] f failed: BackendCompilerFailed: backend='b' raised:\nExplore\n"
    assert identity._stdout_same(out, out.replace(b"raised:\n", b"raised: RuntimeError: boom\n"))
    assert not identity._stdout_same(out, out.replace(b"raised:\n", b"raised:, now\n"))


def test_the_format_144_first_failure_got_past_is_forgiven() -> None:
    """1.44's first failure of an id a later compile got past (not said before), in compiles.json,
    the report's index and stdout; a first failure said before 1.44 too is not forgiven."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[],"first_answers":[%s\n]}\n'
    text = b"first failure: [0/0] f failed: BackendCompilerFailed: backend='b' raised: RuntimeError: x"
    got_past = b'\n{"kind":"failure","compile_id":"[0/0]","text":"%s; a later compile numbered [0/0] ended ok (y)"}'
    brk = b'\n{"kind":"graph_break","compile_id":"[1/0]","text":"most frequent graph break: z"}'
    assert identity.without_144_changes("compiles.json", head % (44, got_past % text + b"," + brk)) == head % (43, brk)
    assert identity.without_144_changes("compiles.json", head % (44, got_past % text)) == head % (43, b"")
    failed = b'\n{"kind":"failure","compile_id":"[0/0]","text":"first failure: [0/0] f failed: E: x"}'
    assert identity.without_144_changes("compiles.json", head % (44, failed)) == head % (43, failed)
    page = b'<p>x</p>\n<ul id="first-answers">\n%s</ul>\n<p>y</p>\n'
    item = b"<li>first failure: [0/0] f failed: E: x; a later compile numbered [0/0] ended ok (y)</li>\n"
    assert identity.without_144_changes("index.html", page % item) == b"<p>x</p>\n<p>y</p>\n"
    out = b"Compiles: 2 ok.\nExplore it\n"
    said = out.replace(b"\nExplore", b"\n  " + text + b"; a later compile numbered [0/0] ended ok (y)\nExplore")
    assert identity._stdout_same(out, said)
    assert not identity._stdout_same(out, out.replace(b"\nExplore", b"\n  first failure: [0/0] f failed: E\nExplore"))


def test_the_format_144_constraint_violation_is_forgiven() -> None:
    """1.44's constraint violation: its list's first item joined to the reason, and its user line
    (from the reason's `User stack:`) in the entry's failure and its first answer, forgiven in
    JSON, HTML and stdout; another change of the failure is not."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[{"failure":%s}]}\n'
    reason = b'"reason":"Constraints violated (x)! For more information, run with TORCH_LOGS=\\"+dynamic\\".'
    old = b'{"type":"ConstraintViolationError",' + reason + b'","user_frame":null,"traceback":null}'
    new = old.replace(b'.","user', b'. You marked x as dynamic (4).","user').replace(
        b"null,", b'{"file":"/p/m.py","line":14,"code":"if x:"},', 1
    )
    assert identity.without_144_changes("compiles.json", head % (44, new)) == head % (43, old)
    # A base that said another line (the metrics' own) is not this change.
    said_before = old.replace(b"null,", b'{"file":"/p/m.py","line":15,"code":"y"},', 1)
    assert identity.without_144_changes("compiles.json", head % (44, new)) != head % (43, said_before)
    page = b"<li>first failure: [0/0] f failed: ConstraintViolationError: Constraints violated (x)! "
    page += b"TORCH_LOGS=&#34;+dynamic&#34;.</li>"
    said = page.replace(b" failed:", b" failed at m.py:14 (`if x:`):").replace(b".</li>", b". You marked x.</li>")
    assert identity.without_144_changes("index.html", said) == page
    line = (
        b'  first failure: [0/0] f failed: ConstraintViolationError: Constraints violated (x)! TORCH_LOGS="+dynamic".\n'
    )
    out = b"Compiles: 1 failed.\n" + line
    said_out = out.replace(b" failed:", b" failed at m.py:14 (`if x:`):").replace(b'".\n', b'". You marked x.\n')
    assert identity._stdout_same(out, said_out)
    assert not identity._stdout_same(out, out.replace(b"(x)", b"(y)"))


def test_stdout_of_a_base_that_said_143_lines_keeps_them() -> None:
    """A base at 1.43 printed the slowest compile's line too: only 1.44's changes are forgiven."""
    slow = b"  most compile time: [0/0] f took 2.00 s\n"
    old = b"Compiles: 2 ok.\n" + slow
    new = (
        b"Compiles: 2 ok.\n  first failure: [0/0] f failed: E: x; a later compile numbered [0/0] ended ok (y)\n" + slow
    )
    assert identity._stdout_same(old, new)
    assert not identity._stdout_same(old, new.replace(slow, b""))


def test_the_format_144_failed_function_place_is_forgiven() -> None:
    """1.44's first failure with no user line names its function's place, forgiven as written in
    JSON, HTML and stdout (a job's ranks first); a failure said at its user line is not touched."""
    for said in (
        b'{"text":"first failure: [3/2] limited (r.py:30) failed: Unsupported: x"}',
        b"<li>ranks 0, 2: first failure: [0/0] fn (test_misc.py:10755) failed: E: x</li>",
        b"<li>first failure: [0/0] inner (called from simple.py:13) failed: E: x</li>",
    ):
        before = re.sub(rb" \([^()]*:\d+\) failed", b" failed", said)
        assert identity.without_144_changes("index.html", said) == before
    at = b"<li>first failure: [0/0] f failed at a.py:9 (`x`): E: x</li>"
    assert identity.without_144_changes("index.html", at) == at
    out = b"First answers, all ranks:\n  ranks 0, 2: first failure: [0/0] fn failed: E: x\n"
    assert identity._stdout_same(out, out.replace(b"fn failed", b"fn (a.py:4) failed"))


def test_the_format_144_recommendation_words_are_forgiven_its_choice_is_not() -> None:
    """1.44 says why a guard failure explains a recompile in other words: masked on both sides;
    a choice that changed still differs where it is said (`compared_with`)."""
    head = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[{"recommended":%s,'
    head += b'"compared_with":"%s"}]}\n'
    old = head % (43, b'{"index":0,"why":"the newest cache entry, which failed on something other"}', b"[0/1]")
    new = head % (44, b'{"index":0,"why":"the newest cache entry, which Dynamo tries first"}', b"[0/1]")
    assert identity._same("compiles.json", old, new)
    moved = head % (44, b'{"index":1,"why":"[0/0] is the newest entry whose failure \\"x\\""}', b"[0/0]")
    assert not identity._same("compiles.json", old, moved)
    page = b'<p class="answers-why">Why: <strong>dtype of x changed</strong> <small>(%s)</small></p>\n'
    assert identity._same("index.html", page % b"old words", page % b"new words")
    assert not identity._same("index.html", page % b"old words", page.replace(b"dtype", b"size") % b"new words")


def test_the_format_144_stack_value_name_is_forgiven() -> None:
    """1.44 names a resume function's `___stack0` by the graph break that left it: forgiven."""
    said = b"<strong>the value the graph break at a.py:27 left on the stack (___stack0) has 2 dimensions</strong>"
    assert identity.without_144_changes("index.html", said) == b"<strong>___stack0 has 2 dimensions</strong>"
    out = b"  first recompile: [1/1] r: ___stack0 changed: 1 -> 2\n"
    named = out.replace(
        b"___stack0 changed", b"the value the graph break at a.py:9 left on the stack (___stack0) changed"
    )
    assert identity._stdout_same(out, named)


def test_the_format_144_recompile_limit_causes_are_forgiven() -> None:
    """1.44's failure at the recompile limit says what filled it: forgiven in HTML and stdout."""
    said = b"<li>first failure: [3/2] f failed: Unsupported: Dynamo recompile limit exceeded</li>"
    more = said.replace(b"exceeded<", b"exceeded; f had compiled 2 times: 1 recompile because mode changed<")
    assert identity.without_144_changes("index.html", more) == said
    out = b"  first failure: [3/2] f failed: Unsupported: Dynamo recompile limit exceeded\n"
    assert identity._stdout_same(out, out.replace(b"exceeded\n", b"exceeded; f had compiled 2 times: 1 x\n"))


def test_only_the_format_146_module_is_forgiven() -> None:
    """Against a 1.45 base: 1.46 added a compile entry's `module` (its last field) where torch's
    wrapper `inner` compiled a module; a `module` key inside another value stays."""
    entry = b'{"id":"[0/0]","function":{"name":"inner"}%s}'
    compiles = b'{"format":"tlscope","format_version":1,"format_minor":%d,"compiles":[\n%s\n]}\n'
    old = compiles % (45, entry % b"")
    new = compiles % (46, entry % b',"module":"Sequential"')
    assert identity.without_146_additions("compiles.json", new) == old
    assert identity.without_146_additions("index.html", new) == new
    kept = compiles % (46, b'{"settings":{"module":"x","n":1}}')
    assert identity.without_146_additions("compiles.json", kept) == compiles % (
        45,
        b'{"settings":{"module":"x","n":1}}',
    )
