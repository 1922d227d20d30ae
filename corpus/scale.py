"""Scale a real TORCH_TRACE log up to any size, with fresh compile ids in every copy.

Why: memory and speed have to be measured on logs of hundreds of MB, and the only real traces
we have are small. Repeating a real trace keeps the event mix realistic; shifting frame ids
keeps every copy's compiles distinct, so a parser cannot get away with folding the copies
together (which would make a 500 MB trace look like a 1 MB one to per-compile-id state).

    python corpus/scale.py IN.log[.gz] --size 500MB -o OUT.log

What it does, per copy k = 0, 1, 2, ... until the output reaches --size (whole copies only,
so every compile in the output is complete):

* every top-level integer ``frame_id`` becomes ``frame_id + k * (max_frame_id + 1)``;
* compile-id strings ("0/0", "!1/0/2", "0/1_1") get the same shift in the two places that carry
  them: an event's ``compile_id`` field (``compilation_metrics``...) and the text of
  ``chromium_event`` payloads (``args.compile_id``);
* a changed payload gets a new ``has_payload`` md5, so the output has no md5 failures that
  the input did not have;
* ``{"str": [s, i]}`` string-table lines are written by copy 0 only: the table is per process
  and the copies reuse the same ids, exactly as one long-running process would;
* lines that are not trace envelopes (junk, stray payload lines) are repeated verbatim.

Timestamps are not shifted: copies overlap in time, which is harmless for parsing benchmarks.
Memory is bounded by the largest single record (one envelope plus its payload), not the input.
Sizes take decimal (KB, MB, GB) or binary (KiB, MiB, GiB) suffixes; a bare number is bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

# The glog prefix TorchLogsFormatter writes; group 1 is everything up to the JSON envelope.
ENVELOPE = re.compile(rb"^(.*?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^:]+:\d+\] )(\{.*?)(\r?\n)?$", re.DOTALL)
# A compile-id string as it appears in JSON text; group 2 is the frame id. An escaped quote
# (inside a nested JSON string) never matches, because the quotes here must be bare.
COMPILE_ID_TEXT = re.compile(rb'("compile_id":\s*"(?:!\d+/)?)(\d+)(/\d+(?:_\d+)?")')
COMPILE_ID_VALUE = re.compile(r"^(!\d+/)?(\d+)(/\d+(?:_\d+)?)$")
FRAME_ID_TEXT = re.compile(rb'"frame_id":\s*(\d+)')

SIZE_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
}


@dataclass
class Record:
    """One envelope line plus the payload lines (each starting with TAB) that follow it."""

    head: bytes
    payload: list[bytes]


@dataclass
class ScaleResult:
    copies: int
    bytes_written: int
    frame_stride: int


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2).upper() if match else ""
    if match is None or unit not in SIZE_UNITS:
        raise argparse.ArgumentTypeError(f"bad size {text!r}: use e.g. 500MB, 64MiB or 1000000")
    return int(float(match.group(1)) * SIZE_UNITS[unit])


def open_trace(path: Path) -> IO[bytes]:
    """Open a plain or gzipped log, judged by its magic bytes rather than its name."""
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return cast("IO[bytes]", gzip.open(path, "rb"))
    return path.open("rb")


def read_records(path: Path) -> Iterator[Record]:
    with open_trace(path) as stream:
        current: Record | None = None
        for raw in stream:
            # A log may end without a newline; the next copy must still start on a new line.
            line = raw if raw.endswith(b"\n") else raw + b"\n"
            if line.startswith(b"\t") and current is not None:
                current.payload.append(line)
                continue
            if current is not None:
                yield current
            current = Record(line, [])
        if current is not None:
            yield current


def max_frame_id(path: Path) -> int:
    """Largest frame id anywhere in the log; overestimating is harmless, so text search is fine."""
    highest = -1
    with open_trace(path) as stream:
        for line in stream:
            for match in FRAME_ID_TEXT.finditer(line):
                highest = max(highest, int(match.group(1)))
            for match in COMPILE_ID_TEXT.finditer(line):
                highest = max(highest, int(match.group(2)))
    return highest


def shift_compile_id_text(text: bytes, offset: int) -> bytes:
    return COMPILE_ID_TEXT.sub(lambda m: m.group(1) + str(int(m.group(2)) + offset).encode() + m.group(3), text)


def shift_compile_id_value(value: str, offset: int) -> str:
    match = COMPILE_ID_VALUE.match(value)
    if match is None:
        return value  # "None" and anything unexpected stays as it is
    return f"{match.group(1) or ''}{int(match.group(2)) + offset}{match.group(3)}"


def join_payload(lines: list[bytes]) -> bytes:
    # Same rule as the writer: strip the TAB of each line, join with "\n", no trailing newline.
    return b"\n".join(line[1:].rstrip(b"\r\n") for line in lines)


def split_payload(payload: bytes) -> list[bytes]:
    return [b"\t" + part + b"\n" for part in payload.split(b"\n")]


def is_string_table(envelope: dict[str, Any]) -> bool:
    return isinstance(envelope.get("str"), list)


def shift_envelope(envelope: dict[str, Any], offset: int) -> None:
    frame_id = envelope.get("frame_id")
    if isinstance(frame_id, int) and not isinstance(frame_id, bool):
        envelope["frame_id"] = frame_id + offset
    for value in envelope.values():
        if isinstance(value, dict) and isinstance(value.get("compile_id"), str):
            value["compile_id"] = shift_compile_id_value(value["compile_id"], offset)


def shift_payload(envelope: dict[str, Any], payload: list[bytes], offset: int) -> list[bytes]:
    """Shift compile ids inside a chromium_event payload and re-sign it with a fresh md5."""
    if "chromium_event" not in envelope or not payload:
        return payload
    old = join_payload(payload)
    new = shift_compile_id_text(old, offset)
    if new == old:
        return payload
    # Only re-sign payloads whose md5 was valid: a broken input md5 stays broken, not hidden.
    if envelope.get("has_payload") == hashlib.md5(old).hexdigest():
        envelope["has_payload"] = hashlib.md5(new).hexdigest()
    return split_payload(new)


def needs_work(head: bytes) -> bool:
    """Cheap byte test: could this envelope change between copies at all?"""
    return any(key in head for key in (b"frame_id", b"compile_id", b'"str"', b"chromium_event"))


def transform(record: Record, copy: int, offset: int) -> list[bytes] | None:
    """The lines to write for this record in copy `copy`; None drops it."""
    verbatim = [record.head, *record.payload]
    if copy == 0 or not needs_work(record.head):
        return verbatim  # copy 0 is the input itself
    match = ENVELOPE.match(record.head)
    if match is None:
        return verbatim  # junk or a stray payload line: repeat it as is
    try:
        envelope = json.loads(match.group(2))
    except ValueError:
        return verbatim
    if not isinstance(envelope, dict):
        return verbatim
    if is_string_table(envelope):
        return None
    shift_envelope(envelope, offset)
    payload = shift_payload(envelope, record.payload, offset)
    head = match.group(1) + json.dumps(envelope).encode() + (match.group(3) or b"\n")
    return [head, *payload]


def scale(src: Path, dst: Path, size: int) -> ScaleResult:
    stride = max_frame_id(src) + 1
    written = 0
    copies = 0
    with dst.open("wb", buffering=1 << 20) as out:
        while copies == 0 or written < size:
            before = written
            for record in read_records(src):
                lines = transform(record, copies, copies * stride)
                if lines is None:
                    continue
                for line in lines:
                    out.write(line)
                    written += len(line)
            copies += 1
            if written == before:
                break  # an empty input can never reach the size
    return ScaleResult(copies=copies, bytes_written=written, frame_stride=stride)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("input", type=Path, help="a TORCH_TRACE log, plain or gzipped")
    parser.add_argument("--size", type=parse_size, required=True, help="minimum output size")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.output.resolve() == args.input.resolve():
        parser.error("output must differ from input")
    result = scale(args.input, args.output, args.size)
    print(f"{args.output}: {result.bytes_written} bytes, {result.copies} copies, frame id stride {result.frame_stride}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
