"""The streaming reader: log lines to typed Records, one pass, bounded memory.

Line grammar (see docs/FORMAT.md, "Input"):

    <L><MMDD> <HH:MM:SS>.<uuuuuu> <pid> <path>:<lineno>] <JSON envelope>
    \t<payload line>...

Memory is bounded by the largest single record (its payload), never by the log: lines are read
one at a time and a record's payload lines are joined only for that record.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from tlscope.format.json_boundary import JsonError, chromium_payload, decode
from tlscope.format.raw import CONTEXT_KEYS
from tlscope.model.compile_id import BadCompileId, compile_id_from_envelope
from tlscope.model.events import EVENT_TYPES, ChromiumEvent, Event, StringEntry
from tlscope.model.problems import ProblemKind, Problems
from tlscope.model.record import GlogPrefix, Record
from tlscope.read.glog import PREFIX
from tlscope.read.log_ranks import valid_rank
from tlscope.read.names import rank_in_name
from tlscope.read.source import LogSource

#: Real string tables hold thousands of entries; an index beyond this is rejected.
MAX_STRING_INDEX = 1_000_000
#: Lines longer than this are skipped in a streaming way and counted (LINE_TOO_LONG).
DEFAULT_MAX_LINE = 512 * 1024 * 1024
#: Stand in for the body of an over-long line; compared by identity, never by value. The first
#: byte tells an over-long payload line (tab) from an over-long envelope, so each keeps its role.
_TOO_LONG = b"\x00<line too long>\x00"
_TOO_LONG_PAYLOAD = b"\t\x00<payload line too long>\x00"
#: Bytes read from the stream at a time.
_CHUNK = 1 << 20
#: Each known event key as one string object: a record's key is kept by what it feeds (payload
#: references, metrics records), and the decoder makes a new string per line for long keys.
_KNOWN_KEYS = {key: key for key in EVENT_TYPES}
#: Where a run of payload lines ends: a newline followed by anything but a tab.
_BLOCK_END = re.compile(rb"\n[^\t]")
_CHROMIUM = ChromiumEvent.KEY
#: First bytes of a line that may continue a payload (tab), be blank (newline, CR) or not be
#: there yet (the buffer's end): `_Lines.envelope_next` leaves those to `next`.
_NOT_ENVELOPE = frozenset({b"\t", b"\n", b"\r", b""})


class _Lines:
    """Physical lines with a one-line push-back and 1-based numbering, over our own buffer.

    The buffer is ours (not BufferedReader's) so that `tab_block` can search it in place:
    `peek` copied up to a megabyte per payload, the reader's largest single cost.
    """

    def __init__(self, stream: BinaryIO, max_line: int) -> None:
        self._stream = stream
        self._max = max_line
        self._buf = b""
        self._pos = 0
        self._eof = False
        self._pushed: tuple[int, bytes, bool] | None = None
        self.number = 0
        #: Bytes of the stream taken by the lines returned so far, newlines included (log_size
        #: attributes every byte of the input to the record, or the bad line, that took it).
        self.offset = 0
        #: The offset before the last line `next` returned, and that line's raw length: what
        #: `push_back` gives back and a re-read takes again.
        self._last = (0, 0)

    def next(self) -> tuple[int, bytes, bool] | None:
        """(line number, line without its newline, ended-with-newline); None at end of file.

        A line of max_line bytes or more comes back as _TOO_LONG or _TOO_LONG_PAYLOAD, drained.
        """
        if self._pushed is not None:
            item, self._pushed = self._pushed, None
            self.offset += self._last[1]
            return item
        newline = self._find_newline()
        if newline == -1 and self._pos >= len(self._buf):
            return None
        self.number += 1
        stop = newline if newline != -1 else len(self._buf)
        if stop - self._pos >= self._max:
            first = self._buf[self._pos : self._pos + 1]
            start = self.offset
            self.offset += self._skip_line(newline)
            self._last = (start, self.offset - start)
            return self.number, (_TOO_LONG_PAYLOAD if first == b"\t" else _TOO_LONG), False
        body = self._buf[self._pos : stop]
        end = stop + 1 if newline != -1 else stop
        self._last = (self.offset, end - self._pos)
        self.offset += end - self._pos
        self._pos = end
        if body.endswith(b"\r"):
            body = body[:-1]
        return self.number, body, newline != -1

    def tab_block(self) -> bytes | None:
        """The run of payload lines that sits complete in the buffer, as payload text: each line's
        tab removed, the newlines between them kept, the last one dropped.

        Payloads are most of a log's bytes and lines (an FX graph or a kernel is thousands of
        lines); one search over the buffer replaces a line split and a Python loop turn per line.
        None when the next line is not a plain payload line; `next` then handles it.
        """
        if self._pushed is not None:
            return None
        buf, pos = self._buf, self._pos
        if buf[pos : pos + 1] != b"\t" or len(buf) - pos > self._max:  # a tiny max_line: exact path
            return None
        match = _BLOCK_END.search(buf, pos)
        end = match.start() + 1 if match is not None else buf.rfind(b"\n", pos) + 1
        carriage = buf.find(b"\r", pos, end) if end > pos else -1
        if carriage != -1:  # stop before the line with a CR, which the exact path reads (and strips)
            end = buf.rfind(b"\n", pos, carriage) + 1
        if end <= pos:  # not one whole plain line in the buffer
            return None
        self._pos = end
        self.offset += end - pos
        # One copy of the lines without the first tab and the last newline; every newline in it
        # is followed by a tab (the search stopped at the first that is not), so the tabs the
        # replace removed are the newlines in it, and the block's lines are one more.
        inner = buf[pos + 1 : end - 1]
        text = inner.replace(b"\n\t", b"\n")
        self.number += len(inner) - len(text) + 1
        return text

    def envelope_next(self) -> bool:
        """Whether the next line, already in the buffer, can be no payload line and no blank one
        (its first byte is none of tab, newline, CR): the payload before it ends here, without
        the line being taken and given back (what `next` and `push_back` would do)."""
        return self._pushed is None and self._buf[self._pos : self._pos + 1] not in _NOT_ENVELOPE

    @property
    def taken(self) -> int:
        """Lines taken so far: `number` less a line given back."""
        return self.number - (self._pushed is not None)

    def push_back(self, item: tuple[int, bytes, bool]) -> None:
        """Give back the line `next` just returned (its bytes count again when it is re-read)."""
        self._pushed = item
        self.offset = self._last[0]

    def _find_newline(self) -> int:
        """Index of the next newline in the buffer, reading on until there is one, or the line is
        already max_line long, or the file ends (-1)."""
        newline = self._buf.find(b"\n", self._pos)
        if newline != -1 or self._eof:
            return newline
        # Collect chunks and join once: appending to one growing buffer would copy a long line
        # over and over.
        parts = [self._buf[self._pos :]]
        size = len(parts[0])
        while size < self._max:
            chunk = self._stream.read(_CHUNK)
            if not chunk:
                self._eof = True
                break
            parts.append(chunk)
            size += len(chunk)
            if b"\n" in chunk:
                break
        self._buf, self._pos = b"".join(parts), 0
        return self._buf.find(b"\n")

    def _skip_line(self, newline: int) -> int:
        """Discard the rest of an over-long line, reading on to its newline without keeping it.

        Returns the line's length in bytes, its newline included."""
        skipped = 0
        while newline == -1 and not self._eof:
            skipped += len(self._buf) - self._pos
            chunk = self._stream.read(_CHUNK)
            if not chunk:
                self._eof = True
                break
            self._buf, self._pos = chunk, 0
            newline = chunk.find(b"\n")
        if newline == -1:
            skipped += len(self._buf) - self._pos
            self._buf, self._pos = b"", 0
        else:
            skipped += newline + 1 - self._pos
            self._pos = newline + 1
        return skipped


