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

**A job of many ranks** from a folder of real rank logs (e.g. corpus/traces/ranks_same_4):

    python corpus/scale.py corpus/traces/ranks_same_4 --ranks 1000 -o OUT_DIR [--seed 0]
        [--stragglers K] [--diverging K] [--frames N] [--gzip]

Rank r is a copy of source rank log r % n, named `dedicated_log_torch_trace_rank_<r>_<suffix>.log`
(the source's suffix), with the envelopes' `"rank"` set to r, and its times changed (`plan_job`,
seeded, so a seed always gives the same job):

* **jitter**: every time of the rank is moved by an offset (0-2 s, the ranks did not start
  together) and every duration stretched by a factor 0.97-1.03 (each rank is a little faster or
  slower): the glog prefix times and chromium `ts` (t' = t0 + (t - t0) * factor + offset, t0 the
  rank's first time on that clock), chromium `X` durations, and `compilation_metrics`-family
  fields (`*_time_s`, `*_us` durations, `elapsed_time`; `start_time`, `start_time_us` and
  `end_time_us` are times). Changed chromium payloads get a fresh `has_payload` md5;
* **stragglers** (`--stragglers`, default ~1% of the ranks, at least one): a factor of 3
  instead, so their compile time is 3x the others' (what tlscope's straggler rule must find);
* **diverging ranks** (`--diverging`, default ~1%, at least one): the records of the last frame
  (the highest `frame_id` kept) are left out: those ranks never compiled that frame, so their
  compile id sequence differs from the others' (a source folder with its own diverging rank log,
  like ranks_diverge_4, adds its divergence on every n-th rank);
* `--frames N` keeps the records of frames 0..N-1 only (and every record without a frame id):
  smaller ranks for tests.

Which ranks straggle or diverge is printed, and written to OUT_DIR/job_plan.json (not a log:
tlscope and tlparse read only `*rank_N*.log` files). Lines of source logs are kept in memory
(a few MB each); each rank log is written as it is made.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import random
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
    parser.add_argument(
        "input", type=Path, help="a TORCH_TRACE log, plain or gzipped (a folder of rank logs with --ranks)"
    )
    parser.add_argument("--size", type=parse_size, help="minimum output size")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--ranks", type=int, help="make a job of this many ranks from the folder's rank logs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stragglers", type=int, help="ranks 3x slower (default ~1%%, at least 1)")
    parser.add_argument("--diverging", type=int, help="ranks without the last frame (default ~1%%, at least 1)")
    parser.add_argument("--frames", type=int, help="keep frames 0..N-1 only")
    parser.add_argument("--gzip", action="store_true", help="write .log.gz rank logs (tlparse reads only plain)")
    args = parser.parse_args(argv)
    if args.output.resolve() == args.input.resolve():
        parser.error("output must differ from input")
    if args.ranks is not None:
        job = scale_job(
            args.input,
            args.output,
            args.ranks,
            JobOptions(args.seed, args.stragglers, args.diverging, args.frames, args.gzip),
        )
        print(f"{args.output}: {args.ranks} ranks, {job.bytes_written} bytes", end="; ")
        print(f"stragglers {job.stragglers}, diverging {job.diverging}")
        return 0
    if args.size is None:
        parser.error("--size is required (or --ranks for a job)")
    result = scale(args.input, args.output, args.size)
    print(f"{args.output}: {result.bytes_written} bytes, {result.copies} copies, frame id stride {result.frame_stride}")
    return 0


# -- a job of many ranks ---------------------------------------------------------------------

RANK_LOG = re.compile(r"^(dedicated_log_torch_trace_rank_)(\d+)((?:_[^.]*)?)\.log(\.gz)?$")
GLOG_TIME = re.compile(rb"^([VIWEC])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})")
RANK_FIELD = re.compile(rb'"rank":\s*\d+')
FRAME_FIELD = re.compile(rb'"frame_id":\s*(\d+)')
#: Metadata fields that are moments (the rest of the timing fields are durations).
MOMENT_FIELDS_S = {"start_time"}
MOMENT_FIELDS_US = {"start_time_us", "end_time_us"}
STRAGGLER_FACTOR = 3.0


@dataclass
class JobOptions:
    seed: int = 0
    stragglers: int | None = None
    diverging: int | None = None
    frames: int | None = None
    gzip: bool = False


@dataclass
class RankPlan:
    rank: int
    source: int
    factor: float
    offset_us: int
    straggler: bool
    diverging: bool


@dataclass
class JobResult:
    bytes_written: int
    stragglers: list[int]
    diverging: list[int]


def plan_job(ranks: int, sources: int, options: JobOptions) -> list[RankPlan]:
    """Which source log, time factor and offset each rank gets; which ranks straggle or diverge."""
    rng = random.Random(options.seed)
    few = max(1, ranks // 100)
    slow = set(rng.sample(range(ranks), min(ranks, few if options.stragglers is None else options.stragglers)))
    odd = set(rng.sample(range(ranks), min(ranks, few if options.diverging is None else options.diverging)))
    return [
        RankPlan(
            rank=r,
            source=r % sources,
            factor=STRAGGLER_FACTOR if r in slow else round(rng.uniform(0.97, 1.03), 4),
            offset_us=rng.randrange(0, 2_000_000),
            straggler=r in slow,
            diverging=r in odd,
        )
        for r in range(ranks)
    ]


class Clock:
    """One rank's time change on one clock: t' = t0 + (t - t0) * factor + offset (µs)."""

    def __init__(self, plan: RankPlan) -> None:
        self.plan = plan
        self.t0: float | None = None

    def moment(self, t: float) -> float:
        if self.t0 is None:
            self.t0 = t
        return self.t0 + (t - self.t0) * self.plan.factor + self.plan.offset_us

    def duration(self, d: float) -> float:
        return d * self.plan.factor


def _glog_us(m: re.Match[bytes]) -> int:
    moment = datetime.datetime(
        2024, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(6))
    )
    return int(moment.timestamp()) * 1_000_000 + int(m.group(7))


