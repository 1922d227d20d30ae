"""The report sink: tlparse's HTML report, fed the same records as the format writer.

Per record it runs the registered parsers (write/report/handlers.py) in tlparse's order (reference
§3.0) so every output gets the same `_N` number, writes each output as soon as it is known
(nothing is held back), and folds what the global pages need (compile directory, stack tries,
metrics, failures). At the end it writes index.html, compile_directory.json,
failures_and_restarts.html and raw.log.
"""

from __future__ import annotations

import contextlib

import msgspec

from tlscope.analyse.tlparse.directory import CompileDirectory, Entry, key_label
from tlscope.analyse.tlparse.stack import resolve_stack
from tlscope.format.compiles import Answers
from tlscope.model.events import ChromiumEvent
from tlscope.model.lenient import frames_of
from tlscope.model.record import Record
from tlscope.write.context import RunContext
from tlscope.write.explorer_note import explorer_note
from tlscope.write.report import answer_sections, pages
from tlscope.write.report.handlers import EXPORT_PARSERS, FOLDS, PARSERS, dispatch
from tlscope.write.report.options import ReportOptions
from tlscope.write.report.outputs import Line, OutputListener
from tlscope.write.report.render import render_to, safe_href
from tlscope.write.report.stacks import render_trie
from tlscope.write.report.state import ReportState

_STACK = "stack"
_CHROMIUM = ChromiumEvent.KEY


class ReportSink:
    def __init__(self, ctx: RunContext, options: ReportOptions, listeners: list[OutputListener] | None = None) -> None:
        self.state = ReportState(ctx, options, listeners or [])
        self._parsers = EXPORT_PARSERS if options.export else PARSERS
        #: The envelope keys anything below reads: a record with none of them (describe_tensor,
        #: describe_storage, describe_source: over half a real log's records) only names its key.
        self._read_keys = frozenset(on.event.KEY for on in (*self._parsers, *FOLDS)) | {_STACK}
        #: ... but a chromium event's: an envelope with none of these and the chromium event only
        #: sets a flag (`handlers.chromium_event`).
        self._besides_chromium = self._read_keys - {_CHROMIUM}
        # raw.log, copied beside the pass; a rank of a job has none: its log is the job's input
        # (DEVIATIONS.md); nor has -e's report.
        self._raw_log: pages.RawLogCopy | None = None
        if ctx.options.job_folder is None and not options.export:
            self._raw_log = pages.RawLogCopy(ctx.reader.path, ctx.out.path("raw.log"))

    def listen(self, listener: OutputListener) -> None:
        """Tell `listener` of every file registered from now on (multi-rank's rank facts)."""
        self.state.outputs.listeners.append(listener)

    @property
    def directory(self) -> CompileDirectory:
        """Every output registered so far, by compile id (multi-rank's rank facts read it at the end)."""
        return self.state.outputs.directory

    def page(self, rel: str) -> bytes:
        """The text of a page this report wrote (after `finish`), handed over: multi-rank's rank
        facts check a graph's collectives against its output-code page, as tlparse does."""
        return self.state.outputs.derived.page(self.state.ctx.out.path(rel))

    def feed(self, record: Record) -> None:
        if record.key == "str" or record.foreign:
            return
        state = self.state
        if record.key == _CHROMIUM and self._besides_chromium.isdisjoint(record.envelope):
            # A chromium event alone (three quarters of a rank's records in a job): what the
            # dispatch below would do, without its Line and handler lookups. Tested first: its
            # envelope always holds a key below (its own), so the test below never passes it.
            state.outputs.directory.touch(None if record.compile_id is None else record.compile_id.normalised())
            if record.envelope.get(_CHROMIUM) is not None:
                state.has_chromium_events = True
            return
        if self._read_keys.isdisjoint(record.envelope):  # no handler would run, and no stack
            state.outputs.directory.touch(None if record.compile_id is None else record.compile_id.normalised())
            return
        line = Line(record)
        state.outputs.directory.touch(line.key)
        dispatch(state, line, self._parsers)
        # The envelope's own `stack` (not an event's): where compilations outside any frame start.
        stack = frames_of(record.envelope.get(_STACK))
        if stack is not None:
            state.unknown_trie.insert(resolve_stack(stack, record), None)
        dispatch(state, line, FOLDS)

    def abort(self) -> None:
        """The run failed or was interrupted: stop the page workers now (see pipeline.single.run)."""
        self.state.outputs.derived.abort()
        if self._raw_log is not None:  # its file is in OUT's temporary folder, removed next;
            with contextlib.suppress(Exception):  # the run's own error is the one to report
                self._raw_log.wait()

    def finish(self, ctx: RunContext, found: Answers) -> None:
        """The end pages; `found` is the run's answers (compiles.json's data), which index.html shows."""
        state = self.state
        outputs = state.outputs
        outputs.derived.close()
        if state.export is not None:
            outputs.write_text("index.html", state.export.index(outputs.directory, state.options.custom_header_html))
            return
        outputs.write_text(
            "failures_and_restarts.html", pages.render("failures_and_restarts.html.jinja", failures=state.failures)
        )
        pages.write_compile_directory(ctx.out, outputs.directory)
        provenance_pages: list[tuple[str, str]] = []
        if outputs.provenance is not None:
            provenance_pages = outputs.provenance.write(ctx.out, [k for k, _ in outputs.directory.items()])
        flame = answer_sections.write_flame_page(ctx.out, found)
        self._write_index(provenance_pages, found, flame)
        if self._raw_log is not None:
            self._raw_log.wait()

    def _write_index(self, provenance_pages: list[tuple[str, str]], found: Answers, flame: bool) -> None:
        """index.html streamed to its file: it grows with the log (a row per output)."""
        state = self.state
        items = state.outputs.directory.items()
        directory = ((key_label(key), [_index_entry(e) for e in entries]) for key, entries in items)
        rows = answer_sections.rows(found.compiles)  # read once for the badges and the sections
        render_to(
            state.ctx.out.path("index.html"),
            "index.html.jinja",
            custom_header_html=pages.trusted(state.options.custom_header_html),
            explorer_note=explorer_note(state.options.source_url, state.options.source_root),
            stack_trie_html=render_trie(state.trie, state.metrics.status),
            unknown_stack_trie_html=render_trie(state.unknown_trie, state.metrics.status) if state.unknown_trie else "",
            num_breaks=len(state.failures),
            has_chromium_events=state.has_chromium_events,
            directory=directory,
            provenance_pages=provenance_pages,
            collectives_parity_link=state.options.multi_rank,
            answers_badges=answer_sections.badges(found, rows),
            # Linked only when written: a log of no timed compile has no flame graph.
            answers_flame=flame,
            **answer_sections.sections(found, state.options.source_url, state.options.source_root, rows),
        )


class IndexRow(msgspec.Struct, frozen=True):
    """An output as index.html lists it (a link entry's href only when it is http(s))."""

    href: str | None
    name: str
    url: str
    readable_url: str | None
    suffix: str
    number: int


def _index_entry(entry: Entry) -> IndexRow:
    href = safe_href(entry.url) if entry.link else entry.url
    return IndexRow(href, entry.name, entry.url, entry.readable_url, entry.suffix, entry.number)
