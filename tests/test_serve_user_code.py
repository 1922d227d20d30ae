"""`tlscope serve --user-code PATTERN` (and TLSCOPE_USER_CODE): the served parse attributes breaks
with the patterns, and a parse cached with other patterns (or none) is not served for them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.commands.serve_command import build_parser
from tlscope.serve.cache import Cache
from tlscope.serve.serve_cli import config_from
from tlscope.serve.server import build
from tlscope.serve.traces import Traces

# A rank's log of a DDP job: its breaks stop in contextlib.py and distributed.py, called from the
# scenario's _ranks.py.
LOG = next((CORPUS / "ranks_diverge_2").glob("*rank_0_*.log.gz"))


def _break_frames(traces: Traces) -> tuple[Path, list[object]]:
    (trace,) = traces.add_source(str(LOG))
    asyncio.run(traces.ready(trace))
    assert trace.state == "ready" and trace.local is not None
    compiles = json.loads((trace.local / "compiles.json").read_text())
    frames = [b["user_frame"]["file"] for c in compiles["compiles"] for b in c["graph_breaks"]]
    assert frames, "graph_breaks has graph breaks"
    return trace.local, frames


def test_patterns_reach_the_parse_and_key_its_cache_entry(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    default_out, default_frames = _break_frames(Traces(Cache(cache, 1 << 30), {}))
    assert all(f.endswith("/_ranks.py") for f in default_frames)  # the scenario's own file
    # One cache, another pattern: a parse of its own whose breaks stay in the library files named
    # user code, not the default's entry served again.
    pattern = ("*/contextlib.py", "*/distributed.py")
    mine_out, mine_frames = _break_frames(Traces(Cache(cache, 1 << 30), {}, user_code=pattern))
    assert mine_out != default_out
    assert len(mine_frames) == len(default_frames)
    assert all(f.endswith(("/contextlib.py", "/distributed.py")) for f in mine_frames)
    # The default's entry is still the default's.
    again_out, again_frames = _break_frames(Traces(Cache(cache, 1 << 30), {}))
    assert (again_out, again_frames) == (default_out, default_frames)
    manifest = json.loads((mine_out / "manifest.json").read_text())
    assert "--user-code=*/contextlib.py" in manifest["command"]


@pytest.mark.parametrize("how", ["flag", "env"])
def test_serve_takes_the_flag_and_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    argv = [str(LOG), "--cache-dir", str(tmp_path / "cache")]
    if how == "flag":
        argv += ["--user-code", "*/a/*", "--user-code", "*/b/*"]
    else:
        monkeypatch.setenv("TLSCOPE_USER_CODE", "*/a/*:*/b/*")
    args = build_parser().parse_args(argv)
    from tlscope.serve.serve_cli import user_code_patterns

    server = build(config_from(args), args.sources, user_code=user_code_patterns(args.user_code))
    assert server.traces.user_code == ("*/a/*", "*/b/*")
