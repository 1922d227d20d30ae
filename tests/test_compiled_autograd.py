"""Compiled autograd (`torch._dynamo.config.compiled_autograd = True`): each backward pass is
captured into one graph under a compile id of its own (`[!0/-/-]`), which Dynamo then compiles
as `[!0/1/0]`. Torch logs no compilation metrics for the capture, so until format 1.47 it read
`metrics_missing`, and a run's first line counted it "without metrics", as if something had
gone wrong; and its graph's compile was named `forward`, the method of a GraphModule torch
generated. Corpus `compiled_autograd`: two training steps of a small MLP."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from helpers import CORPUS, corpus_compiles

from tlscope.format.compiles import CompileEntry, SourceLocation
from tlscope.format.status import compile_status, status_words


@pytest.fixture(scope="module")
def compiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_compiles("compiled_autograd", tmp_path_factory)


def _entry(data: dict[str, Any], cid: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in data["compiles"] if e["id"] == cid)
    return found


def test_the_capture_is_captured_with_its_time(compiles: dict[str, Any]) -> None:
    capture = _entry(compiles, "[!0/-/-]")
    assert capture["status"] == "captured" and capture["metrics"] is None
    assert any(g["kind"] == "compiled_autograd_graph" for g in capture["graphs"])
    # Its time is its `compiled_autograd` span, the only phase it has.
    assert capture["time"]["source"] == "chromium_event" and capture["time"]["duration_s"] > 0
    assert [p["name"] for p in capture["phases"]] == ["compiled_autograd"]
    assert capture["time"]["duration_s"] == capture["phases"][0]["seconds"]
    # Its stack is its graph's compile's above compiled autograd's runtime: the user's backward call.
    assert capture["user_frame"]["line"] == 20 and "loss.backward()" in capture["user_frame"]["code"]
    assert not any(f["file"].endswith("torch/_dynamo/compiled_autograd.py") for f in capture["stack"])
    said = {e["status"] for e in compiles["compiles"]}
    assert "captured" in said and "metrics_missing" not in said


def test_the_captured_graphs_compile_is_named_as_torch_names_the_graph(compiles: dict[str, Any]) -> None:
    graph = _entry(compiles, "[!0/1/0]")
    assert graph["status"] == "ok" and graph["module"] == "CompiledAutograd0"
    assert graph["function"]["name"] == "forward" and graph["function"]["file"].startswith("<eval_with_key>")
    # The user's own compiles keep their names.
    assert "module" not in _entry(compiles, "[0/0_1]")


def test_captured_ranks_between_ok_and_metrics_missing() -> None:
    common = {"outside": False, "failed": False, "restarted": False, "broke": False, "empty": False, "cache_hit": False}
    assert compile_status(**common, has_metrics=False, captured=True) == "captured"
    # A capture id that logged no graph (the process died while capturing) is still missing.
    assert compile_status(**common, has_metrics=False) == "metrics_missing"
    # Anything the capture's own records establish wins (a failure, a break): never hidden by it.
    assert compile_status(**{**common, "failed": True}, has_metrics=False, captured=True) == "failed"


def test_a_graph_compile_is_said_by_torchs_name() -> None:
    generated = SourceLocation(name="forward", file="<eval_with_key>.5", line=4)
    entry = CompileEntry(id="[!0/1/0]", dir="0_1_0_0", status="ok", frame_compile="[!0/1/0]", function=generated)
    assert entry.function_name() == "forward"
    entry.module = "CompiledAutograd0"
    assert entry.function_name() == "CompiledAutograd0.forward"


def test_status_words_count() -> None:
    assert status_words("captured", 1) == "compiled-autograd capture"
    assert status_words("captured", 3) == "compiled-autograd captures"
    assert status_words("metrics_missing", 1) == "without metrics"


def test_summary_says_a_capture_not_a_missing_record() -> None:
    log = str(next((CORPUS / "compiled_autograd").glob("*.log.gz")))
    run = subprocess.run([sys.executable, "-m", "tlscope", "summary", log], check=True, capture_output=True, text=True)
    text = " ".join(run.stdout.split())  # rich wraps at 80 columns
    assert re.search(r"\b1 compiled-autograd capture\b(?!s)", text)
    assert "without metrics" not in text and "metrics_missing" not in text
    assert "CompiledAutograd0.forward" in text
