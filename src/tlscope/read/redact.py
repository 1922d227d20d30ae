"""Redaction: rewrite machine-identifying strings in a TORCH_TRACE log, keeping it valid.

People share trace logs to get help, and those logs name the machine that made them: the home
directory, the Python prefix, temporary and cache directories, the user and host names. This
command rewrites them everywhere (envelope lines, payload lines, and inside JSON strings where
they may be escaped), then recomputes each payload's MD5 so `has_payload` still checks.

It streams: one record (an envelope line and its payload lines) is held in memory at a time.
"""

from __future__ import annotations

import contextlib
import getpass
import gzip
import hashlib
import json
import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tlscope.format.json_boundary import JsonError, decode
from tlscope.lifetime import signals_deferred, start_guard, stop_guard
from tlscope.read.glog import loose_prefix_end
from tlscope.read.source import LogSource

_HAS_PAYLOAD = re.compile(r'("has_payload":\s*")([0-9a-f]{32})(")')
# Characters that continue a path component: a mapped prefix must not start or end in the middle
# of one, so that mapping /tmp leaves /tmpfoo alone. Non-ASCII letters count, and so do their
# JSON \uXXXX escapes (torch's json.dumps escapes them), so raw and escaped text agree.
_NAME_CHAR = r"A-Za-z0-9_\-\u0080-\U0010ffff"
_BEFORE = rf"(?:(?<![{_NAME_CHAR}])|(?<=\\[nrtbf]))"  # also right after a JSON \n, \t...
_AFTER = rf"(?![{_NAME_CHAR}]|\\u[0-9a-fA-F]{{4}})"
# A path-like token, used to find user names only where they name a path component.
_PATH_TOKEN = re.compile(r"(?:[A-Za-z]:)?[/\\][^\s\"'<>|,;()\[\]{}]*")

PLACEHOLDERS = {
    "prefix": "$PREFIX",
    "venv": "$VENV",
    "home": "$HOME",
    "cwd": "$CWD",
    "tmp": "$TMPDIR",
    "user": "$USER",
    "host": "$HOST",
}


@dataclass(frozen=True)
class Mapping:
    old: str
    new: str


@dataclass
class Stats:
    records: int = 0
    payloads_rehashed: int = 0
    # Payloads whose MD5 did not match before redaction: left mismatched on purpose, since
    # "fixing" them would hide corruption from whoever reads the redacted log.
    bad_md5_kept: int = 0
    replacements: int = 0
    lines: int = 0
    notes: list[str] = field(default_factory=list)


def _escaped_variants(text: str) -> list[str]:
    """The text as it may appear raw, JSON-escaped, or JSON-escaped twice (JSON in a JSON
    string, as with inductor_config inside compilation_metrics)."""
    variants = [text]
    for _ in range(2):
        text = json.dumps(text)[1:-1]
        variants.append(text)
    return variants


