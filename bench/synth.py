"""A synthetic tlscope output folder of N events, for viewer benchmarks and the million-row test.

The events are those of a real output folder (default: the corpus's compile_failure trace),
repeated in order with their `log_line` renumbered and their `frame_id` shifted every
`per_frame` events, so the table has realistic rows, many compile ids and growing numbers. The
payloads are the real folder's (every event's payload_filename points at one). The manifest is
written to match: raw_jsonl_events, compile_ids, events per key. When the real folder has a
compiles.json, so does the synthetic one: one entry per compile id, each a copy of a real entry
(in turn) under the new id, and the real graph_breaks, so a viewer reads an index file of a real
trace's kind and more than its share of bytes (the 40k case: 424 compile ids of ~33 KB each, 14 MB,
against 3.3 MB for the big trace's 106).

    python bench/synth.py OUT --events 1000000 [--source FOLDER]
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path

CONTEXT = {"rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload", "stack",
           "severity", "timestamp", "pathname", "thread", "process", "lineno", "log_line", "payload_filename", "payload_size"}


def _key(event: dict[str, object]) -> str:
    return next((k for k in event if k not in CONTEXT), "(none)")


def _cid(frame: int, event: dict[str, object]) -> str:
    attempt = event.get("attempt")
    suffix = f"_{attempt}" if isinstance(attempt, int) and attempt else ""
    return f"[{frame}/{event.get('frame_compile_id', 0)}{suffix}]"


def synthesize(out: Path, events: int, source: Path, per_frame: int = 200) -> dict[str, object]:
    """Write OUT (manifest.json, raw.jsonl, payloads/) with `events` events; returns the manifest."""
    lines = (source / "raw.jsonl").read_text(encoding="utf-8").splitlines()
    header, body = lines[0], [json.loads(x) for x in lines[1:]]
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source / "payloads", out / "payloads", dirs_exist_ok=True)
    keys: Counter[str] = Counter()
    cids: Counter[str] = Counter()
    with (out / "raw.jsonl").open("w", encoding="utf-8") as raw:
        raw.write(header + "\n")
        for i in range(events):
            event = dict(body[i % len(body)])
            event["log_line"] = i + 1
            if isinstance(event.get("frame_id"), int):
                event["frame_id"] = i // per_frame
                cids[_cid(i // per_frame, event)] += 1
            else:
                cids["[-/-]"] += 1
            keys[_key(event)] += 1
            raw.write(json.dumps(event, separators=(",", ":")) + "\n")
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(
        raw_jsonl_events=events,
        events={k: {"count": n, "payload_bytes": 0} for k, n in sorted(keys.items())},
        compile_ids=[{"id": c, "dir": c, "first": None, "last": None, "events": n} for c, n in sorted(cids.items())],
        files=["manifest.json", "raw.jsonl"],
    )
    if (source / "compiles.json").is_file():
        _compiles(out, source, sorted(cids))
        manifest["files"] = ["manifest.json", "raw.jsonl", "compiles.json"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def _compiles(out: Path, source: Path, ids: list[str]) -> None:
    """compiles.json for `ids`: the source's entries in turn, each under its new id."""
    data = json.loads((source / "compiles.json").read_text(encoding="utf-8"))
    real = [e for e in data["compiles"] if e.get("id") != "[-/-]"]
    entries = []
    for n, cid in enumerate(c for c in ids if c != "[-/-]"):
        entry = dict(real[n % len(real)])
        entry.update(id=cid, dir=cid)  # as the synthetic manifest's compile_ids
        entries.append(entry)
    data["compiles"] = entries
    (out / "compiles.json").write_text(json.dumps(data), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--source", type=Path, required=True, help="a real tlscope output folder")
    args = parser.parse_args()
    synthesize(args.out, args.events, args.source)


if __name__ == "__main__":
    main()


def compact(out: Path, events: int, per_frame: int = 100) -> dict[str, object]:
    """OUT with `events` small events (~130 bytes each), no payloads: for tests at a million rows."""
    out.mkdir(parents=True, exist_ok=True)
    kinds = ("dynamo_start", "describe_tensor", "artifact", "compilation_metrics")
    keys: Counter[str] = Counter()
    cids: Counter[str] = Counter()
    with (out / "raw.jsonl").open("w", encoding="utf-8") as raw:
        raw.write('{"string_table":["synthetic.py"]}\n')
        for i in range(events):
            kind, frame = kinds[i % 4], i // per_frame
            keys[kind] += 1
            cids[f"[{frame}/0]"] += 1
            raw.write(
                f'{{"timestamp":"2026-01-01T00:00:00.{i % 1000000:06d}","attempt":0,"{kind}":{{"n":{i}}},'
                f'"frame_compile_id":0,"frame_id":{frame},"log_line":{i + 1},"process":1}}\n'
            )
    manifest = {
        "format": "tlscope",
        "format_version": 1,
        "raw_jsonl_events": events,
        "ranks": [],
        "events": {k: {"count": n, "payload_bytes": 0} for k, n in sorted(keys.items())},
        "compile_ids": [{"id": c, "events": n} for c, n in cids.items()],
        "files": ["manifest.json", "raw.jsonl"],
    }
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest
