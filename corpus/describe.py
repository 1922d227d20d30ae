"""Writes corpus/README.md from the committed traces: per trace, the torch version, what the
workload does (the scenario script's docstring) and the event keys and artifact names it
contains, with counts.

    python corpus/describe.py            # rewrite corpus/README.md
    python corpus/describe.py --check    # exit 1 if README.md is out of date

Only the standard library: it reads the traces itself rather than through tlscope, so the
README is an independent description the tests can hold tlscope to.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
TRACES = CORPUS / "traces"
SCENARIOS = CORPUS / "scenarios"
README = CORPUS / "README.md"

_GLOG = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]]*\] ")
# Keys torch adds around the event's own key: the reader's list, so both agree on what an event is.
from tlscope.read.reader import CONTEXT_KEYS  # noqa: E402


@dataclass
class TraceSummary:
    path: Path
    size: int
    records: int = 0
    torch_version: str = "unknown"
    events: Counter[str] = field(default_factory=Counter)
    artifacts: Counter[str] = field(default_factory=Counter)
    ranks: set[int] = field(default_factory=set)


def _records(path: Path) -> Iterator[tuple[dict[str, object], list[str]]]:
    opener = gzip.open if path.suffix == ".gz" else open
    meta: dict[str, object] | None = None
    payload: list[str] = []
    with opener(path, "rt", encoding="utf-8", newline="\n") as f:  # type: ignore[operator]
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                payload.append(line[1:])
                continue
            if meta is not None:
                yield meta, payload
            match = _GLOG.match(line)
            meta, payload = (json.loads(line[match.end() :]) if match else {"<non-envelope>": 1}), []
    if meta is not None:
        yield meta, payload


def summarise(path: Path) -> TraceSummary:
    s = TraceSummary(path=path, size=path.stat().st_size)
    for meta, payload in _records(path):
        s.records += 1
        for key in meta:
            if key not in CONTEXT_KEYS:
                s.events[key] += 1
        rank = meta.get("rank")
        if isinstance(rank, int):
            s.ranks.add(rank)
        art = meta.get("artifact")
        if isinstance(art, dict):
            name = str(art.get("name"))
            s.artifacts[name] += 1
            if name == "torch_version" and payload:
                s.torch_version = str(json.loads("\n".join(payload)).get("pytorch_version"))
    return s


def scenario_doc(name: str) -> str:
    script = SCENARIOS / f"{name}.py"
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    # Drop the leading "name:" the docstrings start with; the heading already says it.
    text = " ".join(doc.split()).removeprefix(f"{name}: ")
    return text[:1].upper() + text[1:]


def trace_files() -> list[Path]:
    return sorted(p for p in TRACES.rglob("*.gz") if p.is_file())


HEADER = """\
# tlscope trace corpus

Real `TORCH_TRACE` logs made by small `torch.compile` / `torch.export` workloads on CPU, one
directory per scenario under `traces/`. Each scenario is a script in `scenarios/`; the logs are
redacted (see below) and gzipped.

Regenerate everything (about 10 minutes on 2 cores; needs `torch==2.13.0` and a C++ compiler):

    python corpus/generate.py              # all scenarios, then this README
    python corpus/generate.py --only caches --only export
    python corpus/describe.py              # this README only, from the committed traces

`generate.py` runs each scenario script in a fresh process with `TORCH_TRACE` (or, for
`export`, `TORCH_DTRACE`) and `TORCHINDUCTOR_CACHE_DIR` pointing into a fresh temporary
directory, then writes every `*.log` found under the trace directory to
`traces/<scenario>/<same relative path>.gz` through `tlscope redact`. File names are kept as torch
made them (`dedicated_log_torch_trace_[rank_N_]xxxxxxxx.log`), so they change on each
regeneration.

## Redaction

No committed trace names the machine it was made on. `tlscope redact` rewrote, everywhere
(envelope and payload lines, JSON-escaped forms included) and then recomputed each
`has_payload` MD5:

| was | now |
|---|---|
| the scenario's `TORCHINDUCTOR_CACHE_DIR` | `$TORCHINDUCTOR_CACHE_DIR` |
| the scenario's `TORCH_TRACE` / `TORCH_DTRACE` directory | `$TORCH_TRACE` |
| the scenario's scratch directory | `$SCRATCH` |
| the repository checkout (the scenarios' working directory) | `$CWD` |
| `sys.prefix` / `sys.base_prefix` (the Python install with torch) | `$PREFIX` |
| a virtualenv, if any | `$VENV` |
| the home directory | `$HOME` |
| the temporary directory | `$TMPDIR` |
| the user name, as a path component or its `_user` suffix | `$USER` |
| the host name, as a whole word | `$HOST` |

`tests/test_corpus.py` scans every trace for leftovers.

## The muxed trace

`traces/muxed/muxed.log.gz` is built from a real 3-rank run of the `ranks_diverge` workload: the
three rank logs' records (an envelope line together with its tab-indented payload lines) are
merged into one file in glog-timestamp order (`heapq.merge`, so records with equal timestamps stay
in rank order), and the rank logs are dropped. See `scenarios/muxed.py`. The glog timestamp has
no year and millisecond resolution, so this is the same order a combined job log would show up to
ties.

## Coverage notes: what is where, and what torch 2.13 on CPU did not produce

- `guard_added`, `propagate_real_tensors_provenance`, `expression_created`,
  `missing_fake_kernel` and `mismatched_fake_kernel` appear only in the `export` scenario: they
  are `dtrace_structured` events, written only under `TORCH_DTRACE` (or inside `draft_export`),
  so that scenario re-runs itself with `TORCH_DTRACE`. Each `draft_export` call writes its own
  log into the same directory (its `CaptureStructuredTrace` handler replaces the trace handler
  while it runs), which is why `traces/export/` has three files; those logs have no
  `torch_version` artifact.
- Triton and CUDA events (`triton_kernel_info`, `inductor_triton_kernel_to_post_grad_nodes`,
  autotuning, cudagraphs) are not covered: the machine has no GPU.
- AOTInductor (`graph_dump` with `inductor_aot_wrapper_code` / `inductor_aot_kernel_code`) and
  PGO (`get_local_code_state` / `put_local_code_state`) artifacts were not targeted by any
  scenario.
- The ranks of one run share `TORCHINDUCTOR_CACHE_DIR`, as ranks on one host do, so a rank can
  hit FX graph cache entries a peer has just written: that is why ranks doing the same work can
  have different event counts (e.g. a rank with `fx_graph_cache_hit` artifacts in `ranks_same_4`).
  Which rank wins is a race, so it changes from one regeneration to the next.
- Provenance tracking in torch 2.13 writes `inductor_provenance_tracking_node_mappings` and
  `inductor_provenance_tracking_kernel_stack_traces`; the older `inductor_post_to_pre_grad_nodes`
  and `inductor_triton_kernel_to_post_grad_nodes` names are not emitted by this version.
"""


def render() -> str:
    files = trace_files()
    summaries = [summarise(p) for p in files]
    out = [HEADER, "## Traces\n", "| trace | gz bytes | records | ranks |", "|---|---:|---:|---|"]
    total = 0
    for s in summaries:
        rel = s.path.relative_to(CORPUS).as_posix()
        ranks = ",".join(str(r) for r in sorted(s.ranks)) or "-"
        out.append(f"| `{rel}` | {s.size} | {s.records} | {ranks} |")
        total += s.size
    out.append(f"\nTotal: {len(summaries)} traces, {total} bytes gzipped.\n")
    # draft_export's own log has no torch_version artifact: it was written by the same process
    # as its scenario's other log, so it takes that version.
    versions = {s.path.relative_to(TRACES).parts[0]: s.torch_version for s in summaries if s.torch_version != "unknown"}
    current = None
    for s in summaries:
        rel = s.path.relative_to(CORPUS).as_posix()
        scenario = s.path.relative_to(TRACES).parts[0]
        if scenario != current:
            current = scenario
            out.append(f"## Scenario `{scenario}`\n")
            out.append(scenario_doc(scenario) + "\n")
        out.append(f"### `{rel}`\n")
        version = s.torch_version
        if version == "unknown" and scenario in versions:
            version = f"{versions[scenario]} (no torch_version artifact in this log; same process)"
        out.append(f"torch {version}; {s.records} records.\n")
        out.append("Envelope keys:\n")
        out.append("| key | count |\n|---|---:|")
        out.extend(f"| `{k}` | {n} |" for k, n in sorted(s.events.items()))
        out.append("\nArtifacts (`artifact` events by name):\n")
        if s.artifacts:
            out.append("| name | count |\n|---|---:|")
            out.extend(f"| `{k}` | {n} |" for k, n in sorted(s.artifacts.items()))
        else:
            out.append("(none)")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if README.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = README.read_text(encoding="utf-8") if README.exists() else ""
        if current != text:
            print("corpus/README.md is out of date: run python corpus/describe.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