class Redactor:
    """Rewrites path prefixes, user names and host names in text, in one regex pass per line
    so that a replacement is never itself rewritten by a later mapping."""

    def __init__(self, paths: Iterable[Mapping], users: Iterable[Mapping] = (), hosts: Iterable[Mapping] = ()) -> None:
        self._table: dict[str, str] = {}
        parts: list[str] = []
        for m in sorted(paths, key=lambda m: len(m.old), reverse=True):
            if not m.old:
                continue
            for old, new in zip(_escaped_variants(m.old), _escaped_variants(m.new), strict=True):
                if old in self._table:
                    continue
                self._table[old] = new
                tail = "" if old.endswith(("/", "\\")) else _AFTER
                # No look-behind on "/": over-redacting /a/root/b beats leaking file:///root.
                parts.append(f"{_BEFORE}{re.escape(old)}{tail}")
        for h in hosts:
            if h.old and h.old not in self._table:
                self._table[h.old] = h.new
                parts.append(f"(?<![{_NAME_CHAR}.]){re.escape(h.old)}{_AFTER}")
        self._prefix_re = re.compile("|".join(parts)) if parts else None
        # User names are short and common words ("root" is also in "oneapi_root"), so they are
        # only replaced as a path component or a component's _/- suffix (torchinductor_root).
        self._users = {u.old: u.new for u in users if u.old}
        names = "|".join(re.escape(u) for u in sorted(self._users, key=len, reverse=True))
        self._user_re = re.compile(f"(?<=[/\\\\_\\-])({names})(?=[/\\\\]|$)") if self._users else None
        self.replacements = 0

    def _sub_prefix(self, match: re.Match[str]) -> str:
        self.replacements += 1
        return self._table[match.group(0)]

    def _sub_user(self, match: re.Match[str]) -> str:
        self.replacements += 1
        return self._users[match.group(1)]

    def _sub_token(self, match: re.Match[str]) -> str:
        assert self._user_re is not None
        # Escaped separators (\\ or \/) inside JSON strings still split components.
        return self._user_re.sub(self._sub_user, match.group(0))

    def apply(self, text: str) -> str:
        if self._prefix_re is not None:
            text = self._prefix_re.sub(self._sub_prefix, text)
        if self._user_re is not None:
            text = _PATH_TOKEN.sub(self._sub_token, text)
        return text


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8", "surrogateescape")).hexdigest()


