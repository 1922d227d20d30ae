"""Coverage-guided fuzzing (atheris, libFuzzer) of the reader's envelope and payload decoding.

    pip install -e ".[fuzz]"                              # atheris
    python bench/atheris_reader.py -runs=200000           # libFuzzer flags pass through
    python bench/atheris_reader.py -max_total_time=600 -dict=bench/atheris.dict

bench/fuzz.py mutates whole real traces and runs every command; this harness instead lets
libFuzzer grow inputs (kept in bench/results/atheris-corpus/, git-ignored) that reach new
branches of the code every log byte goes through first:
the line splitter and payload collection (read/reader.py), the glog prefix (read/glog.py, strict
and loose), the JSON decode boundary (format/json_boundary.py) on envelopes and payloads, compile
ids and typed events, the rank sniff (read/log_ranks.py), and the payload decoders of the format
writer (chromium events, torch_version). Any exception escaping is a crash: hostile bytes must
become problems, never exceptions. The seed corpus is the first records of every corpus trace.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["tlscope"]):
    from tlscope.model.problems import Problems
    from tlscope.read import glog
    from tlscope.format.json_boundary import JsonError, decode
    from tlscope.read.log_ranks import line_rank
    from tlscope.read.reader import LogReader, _Lines
    from tlscope.write import format as format_writer

REPO = Path(__file__).resolve().parents[1]
_READER = LogReader(Path("fuzz.log"), problems=Problems(keep_per_kind=1))


def one_input(data: bytes) -> None:
    reader = _READER
    reader.problems = Problems(keep_per_kind=1)
    reader.string_tables.clear()
    reader.process_ranks.clear()
    reader.rank = None
    lines = _Lines(io.BytesIO(data), 1 << 16)
    for record in reader._records(lines):
        if record.payload is not None:
            format_writer._torch_version(record.payload)
            with contextlib.suppress(JsonError):
                decode(record.payload)
    text = data.decode("utf-8", "surrogateescape")
    for line in text.split("\n")[:50]:
        glog.loose_prefix_end(line)
    for line in data.split(b"\n")[:50]:
        found = glog.process_id(line)
        if found is not None:
            line_rank(line, found[1])


def seed_corpus(folder: Path, per_trace: int = 40) -> None:
    """The first records of every corpus trace, one file each (a real starting point)."""
    for i, trace in enumerate(sorted((REPO / "corpus" / "traces").rglob("*.log.gz"))):
        lines = gzip.decompress(trace.read_bytes()).split(b"\n")
        (folder / f"seed{i}").write_bytes(b"\n".join(lines[:per_trace]) + b"\n")


def main() -> None:
    argv = list(sys.argv)
    if not any(not a.startswith("-") for a in argv[1:]):  # no corpus folder given: the kept one
        folder = REPO / "bench" / "results" / "atheris-corpus"  # git-ignored; grows run after run
        if not folder.is_dir():
            folder.mkdir(parents=True)
            seed_corpus(folder)
        argv.append(str(folder))
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
