"""The tlscope output format: raw.jsonl, payloads/, graphs/, provenance.json, chromium_events.json, timeline.bin.

`FormatFacts` is what the format knows of a log without writing it: manifest.json's figures,
the problems met on the way (a chromium event that is not JSON, an envelope key conflict) and
each record's raw.jsonl line number, which its `feed` returns (the answers point at it).
`tlscope summary` runs only that. `FormatWriter` is the same fold writing the files as it goes:
`feed` takes Records in log order; `finish` writes what needs the whole pass (the string table
line of raw.jsonl, timestamps that need the fitted clock). pipeline/single.py writes
manifest.json last (it lists every file written). Nothing here holds more than one record's
payload in memory.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import IO, Any

import msgspec

from tlscope.format import layout
from tlscope.format.json_boundary import JsonError, chromium_of, decode
from tlscope.format.manifest import (
    CompileIdEntry,
    KeyStats,
    PayloadStats,
    ProblemEntry,
    ProblemSummary,
)
from tlscope.format.raw import RAW_ADDED_FIELDS
from tlscope.model.clock import ClockFit
from tlscope.model.compile_id import CompileId, compile_id_order
from tlscope.model.events import Artifact, CompilationMetrics
from tlscope.model.payloads import TorchVersionPayload
from tlscope.model.problems import ProblemKind, Problems
from tlscope.model.record import GlogPrefix, Record
from tlscope.read.reader import LogReader
from tlscope.write.graph_store import GraphStore, GraphTally, part_path
from tlscope.write.outdir import OutputDir
from tlscope.write.provenance_store import ProvenanceStore
from tlscope.write.timeline_writer import TimelineWriter

_ENCODER = msgspec.json.Encoder(order="sorted")
#: The fields raw.jsonl adds to an envelope (a log's envelope holding one is left out).
_ADDED = frozenset(RAW_ADDED_FIELDS)


_RAW_PART = "raw.jsonl.part"
_RAW_BODY = "raw.jsonl.body"
#: Bytes copied by the kernel at a time (`_append_file`).
_COPY_CHUNK = 1 << 30
#: chromium_events.json's bytes kept before they are written (`ChromiumWriter`), and raw.jsonl's
#: lines' (`FormatWriter._raw_line`).
_CHROMIUM_FLUSH = _RAW_FLUSH = 1 << 16


class PayloadTally:
    """manifest.json's payload figures (distinct payloads, their bytes, occurrences), nothing written."""

    def __init__(self) -> None:
        self._written: set[str] = set()
        self.bytes = 0
        self.occurrences = 0

    def holds(self, md5: str) -> bool:
        """Whether payload `md5` was already put."""
        return md5 in self._written

    def put(self, md5: str, data: bytes) -> str:
        """Count payload `md5`; its file name in the format (payloads/<md5>.txt)."""
        self.occurrences += 1
        if md5 not in self._written:
            self._write(md5, data)
            self._written.add(md5)
            self.bytes += len(data)
        return f"payloads/{md5}.txt"

    def _write(self, md5: str, data: bytes) -> None:
        """A payload seen for the first time: nothing to write for a tally."""

    @property
    def files(self) -> int:
        return len(self._written)

    @property
    def shared(self) -> Path | None:
        return None


#: The job payload files this process wrote or found, by path: a rank worker parses many ranks of
#: one job, which log mostly the same payloads, so it asks the file system once per payload, not
#: once per rank. Only ever added to once the file exists, and a job's payload files are never
#: removed while it runs; the path names the job's output folder (a fresh temporary name per run).
_IN_JOB: set[str] = set()
#: Paths kept at most (~150 bytes each); past it the set starts again.
_IN_JOB_MAX = 1 << 16


def _in_job(path: str) -> None:
    if len(_IN_JOB) >= _IN_JOB_MAX:
        _IN_JOB.clear()
    _IN_JOB.add(path)