def _records(lines: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
    """Groups lines into (envelope-or-other line, following payload lines)."""
    head: str | None = None
    payload: list[str] = []
    for line in lines:
        if line.startswith("\t") and head is not None:
            payload.append(line)
            continue
        if head is not None:
            yield head, payload
        head, payload = line, []
    if head is not None:
        yield head, payload


def _envelope_has_payload(line: str) -> str | None:
    """The envelope's top-level has_payload, or None (not an envelope, bad JSON, no payload)."""
    # Searched, not matched: lines carrying an extra prefix (e.g. "[rank0]:" in a job's combined
    # output) are still envelopes.
    end = loose_prefix_end(line)
    if end is None:
        return None
    try:
        meta = decode(line[end:])
    except JsonError:
        return None
    value = meta.get("has_payload") if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def _set_has_payload(line: str, old: str, new: str) -> str:
    # torch adds has_payload last, so rewrite the last textual occurrence; this keeps the rest
    # of the envelope byte-identical instead of re-serialising the JSON.
    for match in reversed(list(_HAS_PAYLOAD.finditer(line))):
        if match.group(2) == old:
            return line[: match.start(2)] + new + line[match.end(2) :]
    return line


def redact_lines(lines: Iterable[str], redactor: Redactor, stats: Stats) -> Iterator[str]:
    """Yields the redacted lines (without newline) of a log given as lines (without newline)."""
    for head, payload in _records(lines):
        stats.records += 1
        old_md5 = _envelope_has_payload(head)
        new_head = redactor.apply(head)
        new_payload = [redactor.apply(p) for p in payload]
        if old_md5 is not None and (payload or old_md5 == _md5("")):
            text = "\n".join(p[1:] for p in payload)
            if _md5(text) == old_md5:
                new_md5 = _md5("\n".join(p[1:] for p in new_payload))
                new_head = _set_has_payload(new_head, old_md5, new_md5)
                stats.payloads_rehashed += 1
            else:
                stats.bad_md5_kept += 1
        yield new_head
        yield from new_payload


class _LineReader:
    """Lines of a binary stream, without their newline, remembering whether the last one had
    one so the output can end the same way."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.final_newline = False

    def __iter__(self) -> Iterator[str]:
        # Split on \n only: a \r inside a payload is payload text, and surrogateescape keeps
        # undecodable bytes so they round-trip unchanged.
        for raw in self._stream:
            line = raw.decode("utf-8", "surrogateescape")
            self.final_newline = line.endswith("\n")
            yield line[:-1] if self.final_newline else line


def redact_file(src: Path, dst: Path | None, redactor: Redactor) -> Stats:
    """Redacts src into dst (gzip if dst ends in .gz; stdout if dst is None).

    dst is written whole or not at all: into a temporary sibling, renamed into place at the
    end (a failure or an interrupt removes it). A cut-off or corrupt .gz input is read up to the
    damage, like the parser reads it; `stats.notes` says so.
    """
    stats = Stats()
    with LogSource(src) as source:
        if dst is None:
            _write(source.stream, sys.stdout.buffer, redactor, stats)
        else:
            with _replacing(dst) as tmp:
                _write_file(source.stream, tmp, dst.suffix == ".gz", redactor, stats)
        if source.corrupt is not None:
            stats.notes.append(f"{src} ends early ({source.corrupt}): redacted what comes before the damage")
    stats.replacements = redactor.replacements
    return stats


def _write_file(fin: BinaryIO, dst: Path, compress: bool, redactor: Redactor, stats: Stats) -> None:
    if compress:
        # mtime=0 and no file name in the header: the same input gives the same bytes.
        with dst.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
            _write(fin, out, redactor, stats)  # type: ignore[arg-type]
    else:
        with dst.open("wb") as out:
            _write(fin, out, redactor, stats)


@contextlib.contextmanager
def _replacing(dst: Path) -> Iterator[Path]:
    """A temporary file beside `dst` that replaces it at the end, or is removed on failure (by
    the guard process if this run is killed with SIGKILL)."""
    fd, name = tempfile.mkstemp(prefix=f".{dst.name}.redact-", dir=dst.absolute().parent)
    os.close(fd)
    tmp = Path(name)
    guard = start_guard(tmp)
    try:
        yield tmp
        with signals_deferred():
            os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)
        stop_guard(guard)


def _write(fin: BinaryIO, out: BinaryIO, redactor: Redactor, stats: Stats) -> None:
    reader = _LineReader(fin)
    first = True
    for line in redact_lines(reader, redactor, stats):
        stats.lines += 1
        if not first:
            out.write(b"\n")
        out.write(line.encode("utf-8", "surrogateescape"))
        first = False
    if reader.final_newline:
        out.write(b"\n")


def auto_mappings() -> tuple[list[Mapping], list[Mapping], list[Mapping]]:
    """Mappings for this machine: Python prefixes and venv, home, cwd, temp dir, user, host."""
    paths: list[Mapping] = []

    def add(path: str | None, placeholder: str) -> None:
        if not path or path in ("/", "\\") or len(path) < 2:
            return
        for variant in dict.fromkeys([path, os.path.realpath(path)]):
            paths.append(Mapping(variant.rstrip("/\\") or variant, PLACEHOLDERS[placeholder]))

    add(os.environ.get("VIRTUAL_ENV"), "venv")
    add(sys.prefix, "prefix")
    add(sys.base_prefix, "prefix")
    add(sys.exec_prefix, "prefix")
    add(os.getcwd(), "cwd")
    add(os.path.expanduser("~"), "home")
    add(tempfile.gettempdir(), "tmp")
    users = [Mapping(u, PLACEHOLDERS["user"]) for u in _user_names()]
    hosts = [Mapping(h, PLACEHOLDERS["host"]) for h in _host_names()]
    return paths, users, hosts


def _user_names() -> list[str]:
    names = {os.environ.get("USER", ""), os.environ.get("LOGNAME", "")}
    with contextlib.suppress(KeyError, OSError):  # no passwd entry in some containers
        names.add(getpass.getuser())
    return sorted(n for n in names if n)


def _host_names() -> list[str]:
    full = socket.gethostname()
    return sorted({n for n in (full, full.split(".")[0]) if n and n != "localhost"})


def redact_in_place(src: Path, redactor: Redactor) -> Stats:
    """Redact `src` into itself (its compression kept: a .gz stays gzip), whole or not at all."""
    stats = Stats()
    with LogSource(src) as source, _replacing(src) as tmp:
        _write_file(source.stream, tmp, source.compressed, redactor, stats)
        if source.corrupt is not None:
            stats.notes.append(f"{src} ends early ({source.corrupt}): redacted what comes before the damage")
    stats.replacements = redactor.replacements
    return stats