class LogReader:
    """Iterate a log's Records; `problems`, `string_tables` and `rank` fill in as it goes.

    A LogReader is single-use: iterate it once (it opens the file when iteration starts).
    """

    def __init__(
        self,
        path: Path,
        *,
        problems: Problems | None = None,
        max_line: int = DEFAULT_MAX_LINE,
    ) -> None:
        self.path = path
        self.problems = problems if problems is not None else Problems()
        self.max_line = max_line
        #: The log's own rank: the first rank its lines carry (as tlparse decides it).
        self.rank: int | None = None
        #: The rank PyTorch put in the file name, if any. Copied logs can disagree with their
        #: content; the content wins for reading, the name is what multi-rank discovery uses.
        self.name_rank: int | None = rank_in_name(path)
        #: Per process id: index -> string. PyTorch interns per process, so keys are pids.
        self.string_tables: dict[int, dict[int, str]] = {}
        #: Rank of each process id, learned from lines that carry a rank.
        self.process_ranks: dict[int, int] = {}
        self.unknown_keys: dict[str, int] = {}
        self.lines_read = 0
        #: Bytes of the (uncompressed) log read so far; at the end, its whole size.
        self.bytes_total = 0
        #: Records yielded so far (lines that were events, with their payloads).
        self.records_read = 0
        self.source: LogSource | None = None
        self.sha256: str | None = None
        #: The glog time digits (month to second, as PREFIX's groups) of the last line whose time
        #: was checked possible (`_possible_time`).
        self._time_checked: tuple[Any, ...] = ()

    @property
    def bytes_read(self) -> int:
        return self.source.bytes_read if self.source is not None else 0

    def __iter__(self) -> Iterator[Record]:
        with LogSource(self.path) as source:
            self.source = source
            lines = _Lines(source.stream, self.max_line)
            for record in self._records(lines):
                self.records_read += 1
                yield record
            self.lines_read = lines.number
            self.bytes_total = lines.offset
            if source.corrupt is not None:
                where = max(lines.number, 1)  # the line where reading stopped (1 for an empty stream)
                self._problem(ProblemKind.CORRUPT_INPUT, where, f"compressed input ends early: {source.corrupt}")
            self.sha256 = source.sha256()

    # -- the loop ---------------------------------------------------------------------------

    def _problem(self, kind: ProblemKind, line: int, message: str) -> None:
        self.problems.add(kind, line, message, str(self.path))

    def _records(self, lines: _Lines) -> Iterator[Record]:
        while True:
            start = lines.offset
            item = lines.next()
            if item is None:
                break
            number, body, ended = item
            if body is _TOO_LONG or body is _TOO_LONG_PAYLOAD:
                self._problem(ProblemKind.LINE_TOO_LONG, number, f"line longer than {self.max_line} bytes")
                if body is _TOO_LONG:
                    _skip_payload(lines)  # the payload of an envelope we could not read goes with it
                continue
            if not body:
                self._problem(ProblemKind.BLANK_LINE, number, "empty line")
                continue
            if body[:1] == b"\t":
                self._problem(ProblemKind.ORPHAN_PAYLOAD, number, "payload line with no envelope before it")
                continue
            record = self._record(number, body, ended, lines)
            if record is not None:
                record.size = lines.offset - start
                record.lines = lines.taken - number + 1
                yield record

    def _record(self, number: int, body: bytes, ended: bool, lines: _Lines) -> Record | None:
        match = PREFIX.search(body)
        if match is None:
            self._bad_line(ProblemKind.GLOG_PREFIX, number, body, ended, "no glog prefix")
            return None
        groups = match.groups()
        prefix = _prefix_of(groups)
        # The time's digits as the last line's (most lines: a log's lines share their second) were
        # checked then; else glog never writes month 13 or 25:61, which cannot become an ISO-8601
        # timestamp.
        if groups[1:6] != self._time_checked:
            if not _possible_time(prefix):
                self._bad_line(ProblemKind.GLOG_PREFIX, number, body, ended, "impossible date or time in glog prefix")
                _skip_payload(lines)
                return None
            self._time_checked = groups[1:6]
        envelope = self._envelope(number, body[match.end() :], ended)
        if envelope is None:
            _skip_payload(lines)  # its payload lines belong to the bad line: one problem, not many
            return None
        if not _path(groups[8])[1]:  # the path's text and validity, looked up once by `_prefix_of`
            self._problem(ProblemKind.INVALID_UTF8, number, "glog prefix path is not valid UTF-8")
        payload = self._payload(number, envelope, lines)
        payload_md5 = None if payload is None else hashlib.md5(payload).hexdigest()
        if payload_md5 is not None and payload_md5 != envelope.get("has_payload"):
            self._problem(
                ProblemKind.PAYLOAD_MD5,
                number,
                f"payload MD5 is {payload_md5}, has_payload says {envelope.get('has_payload')!r}",
            )
        key = self._event_key(number, envelope)
        rank, foreign = self._rank(number, envelope, prefix.process)
        strings = self.string_tables.get(prefix.process)
        if strings is None:
            strings = self.string_tables[prefix.process] = {}
        event = self._typed(number, key, envelope.get(key)) if key else None
        if isinstance(event, StringEntry):
            if 0 <= event.index <= MAX_STRING_INDEX:
                strings[event.index] = event.value
            else:  # a hostile index must not make raw.jsonl's table line huge
                self._problem(ProblemKind.BAD_STRING_TABLE, number, f"string index {event.index}")
        return Record(
            line=number,
            prefix=prefix,
            key=key,
            envelope=envelope,
            event=event,
            compile_id=self._compile_id(number, envelope),
            rank=rank,
            foreign=foreign,
            payload=payload,
            payload_md5=payload_md5,
            strings=strings,
            chromium=chromium_payload(payload) if key == _CHROMIUM else None,
        )

    def _bad_line(self, kind: ProblemKind, number: int, body: bytes, ended: bool, why: str) -> None:
        if not ended:
            self._problem(ProblemKind.TRUNCATED_LINE, number, f"last line cut off ({why})")
        elif not _is_utf8(body):
            self._problem(ProblemKind.INVALID_UTF8, number, "line is not valid UTF-8")
        else:
            self._problem(kind, number, why)

    def _envelope(self, number: int, data: bytes, ended: bool) -> dict[str, Any] | None:
        try:
            value = decode(data)
        except JsonError as err:
            self._bad_line(ProblemKind.INVALID_JSON, number, data, ended, f"invalid JSON envelope: {err}")
            return None
        if not isinstance(value, dict):
            self._problem(ProblemKind.NOT_AN_OBJECT, number, f"envelope is a {type(value).__name__}")
            return None
        return value

    def _payload(self, number: int, envelope: dict[str, Any], lines: _Lines) -> bytes | None:
        has_payload = envelope.get("has_payload")
        if has_payload is None:
            return None
        pieces = _collect_payload(lines, self)
        if not isinstance(has_payload, str):
            self._problem(ProblemKind.MISSING_PAYLOAD, number, "has_payload is not a string")
        elif not pieces:
            self._problem(ProblemKind.MISSING_PAYLOAD, number, "has_payload is set but no payload follows")
        if not pieces:
            # An empty payload is still one lone-tab line, so no lines at all means missing.
            return None
        payload = pieces[0] if len(pieces) == 1 else b"\n".join(pieces)
        if not payload.isascii() and not _is_utf8(payload):  # most payloads are ASCII: no call
            self._problem(ProblemKind.INVALID_UTF8, number, "payload is not valid UTF-8")
        return payload

    def _event_key(self, number: int, envelope: dict[str, Any]) -> str:
        # A log's envelopes have a few shapes (a chromium event's six keys, in one order): the
        # one known event key of each shape met is remembered, and the rest is the general case.
        shape = tuple(envelope)
        known = _ONE_KEY.get(shape)
        if known is not None:
            return known
        keys = [k for k in envelope if k not in CONTEXT_KEYS]
        if len(keys) == 1 and keys[0] in _KNOWN_KEYS:
            if len(_ONE_KEY) >= _MEMO_MAX:
                _ONE_KEY.clear()
            _ONE_KEY[shape] = _KNOWN_KEYS[keys[0]]
        if not keys:
            self._problem(ProblemKind.NO_EVENT_KEY, number, "envelope has no event key")
            return ""
        if len(keys) > 1:
            self._problem(ProblemKind.MULTIPLE_EVENT_KEYS, number, f"several event keys: {keys}")
        key = _KNOWN_KEYS.get(keys[0])
        if key is None:
            key = keys[0]
            self.unknown_keys[key] = self.unknown_keys.get(key, 0) + 1
        return key

    def _typed(self, number: int, key: str, metadata: Any) -> Event | None:
        event_type = EVENT_TYPES.get(key)
        if event_type is None:
            return None
        try:
            return msgspec.convert(metadata, event_type)
        except msgspec.ValidationError as err:
            kind = ProblemKind.BAD_STRING_TABLE if key == "str" else ProblemKind.SCHEMA
            self._problem(kind, number, f"{key}: {err}")
            return None

    def _compile_id(self, number: int, envelope: dict[str, Any]) -> Any:
        try:
            return compile_id_from_envelope(envelope)
        except BadCompileId as err:
            self._problem(ProblemKind.BAD_COMPILE_ID, number, str(err))
            return None

    def _rank(self, number: int, envelope: dict[str, Any], process: int) -> tuple[int | None, bool]:
        """The record's rank and whether it is foreign to this log.

        A rank-less line (`str`, `torch_version`) belongs to its process's rank, else the log's.
        """
        value = envelope.get("rank")
        if value is None:
            rank = self.process_ranks.get(process, self.rank)
        elif value == self.rank and type(value) is int:  # the log's own rank, checked when first met
            self.process_ranks.setdefault(process, value)
            return value, False
        elif (checked := valid_rank(value)) is not None:
            rank = checked
            self.process_ranks.setdefault(process, rank)
            if self.rank is None:
                self.rank = rank
        else:
            self._problem(ProblemKind.BAD_RANK, number, f"rank is {value!r}")
            return self.rank, False
        foreign = rank is not None and self.rank is not None and rank != self.rank
        if foreign:
            self._problem(ProblemKind.OTHER_RANK, number, f"line of rank {rank} in a log of rank {self.rank}")
        return rank, foreign