class PayloadStore(PayloadTally):
    """payloads/<md5>.txt, content-addressed by the MD5 tlscope computed: each written once.

    A rank of a job writes into the job's payloads/ (`shared`), where the other ranks' workers
    write too, at the same time: a payload already there is not written again (its name says
    its content), and one that is not is written under a name of this process's, then renamed
    into place (linked, so the first one stays), so a reader never sees half a file.
    """

    def __init__(self, out: OutputDir, shared: Path | None = None) -> None:
        super().__init__()
        self._out = out
        self._shared = shared
        #: The job's payloads/ as text: its files' names are made as text, a Path only for one
        #: this process does not know yet (the job's payloads were mostly written by other ranks).
        self._shared_text = f"{shared}/payloads/" if shared is not None else ""
        if shared is not None:
            (shared / "payloads").mkdir(exist_ok=True)  # the first rank's worker to start makes it

    def path(self, md5: str) -> Path:
        """Where payload `md5` is (or will be) on disk."""
        if self._shared is None:
            return self._out.path(f"payloads/{md5}.txt")
        return self._shared / "payloads" / f"{md5}.txt"

    def path_text(self, md5: str) -> str:
        """`str(self.path(md5))`, without a Path when its folder is known (one per payload written)."""
        if self._shared is None:
            return self._out.path_text(f"payloads/{md5}.txt")
        return f"{self._shared_text}{md5}.txt"

    def _write(self, md5: str, data: bytes) -> None:
        if self._shared is None:
            with open(self.path_text(md5), "wb") as f:
                f.write(data)
            return
        known = self.path_text(md5)
        if known in _IN_JOB:
            _in_job(known)
            return
        path = Path(known)
        if path.exists():
            _in_job(known)
            return
        part = part_path(path, md5)
        part.write_bytes(data)
        try:
            # A link, not a rename: the first rank's file stays (other ranks' report files are
            # hard links to it); a rename by a racing rank would replace it with another inode.
            os.link(part, path)
        except FileExistsError:
            pass
        except OSError:  # no hard links on this file system: the rename is still atomic
            os.replace(part, path)
            _in_job(known)
            return
        os.unlink(part)
        _in_job(known)

    @property
    def shared(self) -> Path | None:
        return self._shared


class ChromiumWriter:
    """chromium_events.json: a JSON array Perfetto loads as is, one event per line; and beside it
    chromium_log_lines.json, the input log line of each (Perfetto's events stay untouched)."""

    def __init__(self, out: OutputDir) -> None:
        self._file: IO[bytes] = out.path("chromium_events.json").open("wb")
        self._lines: IO[bytes] = out.path("chromium_log_lines.json").open("wb")
        #: Both files' bytes not yet written: an event is encoded straight into them (no bytes
        #: object of its own, no write call each), written every _CHROMIUM_FLUSH bytes.
        self._events = bytearray(b"[")
        self._numbers = bytearray(b"[")
        self.count = 0

    def add(self, event: Any, log_line: int) -> None:
        events = self._events
        if self.count:
            events += b",\n"
            self._numbers += b",%d" % log_line
        else:
            events += b"\n"
            self._numbers += b"%d" % log_line
        _ENCODER.encode_into(event, events, -1)
        self.count += 1
        if len(events) >= _CHROMIUM_FLUSH:
            self._flush()

    def _flush(self) -> None:
        self._file.write(self._events)
        self._events.clear()
        self._lines.write(self._numbers)
        self._numbers.clear()

    def close(self) -> None:
        self._events += b"\n]\n" if self.count else b"]\n"
        self._numbers += b"]\n"
        self._flush()
        self._file.close()
        self._lines.close()


class _CompileIdStats:
    """A compile id's event count and first/last times, as `_moment` numbers.

    Kept for every compile id until the manifest is written: a kept GlogPrefix (with its own
    pathname text) cost ~300 bytes, a moment ~32.
    """

    __slots__ = ("cid", "events", "first", "last")

    def __init__(self, cid: CompileId, moment: int) -> None:
        self.cid, self.first, self.last, self.events = cid, moment, moment, 0


