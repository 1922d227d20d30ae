"""The user's own line (issue 20, finding 2): every location tlscope attributes (graph breaks, guard
failures, failures) is the innermost frame of the user's code, not the standard library,
site-packages or torch, whenever the stack holds one; what counts is configurable (--user-code).

Checked on every trace of the corpus and of ../shared against the payloads, read here with a small
parser and the documented rule (FORMAT.md "What is user code"), sharing no code with tlscope's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, TLPARSE_TRACES, require_shared

from tlscope.cli import main as cli
from tlscope.format.compiles import SourceLocation, is_torch_wrapper
from tlscope.pipeline.single import run
from tlscope.write.outdir import OutputDir
from tlscope.write.run_options import ParseOptions

CORPUS_LOGS = sorted(p for p in CORPUS.rglob("*.log.gz") if "muxed" not in p.parts)
SHARED_LOGS = sorted((TLPARSE_TRACES / "inputs").glob("*.log")) if TLPARSE_TRACES.is_dir() else []
LOGS = [*CORPUS_LOGS, *SHARED_LOGS]
IDS = [p.relative_to(CORPUS if p.is_relative_to(CORPUS) else TLPARSE_TRACES).as_posix() for p in LOGS]

_FRAME = re.compile(r'^\s*File "([^"]*)", line (\d+), in ')
_LIBRARY = re.compile(r"(^|/)(site-packages|dist-packages|torch)/|(^|/)lib/python\d[\d.]*/")


def library(file: str | None) -> bool:
    """FORMAT.md's rule: pseudo-files, installed packages, the standard library and torch."""
    return not file or file.startswith("<") or _LIBRARY.search(file) is not None


def frames(payload: str, start: str, stop: str) -> list[tuple[str, int]]:
    """(file, line) of the frames after the line `start` up to a line starting with `stop`."""
    lines = payload.split("\n")
    at = next((i for i, t in enumerate(lines) if t.strip().startswith(start)), None)
    found: list[tuple[str, int]] = []
    for text in lines[at + 1 :] if at is not None else []:
        if stop and text.startswith(stop):
            break
        match = _FRAME.match(text)
        if match is not None:
            found.append((match[1], int(match[2])))
    return found


def parsed(log: Path, folder: Path, user_code: tuple[str, ...] = ()) -> Path:
    out = OutputDir(folder / "out", overwrite=False)
    out.check()
    run(log, out, ParseOptions(user_code=user_code))
    return folder / "out"


def payload(out: Path, ref: dict[str, Any]) -> str:
    return (out / ref["payload_filename"]).read_text(encoding="utf-8")


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_no_attributed_location_is_library_code_when_the_stack_has_user_code(log: Path, tmp_path: Path) -> None:
    if not log.is_relative_to(CORPUS):
        require_shared()
    out = parsed(log, tmp_path)
    compiles = json.loads((out / "compiles.json").read_text())
    for entry in compiles["compiles"]:
        for gb in entry["graph_breaks"]:
            stack = frames(payload(out, gb["event"]), "User code traceback", "Traceback (most recent")
            assert [(f["file"], f["line"]) for f in gb["stack"]] == stack, entry["id"]
            mine = [f for f in stack if not library(f[0])]
            where = (gb["user_frame"]["file"], gb["user_frame"]["line"])
            if mine and library(where[0]) is False and gb["stopped_at"] is None:
                continue  # tracing stopped in user code: that is the place
            if mine:
                assert where == mine[-1], (entry["id"], where)
        failure = entry["failure"]
        if failure and failure["traceback"] and failure["user_frame"]:
            block = payload(out, failure["traceback"]).rpartition("\nfrom user code:\n")[2].split("\n\n")[0]
            mine = [f for f in frames("from user code:\n" + block, "from user code:", "") if not library(f[0])]
            if mine:
                assert not library(failure["user_frame"]["file"]), entry["id"]
        mine_in_stack = [f for f in entry["stack"] if not library(f["file"])]
        assert entry["user_frame"] == (mine_in_stack[-1] if mine_in_stack else None), entry["id"]
        # A guard is installed by the compiled frame (or code it inlined): a compiled library
        # function's (torch's AdamW.step, corpus lr_schedule) guards are in library code, which
        # the guard's own frame, all the log gives it, says.
        fn = entry["function"]
        wrapper = fn is not None and is_torch_wrapper(SourceLocation(file=fn["file"], line=fn["line"], name=fn["name"]))
        own = fn is None or wrapper or not library(fn["file"] or "")
        for guard in (entry["recompile"] or {}).get("guard_failures", []):
            if guard["user_frame"] and own and any(not library(f["file"]) for f in entry["stack"]):
                assert not library(guard["user_frame"]["file"]), entry["id"]
    artifacts = [gb for e in compiles["compiles"] for gb in e["graph_breaks"]]
    for group in compiles["graph_breaks"] if artifacts else []:  # else an older torch's, from restart reasons
        first = next(gb for gb in artifacts if gb["user_frame"] == group["user_frame"])
        assert library(group["user_frame"]["file"]) is library(first["user_frame"]["file"])