def _prefix(match: re.Match[bytes]) -> GlogPrefix:
    return _prefix_of(match.groups())


def _prefix_of(groups: tuple[Any, ...]) -> GlogPrefix:
    # One groups() and positional fields, in PREFIX's order: half the time of ten group(name)
    # calls and keywords, paid on every record. int() of bytes costs ~120 ns: the two-digit
    # fields (PREFIX takes exactly two digits) are looked up, the process id and line number
    # (a log has few distinct ones) kept as met; only the microseconds are converted.
    level, month, day, hour, minute, second, us, pid, path, lineno = groups
    return GlogPrefix(
        _LEVELS[level],
        _TWO_DIGITS[month],
        _TWO_DIGITS[day],
        _TWO_DIGITS[hour],
        _TWO_DIGITS[minute],
        _TWO_DIGITS[second],
        int(us),
        _number(pid),
        _path(path)[0],
        _number(lineno),
    )


#: PREFIX's level letters and two-digit fields, as GlogPrefix holds them.
_LEVELS = {letter: letter.decode() for letter in (b"V", b"I", b"W", b"E", b"C")}
_TWO_DIGITS = {b"%02d" % n: n for n in range(100)}
#: Process ids and line numbers, and each path's (text, is UTF-8), as met: bounded (a hostile
#: log could name a new one on every line), cleared when full.
_MEMO_MAX = 4096
_NUMBERS: dict[bytes, int] = {}
#: An envelope's keys, in order, to its one event key (known keys only; `_event_key`): bounded.
_ONE_KEY: dict[tuple[str, ...], str] = {}
_PATHS: dict[bytes, tuple[str, bool]] = {}