class FormatFacts:
    """The format's fold without its files: manifest.json's figures, the problems, raw.jsonl's lines.

    `feed` returns the raw.jsonl line a record gets (None: it gets none: str, chromium_event,
    key_conflict), counting as the writer writes, so the answers' line numbers are the file's.
    """

    def __init__(
        self, problems: Problems, payloads: PayloadTally | None = None, graphs: GraphTally | None = None
    ) -> None:
        self.problems = problems
        self.clock = ClockFit()
        self.payloads = payloads or PayloadTally()
        #: None: graphs are not read (`tlscope summary`: graphs/ is none of its answers, and the
        #: graph parse was most of its pass).
        self.graphs = graphs
        self.raw_events = 0
        self.chromium_events = 0
        self.events: dict[str, KeyStats] = {}
        self.artifacts: dict[str, KeyStats] = {}
        self.compile_ids: dict[CompileId, _CompileIdStats] = {}
        self.unknown_compile_id_events = 0
        self.torch_version: str | None = None
        self.ranks: set[int] = set()
        self.processes: set[int] = set()
        self.last_month: int | None = None

    # -- per record ----------------------------------------------------------------------------

    def feed(self, record: Record) -> int | None:
        """Fold `record` (and write it, for the writer); the raw.jsonl line it got, if any."""
        if record.key == "str":
            self._count(record, 0)
            return None
        moment = _moment(record.prefix)  # its compile id's times and its raw.jsonl line's
        self._count(record, moment)
        if record.key == "chromium_event":
            self._chromium(record)
            return None
        payload_filename = None
        if record.payload is not None and record.payload_md5 is not None:
            fresh = not self.payloads.holds(record.payload_md5)
            # Kept even when the line is left out below: its payload file stays in the format.
            payload_filename = self.payloads.put(record.payload_md5, record.payload)
            if fresh and self.graphs is not None:  # a payload seen again is not read again
                self.graphs.add(record.payload_md5, record.payload, record.line)
            self._payload_put(record)
        if not _ADDED.isdisjoint(record.envelope):  # one C call in the common case, no list
            conflicts = [k for k in RAW_ADDED_FIELDS if k in record.envelope]
            self.problems.add(
                ProblemKind.KEY_CONFLICT,
                record.line,
                f"envelope already has {conflicts}; left out of raw.jsonl",
            )
            return None
        self._raw_line(record, payload_filename, moment)
        self.raw_events += 1
        return self.raw_events + 1  # line 1 is the string table

    def _count(self, record: Record, moment: int) -> None:
        """Count `record` in manifest.json's figures; `moment` is its prefix's (`_moment`; 0 for a str)."""
        payload = record.payload
        size = len(payload) if payload is not None else 0
        _bump(self.events, record.key, size)
        event = record.event
        if type(event) is Artifact and event.name is not None:  # Artifact has no subclass
            _bump(self.artifacts, event.name, size)
            if event.name == "torch_version" and self.torch_version is None:
                self.torch_version = _torch_version(payload)
        elif self.torch_version is None and isinstance(event, CompilationMetrics):
            self.torch_version = event.pytorch_version
        if record.rank is not None:
            self.ranks.add(record.rank)
        prefix = record.prefix
        self.processes.add(prefix.process)
        self.last_month = prefix.month
        if record.key == "str":
            return
        if record.compile_id is None:
            self.unknown_compile_id_events += 1
            return
        # Runtime events carry no attempt; like tlparse's folders (and the report), they belong to
        # attempt 0. Unnormalised, `[0/1]` would be listed twice, as -_0_1_- and -_0_1_0.
        cid = record.compile_id.normalised()
        stats = self.compile_ids.get(cid)
        if stats is None:
            stats = self.compile_ids[cid] = _CompileIdStats(cid, moment)
        stats.events += 1
        if moment < stats.first:  # first <= last: at most one of the two moves
            stats.first = moment
        elif moment > stats.last:
            stats.last = moment

    def _chromium(self, record: Record) -> None:
        # Decoded once, by the reader (`chromium_of`, inline); the compile fold reads it too.
        decoded = record.chromium if record.chromium is not None else chromium_of(record)
        if decoded.error is not None:
            self.problems.add(ProblemKind.BAD_PAYLOAD_JSON, record.line, f"chromium_event payload: {decoded.error}")
            return
        event = decoded.value
        self._chromium_event(event, record)
        self.chromium_events += 1
        if not self.clock.fitted and isinstance(event, dict):  # fitted once, by the first good one
            ts = event.get("ts")
            if isinstance(ts, (int, float)) and not isinstance(ts, bool):
                self.clock.observe(record.prefix, ts / 1e6)

    def _chromium_event(self, event: Any, record: Record) -> None:
        """A chromium event decoded: nothing to write for the facts alone."""

    def _raw_line(self, record: Record, payload_filename: str | None, moment: int) -> None:
        """A record's raw.jsonl line (`moment`: its prefix's time): nothing to write for the facts alone."""

    def _payload_put(self, record: Record) -> None:
        """A record's payload was put (and written, for the writer): nothing more for the facts."""

    # -- end of pass ---------------------------------------------------------------------------

    def finish(self, reader: LogReader) -> None:
        """The pass is over: fit the clock's year (a glog prefix has none) from the log's date."""
        self.clock.fallback_year(reader.path.stat().st_mtime, self.last_month)

    def compile_id_entries(self) -> list[CompileIdEntry]:
        return [
            CompileIdEntry(
                id=s.cid.display,
                dir=s.cid.dirname,
                first=self.clock.iso(_moment_prefix(s.first)),
                last=self.clock.iso(_moment_prefix(s.last)),
                events=s.events,
            )
            for s in sorted(self.compile_ids.values(), key=lambda s: compile_id_order(s.cid))
        ]

    def payload_stats(self) -> PayloadStats:
        return PayloadStats(
            files=self.payloads.files,
            bytes=self.payloads.bytes,
            occurrences=self.payloads.occurrences,
            root="." if self.payloads.shared is None else "..",
        )