def test_ddp_breaks_are_the_users_line_in_summary_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ranks_diverge_2: DDP's forward breaks in contextlib.py and torch/nn/parallel/distributed.py;
    the user's line is _ranks.py:76 `compiled(torch.randn(batch, 32)).sum().backward()`."""
    out = tmp_path / "job"
    assert cli([str(CORPUS / "ranks_diverge_2"), "-o", str(out), "--no-browser"]) == 0
    capsys.readouterr()
    assert cli(["summary", str(out), "--json"]) == 0
    breaks = json.loads(capsys.readouterr().out)["graph_breaks"]
    assert breaks and {(Path(b["user_frame"]["file"]).name, b["user_frame"]["line"]) for b in breaks} == {
        ("_ranks.py", 76)
    }
    assert {b["user_frame"]["code"] for b in breaks} == {"compiled(torch.randn(batch, 32)).sum().backward()"}
    assert {Path(b["stopped_at"]["file"]).name for b in breaks} == {"contextlib.py", "distributed.py"}
    page = (out / "rank_0" / "index.html").read_text()
    table = page.split('id="graph-break-0"', 1)[1].split("</table>", 1)[0]
    assert "_ranks.py:76</code>" in table
    assert re.search(r"<td><code>[^<]*(contextlib|distributed)\.py", table) is None
    assert "stopped in library code at" in table
    capsys.readouterr()
    assert cli(["summary", str(out), "--width", "100"]) == 0
    text = capsys.readouterr().out
    assert "_ranks.py:76" in text.split("Distinct graph breaks", 1)[1]
    # DDP's own functions compiled (inner, helper, __init__): each row says the user's line it came from.
    assert "← _ranks.py:76" in text.split("Compiles", 1)[1].split("Distinct graph breaks", 1)[0]
    entries = json.loads((out / "rank_0" / "compiles.json").read_text())["compiles"]
    inner = next(e for e in entries if e["id"] == "[0/0]")
    assert (Path(inner["user_frame"]["file"]).name, inner["user_frame"]["line"]) == ("_ranks.py", 76)


def test_user_code_patterns_decide_what_is_user_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--user-code replaces the rule: with torch.nn counted as user code, DDP's break is attributed
    to distributed.py:1757 again (the innermost frame matching), on the command line or from
    TLSCOPE_USER_CODE."""
    log = next((CORPUS / "ranks_diverge_2").glob("*rank_0*.log.gz"))
    want = ("distributed.py", 1757)
    for how in ("flag", "env"):
        out = tmp_path / how
        args = [str(log), "-o", str(out), "--no-browser"]
        if how == "flag":
            args += ["--user-code", "*/torch/nn/*"]
        else:
            monkeypatch.setenv("TLSCOPE_USER_CODE", "*/torch/nn/*")
        assert cli(args) == 0
        groups = json.loads((out / "compiles.json").read_text())["graph_breaks"]
        where = {(Path(g["user_frame"]["file"]).name, g["user_frame"]["line"]) for g in groups}
        assert want in where and ("_ranks.py", 76) not in where
        monkeypatch.delenv("TLSCOPE_USER_CODE", raising=False)
    capsys.readouterr()
    assert cli(["summary", str(log), "--json", "--user-code", "*/contextlib.py"]) == 0
    groups = json.loads(capsys.readouterr().out)["graph_breaks"]
    assert ("contextlib.py", 105) in {(Path(g["user_frame"]["file"]).name, g["user_frame"]["line"]) for g in groups}


def test_pack_and_diff_take_user_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The commands that parse a log on the way take --user-code too."""
    import base64
    import gzip

    log = next((CORPUS / "ranks_diverge_2").glob("*rank_0*.log.gz"))
    html = tmp_path / "p.html"
    assert cli(["pack", str(log), "-o", str(html), "--payload-budget", "0", "--user-code", "*/torch/nn/*"]) == 0
    text = html.read_text()
    start = text.index('id="tlscope-pack">') + len('id="tlscope-pack">')
    files = json.loads(text[start : text.index("</script>", start)])["files"]
    groups = json.loads(gzip.decompress(base64.b64decode(files["compiles.json"])))["graph_breaks"]
    assert ("distributed.py", 1757) in {(Path(g["user_frame"]["file"]).name, g["user_frame"]["line"]) for g in groups}
    capsys.readouterr()
    assert cli(["diff", str(log), str(log), "--user-code", "*/torch/nn/*", "--json"]) == 0
