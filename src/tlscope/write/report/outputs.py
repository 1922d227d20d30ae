"""The report's output files: tlparse's `_N` numbers, the compile directory, where each is written.

Every per-compile file the report writes goes through `Outputs`, which numbers it with the
directory's one global counter (so the `_N` suffixes are tlparse's), writes it (or queues it for
the page workers) and registers it under its compile id. A line's parsers share a `Line`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tlscope.analyse.fold.compile_fold import json_error
from tlscope.analyse.tlparse.directory import CompileDirectory, DirKey, Entry, key_label
from tlscope.analyse.tlparse.naming import with_number
from tlscope.model.compile_id import CompileId
from tlscope.model.record import Record
from tlscope.write.outdir import OutputDir
from tlscope.write.report import pages
from tlscope.write.report.derived import DerivedFiles, link_or_copy
from tlscope.write.report.provenance_pages import ProvenanceCollector

_STACK_TRACES = "inductor_provenance_tracking_kernel_stack_traces"

#: Told of each file registered: (its path relative to OUT, its number, the record it came from).
OutputListener = Callable[[str, int, Record], None]


class Line:
    """What the parsers of one record share: the record, its compile id, directory key and folder."""

    __slots__ = ("cid", "dir", "key", "record")

    def __init__(self, record: Record) -> None:
        self.record = record
        self.cid: CompileId | None = record.compile_id
        self.key: DirKey = None if self.cid is None else self.cid.normalised()
        self.dir = f"unknown_{record.line}" if self.cid is None else self.cid.dirname


class Outputs:
    def __init__(
        self,
        out: OutputDir,
        derived: DerivedFiles,
        provenance: ProvenanceCollector | None,
        listeners: list[OutputListener],
        job_folder: Path | None = None,
    ) -> None:
        self.out = out
        #: A rank of a job: the job's folder, whose payloads/ the format writer filled.
        self._job_folder = job_folder
        self.directory = CompileDirectory()
        self.derived = derived
        self.provenance = provenance
        self.listeners = listeners
        #: Payload MD5 -> whether it parses as JSON (decides a stack-trace file's readable page).
        self._json_valid: dict[str, bool] = {}

    def number(self, path: str) -> str:
        return with_number(path, self.directory.counter)

    def register(self, line: Line, rel: str, *, readable_url: str | None = None) -> Entry:
        """Register a written file; stack-trace JSON gets its readable page (and a number) first."""
        if readable_url is None and rel.rpartition("/")[2].startswith(_STACK_TRACES) and rel.endswith(".json"):
            readable_url = self._readable_page(rel, line.record)
            if readable_url:
                self.directory.take_number()
        entry = self.directory.register_file(line.key, rel, readable_url=readable_url)
        for listener in self.listeners:
            listener(rel, entry.number, line.record)
        return entry

    def _readable_page(self, rel: str, record: Record) -> str:
        """Queue the readable page of stack-traces JSON at `rel` and return its name.

        "" when the payload is not JSON: tlparse then records an empty readable_url and takes
        no number.
        """
        md5 = record.payload_md5
        if md5 is None or record.payload is None:
            return ""
        valid = self._json_valid.get(md5)
        if valid is None:
            # The compile fold decoded it already (its verdict is kept by MD5): not decoded again.
            valid = self._json_valid[md5] = json_error(record.payload, md5) == ""
        if not valid:
            return ""
        readable = pages.readable_name(rel)
        self.derived.submit("readable", md5, self.payload_path(md5), self.out.path(readable), record.payload)
        return readable

    def payload_path(self, md5: str) -> Path:
        """The format writer's file of payload `md5` (the job's, for a rank of a job)."""
        if self._job_folder is not None:
            return self._job_folder / "payloads" / f"{md5}.txt"
        return self.out.path(f"payloads/{md5}.txt")

    def payload_file(self, line: Line, path: str) -> None:
        """`path` (numbered) holding the record's payload as it is (a hard link to payloads/)."""
        rel = self.number(path)
        record = line.record
        # Paths as text: a rank's report links ~80 payload files, and a Path is ~3x its text.
        dest = self.out.path_text(rel)
        if record.payload_md5 is not None and record.payload is not None:
            md5 = record.payload_md5
            job = self._job_folder
            link_or_copy(f"{job}/payloads/{md5}.txt" if job else self.out.path_text(f"payloads/{md5}.txt"), dest)
        else:
            with open(dest, "wb"):
                pass
        self.provenance_output(line, rel, dest)
        self.register(line, rel)

    def provenance_output(self, line: Line, rel: str, source: str, *, pre_line: bool = False) -> None:
        """Output `rel` of the line's compilation, for its provenance page (-i): `source` is the
        path of the file holding its text (a payload of a job's rank is in the job's payloads/)."""
        if self.provenance is not None:
            self.provenance.output(line.key, rel.rpartition("/")[2], source, pre_line=pre_line)

    def write_text(self, rel: str, text: str) -> None:
        self.out.path(rel).write_text(text, encoding="utf-8", errors="surrogateescape")

    def page(self, line: Line, stem: str, **context: Any) -> str:
        """`<dir>/<stem>_N.html` from template `<stem>.html.jinja`; returns its path."""
        rel = self.number(f"{line.dir}/{stem}.html")
        self.write_text(rel, pages.render(f"{stem}.html.jinja", cid=key_label(line.cid), **context))
        self.register(line, rel)
        return rel

    def derived_file(self, kind: str, rel: str, record: Record) -> None:
        """`rel` written from the record's payload by a page worker (job `kind`), once per payload."""
        if record.payload_md5 is None or record.payload is None:
            self.out.path(rel).write_bytes(b"")
            return
        md5 = record.payload_md5
        self.derived.submit(kind, md5, self.payload_path(md5), self.out.path(rel), record.payload)