class FormatWriter(FormatFacts):
    """FormatFacts writing the format's files as it goes (the module docstring)."""

    def __init__(
        self,
        out: OutputDir,
        problems: Problems,
        job_folder: Path | None = None,
        *,
        inline_graphs: bool = False,
        held_raw: bool = False,
    ) -> None:
        payloads = PayloadStore(out, job_folder)
        self._graphs = GraphStore(out, problems, job_folder, payloads.path_text, inline=inline_graphs)
        super().__init__(problems, payloads, self._graphs)
        self.out = out
        self.chromium = ChromiumWriter(out)
        self.timeline = TimelineWriter(out.path(layout.TIMELINE))
        #: raw.jsonl's lines before the clock is fitted, each behind its prefix time (`_moment`):
        #: their timestamps are written at the end. Once it is fitted (a log's first chromium
        #: event, usually near its start), lines go to `_body` as they will be in raw.jsonl.
        #: `held_raw` (a small log's: every rank of a job) keeps both in memory instead: two files
        #: created, written, read back and removed cost a rank ~1 ms of CPU on ext4 here, and
        #: the lines of a log of a few MB are a few hundred KB.
        self._held = held_raw
        self._raw: IO[bytes] = io.BytesIO() if held_raw else out.path(_RAW_PART).open("wb")
        self._body: IO[bytes] = io.BytesIO() if held_raw else out.path(_RAW_BODY).open("wb")
        self._stamps: _Stamps | None = None
        #: `_body`'s lines not yet written.
        self._lines = bytearray()
        self.provenance = ProvenanceStore(payloads.path)

    def _payload_put(self, record: Record) -> None:
        self.provenance.feed(record)  # after its payload was written: read back at the end

    def _chromium_event(self, event: Any, record: Record) -> None:
        self.chromium.add(event, record.line)
        self.timeline.add(event, record.rank)

    def _raw_line(self, record: Record, payload_filename: str | None, moment: int) -> None:
        line = dict(record.envelope)
        p = record.prefix
        line["process"] = p.process
        line["pathname"] = p.pathname
        line["lineno"] = p.lineno
        line["log_line"] = record.line
        if payload_filename is not None and record.payload is not None:
            line["payload_filename"] = payload_filename
            line["payload_size"] = len(record.payload)
        if self._stamps is None and self.clock.fitted:  # fitted once, for good: every later
            self._stamps = _Stamps(self.clock)  # line's timestamp is known now
        if self._stamps is not None:
            # Into `_lines` (written every _RAW_FLUSH bytes): the timestamp, then the line's
            # object encoded in place, its `{` made the comma after the timestamp.
            pending = self._lines
            pending += b'{"timestamp":'
            pending += self._stamps.json(moment)
            at = len(pending)
            _ENCODER.encode_into(line, pending, at)
            pending[at] = 0x2C  # ","
            pending += b"\n"
            if len(pending) >= _RAW_FLUSH:
                self._body.write(pending)
                pending.clear()
        else:  # the timestamp needs the fitted clock, maybe known only at the end: keep the time
            self._raw.write(b"%016d\t" % moment + _ENCODER.encode(line) + b"\n")

    def finish(self, reader: LogReader) -> None:
        """Close the streams; write raw.jsonl with its string table first and real timestamps."""
        self.chromium.close()
        self.timeline.close()
        self._body.write(self._lines)
        self._lines.clear()
        if not self._held:
            self._raw.close()
            self._body.close()
        super().finish(reader)
        # One string-table line, tlparse's shape: the table of the log's first process.
        string_table = next(iter(reader.string_tables.values()), {})
        part, body = self.out.path(_RAW_PART), self.out.path(_RAW_BODY)
        with self.out.path("raw.jsonl").open("wb") as raw:
            raw.write(_ENCODER.encode({"string_table": _table_list(string_table)}) + b"\n")
            with self._before_fit(part) as events:  # the lines from before the clock was fitted
                stamps = _Stamps(self.clock)
                for line in events:
                    moment, _, text = line.partition(b"\t")
                    raw.write(b'{"timestamp":' + stamps.json(int(moment)) + b"," + text[1:])
            if isinstance(self._body, io.BytesIO):
                raw.write(self._body.getbuffer())
                self._body.close()
            else:
                raw.flush()
                _append_file(raw, body)
        if not self._held:
            os.unlink(part)
            os.unlink(body)
        self.provenance.write(self.out)
        self._graphs.finish()  # last: the graphs worker ran beside the whole pass

    def _before_fit(self, part: Path) -> IO[bytes]:
        """The lines written before the clock was fitted, from the first (`_raw`'s)."""
        if self._held:
            self._raw.seek(0)
            return self._raw
        return part.open("rb")

    def abort(self) -> None:
        """The run failed or was interrupted: stop the graphs worker now."""
        self._graphs.abort()