def retime_head(head: bytes, clock: Clock) -> bytes:
    """The glog prefix's time moved by the rank's clock (the year is arbitrary: glog has none)."""
    m = GLOG_TIME.match(head)
    if m is None:
        return head
    us = int(clock.moment(_glog_us(m)))
    t = datetime.datetime.fromtimestamp(us // 1_000_000)
    stamp = (
        f"{m.group(1).decode()}{t.month:02d}{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}.{us % 1_000_000:06d}"
    )
    return stamp.encode() + head[m.end() :]


def retime_metadata(meta: dict[str, Any], clock: Clock) -> None:
    """compilation_metrics-like fields: durations stretched, moments moved."""
    for key, value in meta.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if key in MOMENT_FIELDS_US:
            new = clock.moment(value)
        elif key in MOMENT_FIELDS_S:
            new = clock.moment(value * 1e6) / 1e6
        elif key.endswith(("_time_s", "_us")) or key == "elapsed_time":
            new = clock.duration(value)
        else:
            continue
        meta[key] = round(new) if isinstance(value, int) else new


def retime_chromium(envelope: dict[str, Any], payload: list[bytes], clock: Clock) -> list[bytes]:
    """A chromium_event payload with its ts (and an X's dur) changed, re-signed with a fresh md5."""
    old = join_payload(payload)
    try:
        event = json.loads(old)
    except ValueError:
        return payload
    if not isinstance(event, dict) or not isinstance(event.get("ts"), (int, float)):
        return payload
    event["ts"] = clock.moment(event["ts"])
    if isinstance(event.get("dur"), (int, float)):
        event["dur"] = clock.duration(event["dur"])
    new = json.dumps(event).encode()
    if envelope.get("has_payload") == hashlib.md5(old).hexdigest():
        envelope["has_payload"] = hashlib.md5(new).hexdigest()
    return split_payload(new)


def job_record(record: Record, plan: RankPlan, glog: Clock, chromium: Clock, drop: int | None) -> list[bytes] | None:
    """The lines of `record` in the rank `plan` describes; None leaves it out."""
    frame = FRAME_FIELD.search(record.head)
    if frame is not None and drop is not None and int(frame.group(1)) >= drop:
        return None
    head = retime_head(record.head, glog)
    rank = b'"rank": %d' % plan.rank
    if not any(k in head for k in (b"chromium_event", b"compilation_metrics", b"start_time")):
        return [RANK_FIELD.sub(rank, head, count=1), *record.payload]
    match = ENVELOPE.match(head)
    try:
        envelope = json.loads(match.group(2)) if match else None
    except ValueError:
        envelope = None
    if match is None or not isinstance(envelope, dict):
        return [RANK_FIELD.sub(rank, head, count=1), *record.payload]
    if "rank" in envelope:
        envelope["rank"] = plan.rank
    payload = record.payload
    if "chromium_event" in envelope and payload:
        payload = retime_chromium(envelope, payload, chromium)
    for value in envelope.values():
        if isinstance(value, dict):
            retime_metadata(value, chromium)
    return [match.group(1) + json.dumps(envelope).encode() + (match.group(3) or b"\n"), *payload]


def _sources(src: Path) -> list[tuple[str, list[Record], int]]:
    """(file-name suffix, records, highest frame id) of each rank log of `src`, by rank."""
    found = sorted((int(m.group(2)), m.group(3), p) for p in src.iterdir() if (m := RANK_LOG.match(p.name)))
    if not found:
        raise SystemExit(f"{src} holds no rank logs (dedicated_log_torch_trace_rank_N*.log[.gz])")
    return [(suffix, list(read_records(path)), max_frame_id(path)) for _, suffix, path in found]


def scale_job(src: Path, dst: Path, ranks: int, options: JobOptions) -> JobResult:
    sources = _sources(src)
    plans = plan_job(ranks, len(sources), options)
    dst.mkdir(parents=True, exist_ok=True)
    written = 0
    for plan in plans:
        suffix, records, top = sources[plan.source]
        last = top if options.frames is None else min(top, options.frames - 1)
        drop = last if plan.diverging else (None if options.frames is None else options.frames)
        glog, chromium = Clock(plan), Clock(plan)
        name = f"dedicated_log_torch_trace_rank_{plan.rank}{suffix}.log" + (".gz" if options.gzip else "")
        opener: Any = gzip.open if options.gzip else open
        with opener(dst / name, "wb") as out:
            for record in records:
                lines = job_record(record, plan, glog, chromium, drop)
                for line in lines or ():
                    out.write(line)
                    written += len(line)
    result = JobResult(written, [p.rank for p in plans if p.straggler], [p.rank for p in plans if p.diverging])
    plan_file = {"stragglers": result.stragglers, "diverging": result.diverging, "seed": options.seed, "ranks": ranks}
    (dst / "job_plan.json").write_text(json.dumps(plan_file) + "\n")
    return result


if __name__ == "__main__":
    sys.exit(main())