def _number(digits: bytes) -> int:
    found = _NUMBERS.get(digits)
    if found is None:
        if len(_NUMBERS) >= _MEMO_MAX:
            _NUMBERS.clear()
        found = _NUMBERS[digits] = int(digits)
    return found


def _path(path: bytes) -> tuple[str, bool]:
    """A glog path's text (undecodable bytes as U+FFFD) and whether it is valid UTF-8."""
    found = _PATHS.get(path)
    if found is None:
        if len(_PATHS) >= _MEMO_MAX:
            _PATHS.clear()
        found = _PATHS[path] = (path.decode("utf-8", "replace"), _is_utf8(path))
    return found


def _possible_time(prefix: GlogPrefix) -> bool:
    # Consecutive lines share their second: the last one checked is remembered.
    moment = (prefix.month, prefix.day, prefix.hour, prefix.minute, prefix.second)
    if moment == _last_possible[0]:
        return True
    try:  # 2000 is a leap year, so 0229 passes: the real year is fitted later
        dt.datetime(2000, *moment)
    except ValueError:
        return False
    _last_possible[0] = moment
    return True


#: The last time `_possible_time` accepted (month, day, hour, minute, second).
_last_possible: list[tuple[int, int, int, int, int] | None] = [None]


def _collect_payload(lines: _Lines, reader: LogReader) -> list[bytes]:
    """The payload after an envelope, as pieces to join with newlines, PyTorch's tabs removed.

    Blank lines between payload lines are skipped (and counted).
    """
    pieces: list[bytes] = []
    blanks: list[int] = []
    while True:
        block = lines.tab_block()
        if block is not None:
            pieces.append(block)
            if lines.envelope_next():
                break
            continue
        item = lines.next()
        if item is None:
            break
        number, body, _ = item
        if body is _TOO_LONG:
            lines.push_back(item)  # an over-long envelope: the next record, not part of this payload
            break
        if body is _TOO_LONG_PAYLOAD:
            reader._problem(ProblemKind.LINE_TOO_LONG, number, "payload line too long")
            continue
        if not body:
            blanks.append(number)
            continue
        if body[:1] != b"\t":
            lines.push_back(item)
            break
        pieces.append(body[1:])
    for number in blanks:
        reader._problem(ProblemKind.BLANK_LINE, number, "empty line")
    return pieces


def _skip_payload(lines: _Lines) -> None:
    while (item := lines.next()) is not None:
        if item[1][:1] != b"\t":
            lines.push_back(item)
            return


def _is_utf8(data: bytes) -> bool:
    if data.isascii():  # most payloads are: a scan ~10x faster than decoding them
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def first_event(path: Path, max_line: int = DEFAULT_MAX_LINE) -> tuple[int | None, int]:
    """(line number of the log's first trace event, lines read); (None, all its lines) if none is.

    An event as LogReader takes one (a glog prefix with a possible date and time, then a JSON
    object), found without collecting payloads or counting problems: `tlscope split` asks before
    it writes anything, so that a file that is no log is refused rather than copied whole into
    unranked.log. A real log answers on its first line; only a file that is no log is read through.
    """
    with LogSource(path) as source:
        lines = _Lines(source.stream, max_line)
        while (item := lines.next()) is not None:
            number, body, _ = item
            if body is _TOO_LONG or body[:1] == b"\t":
                continue
            match = PREFIX.search(body)
            if match is None or not _possible_time(_prefix(match)):
                continue
            try:
                envelope = decode(body[match.end() :])
            except JsonError:
                continue
            if isinstance(envelope, dict):
                return number, lines.number
        return None, lines.number