class _Stamps:
    """raw.jsonl's `timestamp` of each `_moment` as JSON, the text `clock.iso` gives: what
    surrounds the microseconds is made once per second of the log, not once per line."""

    def __init__(self, clock: ClockFit) -> None:
        self._clock = clock
        self._second = -1
        self._head = self._tail = b""

    def json(self, moment: int) -> bytes:
        second, microsecond = divmod(moment, 1_000_000)
        if second != self._second:
            text = _ENCODER.encode(self._clock.iso(_moment_prefix(moment)))
            dot = text.index(b".") + 1  # the date and time hold none; six digits follow it
            self._second, self._head, self._tail = second, text[:dot], text[dot + 6 :]
        return self._head + b"%06d" % microsecond + self._tail


def problem_summary(problems: Problems) -> ProblemSummary:
    return ProblemSummary(
        total=problems.total,
        counts={kind.value: n for kind, n in sorted(problems.counts.items(), key=lambda kv: kv[0].value)},
        first=[
            ProblemEntry(kind=p.kind.value, line=p.line, message=p.message, file=p.file)
            for p in sorted(problems.first, key=lambda p: (p.file or "", p.line))
        ],
    )


def _bump(table: dict[str, KeyStats], key: str, size: int) -> None:
    stats = table.get(key)
    if stats is None:
        stats = table[key] = KeyStats()
    stats.count += 1
    stats.payload_bytes += size


def _append_file(target: IO[bytes], source: Path) -> None:
    """`source`'s bytes appended to `target` (flushed) by the kernel, not through Python's
    buffers: raw.jsonl's body is most of its bytes (a third of the log's)."""
    with source.open("rb") as src:
        size = os.fstat(src.fileno()).st_size
        copied = 0
        try:
            while copied < size:
                n = os.copy_file_range(src.fileno(), target.fileno(), min(_COPY_CHUNK, size - copied))
                if n == 0:
                    break
                copied += n
        except OSError:  # a file system (or kernel) without copy_file_range: the rest by hand
            pass
        if copied < size:
            src.seek(copied)
            target.seek(0, os.SEEK_END)
            shutil.copyfileobj(src, target, 1 << 20)


def _table_list(table: dict[int, str]) -> list[str | None]:
    """tlparse's string_table array: indexed by intern id, null for gaps, `[null]` when empty."""
    size = max(table, default=0) + 1
    return [table.get(i) for i in range(size)]


def _moment(p: GlogPrefix) -> int:
    """The prefix time as one number, MMDDhhmmssuuuuuu read as decimal: ordered like `sort_key`.

    The reader takes exactly two digits per field and six for microseconds, so no field can
    carry into the next.
    """
    return ((((p.month * 100 + p.day) * 100 + p.hour) * 100 + p.minute) * 100 + p.second) * 1_000_000 + p.microsecond


def _moment_prefix(moment: int) -> GlogPrefix:
    """A prefix holding a `_moment`'s time (all the clock reads); the other fields are blank."""
    rest, microsecond = divmod(moment, 1_000_000)
    rest, second = divmod(rest, 100)
    rest, minute = divmod(rest, 100)
    month_day, hour = divmod(rest, 100)
    month, day = divmod(month_day, 100)
    return GlogPrefix(
        level="",
        month=month,
        day=day,
        hour=hour,
        minute=minute,
        second=second,
        microsecond=microsecond,
        process=0,
        pathname="",
        lineno=0,
    )


#: A torch_version payload: the version string, or an object holding it (typed, through the boundary).
_TORCH_VERSION = msgspec.json.Decoder(TorchVersionPayload)


def _torch_version(payload: bytes | None) -> str | None:
    try:
        value = decode(payload or b"", _TORCH_VERSION)
    except JsonError:
        return None
    return value if isinstance(value, str) else value.pytorch_version
