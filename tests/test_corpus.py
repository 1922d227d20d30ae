"""The committed trace corpus (corpus/traces): tlscope reads every trace without a problem, no
trace names the machine it was made on, every payload MD5 checks, and corpus/README.md's counts
match the files."""

from __future__ import annotations

import getpass
import gzip
import hashlib
import json
import re
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus"
TRACES = sorted((CORPUS / "traces").rglob("*.gz"))
TRACE_IDS = [p.relative_to(CORPUS / "traces").as_posix() for p in TRACES]
# Keys torch's trace_structured adds beside the event's own key.
CONTEXT = {
    "rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload",
    "stack", "severity", "timestamp", "pathname", "thread",
}  # fmt: skip
GLOG_START = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} ")


def read(path: Path) -> str:
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
        text: str = f.read()
        return text


def parsed(path: Path) -> list[tuple[dict[str, Any], list[str]]]:
    """(metadata, payload lines) per record; every non-payload line must be an envelope."""
    out: list[tuple[dict[str, Any], list[str]]] = []
    for n, line in enumerate(read(path).splitlines(), 1):
        if line.startswith("\t"):
            assert out, f"{path}:{n}: payload line before any envelope"
            out[-1][1].append(line[1:])
            continue
        assert GLOG_START.match(line), f"{path}:{n}: not an envelope: {line[:80]!r}"
        # The metadata JSON starts after the first "] " that follows the glog prefix.
        meta = json.loads(line[line.index("] ") + 2 :])
        assert isinstance(meta, dict)
        out.append((meta, []))
    return out


def test_corpus_is_committed() -> None:
    assert TRACES, "corpus/traces has no traces: run python corpus/generate.py"
    total = sum(p.stat().st_size for p in TRACES)
    assert total < 30 * 1024 * 1024


def _machine_strings() -> list[str]:
    found = ["/root", "/work/", "/tmp/", "/home/", sys.prefix, str(REPO), str(Path.home())]
    return sorted({s for s in found if s not in ("/", "")})


@pytest.mark.parametrize("trace", TRACES, ids=TRACE_IDS)
def test_no_machine_names(trace: Path) -> None:
    text = read(trace)
    for needle in _machine_strings():
        assert needle not in text, f"{trace} names {needle!r}"
    host = socket.gethostname().split(".")[0]
    if host and host != "localhost":
        assert not re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", text), host
    user = getpass.getuser()
    # A user name as a path component, or its suffix as in /tmp/torchinductor_<user>/ (not the
    # "oneapi_root" config key, which is no path).
    assert not re.search(rf"/(?:[^\s\"'\\/]*[_-])?{re.escape(user)}/", text), user


@pytest.mark.parametrize("trace", TRACES, ids=TRACE_IDS)
def test_payload_md5s_check(trace: Path) -> None:
    for meta, payload in parsed(trace):
        if "has_payload" in meta:
            text = "\n".join(payload)
            assert meta["has_payload"] == hashlib.md5(text.encode()).hexdigest()


def readme_counts() -> dict[str, dict[str, Counter[str]]]:
    """{trace path relative to corpus/: {"events": ..., "artifacts": ...}} from README.md."""
    counts: dict[str, dict[str, Counter[str]]] = {}
    trace = kind = None
    for line in (CORPUS / "README.md").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^### `([^`]+)`", line):
            trace, kind = m.group(1), None
            counts[trace] = {"events": Counter(), "artifacts": Counter()}
        elif line.startswith("Envelope keys"):
            kind = "events"
        elif line.startswith("Artifacts"):
            kind = "artifacts"
        elif (m := re.match(r"^\| `([^`]+)` \| (\d+) \|$", line)) and trace and kind:
            counts[trace][kind][m.group(1)] = int(m.group(2))
    return counts


def test_readme_lists_every_trace() -> None:
    listed = set(readme_counts())
    assert listed == {p.relative_to(CORPUS).as_posix() for p in TRACES}


@pytest.mark.parametrize("trace", TRACES, ids=TRACE_IDS)
def test_readme_counts_match(trace: Path) -> None:
    events: Counter[str] = Counter()
    artifacts: Counter[str] = Counter()
    for meta, _ in parsed(trace):
        keys = [k for k in meta if k not in CONTEXT]
        assert len(keys) == 1, f"expected one event key, got {keys}"
        events[keys[0]] += 1
        if keys[0] == "artifact":
            artifacts[meta["artifact"]["name"]] += 1
    documented = readme_counts()[trace.relative_to(CORPUS).as_posix()]
    assert documented["events"] == events
    assert documented["artifacts"] == artifacts


def torch_json_defects(trace: Path) -> int:
    """Artifacts declaring `encoding: json` whose payload is not JSON, counted here independently.

    torch 2.13 writes a `recompile_reasons` artifact holding a single reason as bare text; tlscope
    recognises that quirk and lists it as note recompile_reasons_text (issue 20: not a problem, so
    `--strict` passes). Nothing in the corpus is a problem.
    """
    found = 0
    for meta, payload in parsed(trace):
        artifact = meta.get("artifact")
        if isinstance(artifact, dict) and artifact.get("encoding") == "json" and payload:
            try:
                json.loads("\n".join(payload))
            except ValueError:
                assert artifact.get("name") == "recompile_reasons", artifact
                found += 1
    return found


@pytest.mark.parametrize("trace", TRACES, ids=TRACE_IDS)
def test_tlscope_reads_strict(trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    defects = torch_json_defects(trace)
    proc = subprocess.run(
        [sys.executable, "-m", "tlscope", str(trace), "--strict", "-o", str(out)],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    # One manifest for a single-rank log; a log holding several ranks' events (muxed) is split
    # into rank_N/ folders, each with its own manifest.
    paths = [out / "manifest.json"] if (out / "manifest.json").exists() else []
    paths = paths or sorted(out.glob("rank_*/manifest.json"))
    assert paths, sorted(p.name for p in out.iterdir())
    events: Counter[str] = Counter()
    artifacts: Counter[str] = Counter()
    notes: Counter[str] = Counter()
    for path in paths:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        assert manifest["problems"]["counts"] == {}, (path, manifest["problems"])
        notes.update(manifest["notes"]["counts"])
        events.update({k: v["count"] for k, v in manifest["events"].items()})
        artifacts.update({k: v["count"] for k, v in manifest["artifacts"].items()})
    assert notes == ({"recompile_reasons_text": defects} if defects else {})
    # The reader saw the same events the README documents (counted independently).
    documented = readme_counts()[trace.relative_to(CORPUS).as_posix()]
    assert events == documented["events"]
    assert artifacts == documented["artifacts"]


def test_readme_is_up_to_date() -> None:
    """README.md is exactly what corpus/describe.py writes for the committed traces (sizes too)."""
    proc = subprocess.run(
        [sys.executable, str(CORPUS / "describe.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
