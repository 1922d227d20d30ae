"""Why the log is so big: its bytes and lines by event key, artifact, compile id, module and setting.

Every byte is attributed: the reader gives each Record the bytes and lines it took (envelope
line, payload lines, newlines), and what no record took (unparsable lines, orphan payload lines)
is `other`. `LogSizeFold.feed` keeps running totals and the 20 biggest payloads (a heap), never a
payload.
"""

from __future__ import annotations

import heapq
import re

from tlscope.format.logsize import BigPayload, LogSize, SettingSize, SizeStats
from tlscope.format.raw import NO_EVENT_KEY
from tlscope.model.compile_id import CompileId
from tlscope.model.events import Artifact
from tlscope.model.record import Record

BIGGEST = 20
ALWAYS = "TORCH_TRACE (always written while tracing)"

#: What makes PyTorch write each kind of event (event key or artifact name), first match wins.
SETTINGS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"^chromium_event$"),
        ALWAYS + ": compile-time profiling, a begin and an end event per timed phase plus instant events "
        "(the biggest: cache misses and hits repeating the cache key's components)",
    ),
    (
        re.compile(r"compilation_metrics"),
        ALWAYS + ": one record per compilation, each with the whole dynamo and inductor config",
    ),
    (
        re.compile(r"^inductor_provenance_tracking"),
        "INDUCTOR_PROVENANCE=1 (torch._inductor.config.trace.provenance_tracking_level): node-to-kernel maps",
    ),
    (
        re.compile(
            r"^(expression_created|guard_added|guard_added_fast|propagate_real_tensors.*|export|"
            r"missing_fake_kernel|mismatched_fake_kernel|create_unbacked_symbol)$"
        ),
        "TORCH_DTRACE (or torch.export.draft_export): symbolic-shape reasoning, one event per expression",
    ),
    (re.compile(r"^compiled_autograd"), "torch._dynamo.config.compiled_autograd = True: the backward graphs"),
    (re.compile(r"^optimize_ddp"), "DistributedDataParallel with torch._dynamo.config.optimize_ddp"),
    (re.compile(r"_BYTECODE$"), ALWAYS + ": bytecode of the resume function of each graph break"),
    (re.compile(r"_cache_(hit|miss|bypass)$"), ALWAYS + ": cache key components (the graph text again)"),
    (re.compile(r"^fx_graph_runnable$"), ALWAYS + ": a standalone repro script per Inductor graph"),
    (re.compile(r"^(inductor_output_code|graph_dump)$"), ALWAYS + ": the generated code of each graph"),
    (
        re.compile(r"^dynamo_graph_break_reason$"),
        ALWAYS + ": one text per graph break (reason, hints, user-code traceback)",
    ),
    (re.compile(r"graph"), ALWAYS + ": the graph's code at each stage (Dynamo, AOTAutograd, Inductor passes)"),
    (re.compile(r"^describe_"), ALWAYS + ": one event per input tensor, storage and source"),
    (re.compile(r"guards"), ALWAYS + ": the guards of each compiled frame"),
]


def setting_of(kind: str) -> str:
    for pattern, setting in SETTINGS:
        if pattern.search(kind):
            return setting
    return ALWAYS


class LogSizeFold:
    def __init__(self) -> None:
        #: Running totals per (event key, artifact name or None, module): the key, artifact,
        #: module and kind tables are sums of these, made at the end. A log has a few dozen such
        #: groups, and one total per record is a quarter of the four a record once updated.
        self._groups: dict[tuple[str, str | None, str], SizeStats] = {}
        #: Running totals per compile id as the record has it (None: malformed).
        self._by_id: dict[CompileId | None, SizeStats] = {}
        self._heap: list[tuple[int, int, BigPayload]] = []

    def feed(self, record: Record) -> None:
        payload = len(record.payload) if record.payload is not None else 0
        key = record.key or NO_EVENT_KEY
        event = record.event
        artifact = (event.name or "(unnamed artifact)") if type(event) is Artifact else None  # no subclass
        size, lines = record.size, record.lines
        # Once per record: the two totals updated inline, the compile id's kept by id (its
        # display, which `result` groups them by, is looked up once per id, not once per record).
        group = (key, artifact, record.prefix.pathname)
        stats = self._groups.get(group)
        if stats is None:
            stats = self._groups[group] = SizeStats()
        stats.bytes += size
        stats.lines += lines
        stats.events += 1
        stats.payload_bytes += payload
        cid = record.compile_id
        stats = self._by_id.get(cid)
        if stats is None:
            stats = self._by_id[cid] = SizeStats()
        stats.bytes += size
        stats.lines += lines
        stats.events += 1
        stats.payload_bytes += payload
        if payload and (len(self._heap) < BIGGEST or payload > self._heap[0][0]):
            kind = key if artifact is None else artifact
            big = BigPayload(
                kind=kind,
                compile_id=_display(cid),
                bytes=payload,
                log_line=record.line,
                payload_filename=None
                if record.key in ("chromium_event", "str")
                else f"payloads/{record.payload_md5}.txt",
                setting=setting_of(kind),
            )
            item = (payload, -record.line, big)
            if len(self._heap) < BIGGEST:
                heapq.heappush(self._heap, item)
            else:
                heapq.heapreplace(self._heap, item)

    @property
    def by_compile_id(self) -> dict[str, SizeStats]:
        """Totals per compile id's display (`unknown` for a malformed one), in the order of their
        first record: ids of one display (a runtime event's attempt left out, and attempt 0) summed."""
        found: dict[str, SizeStats] = {}
        for cid, stats in self._by_id.items():
            _merge(found, _display(cid), stats)
        return found

    def _tables(self) -> tuple[dict[str, SizeStats], ...]:
        """(by event key, by artifact, by module, by kind), summed from the groups in the order
        they were first met: each table's keys in the order of their first record, as if each
        table had been fed every record (a kind's first group is its first record's)."""
        by_key: dict[str, SizeStats] = {}
        by_artifact: dict[str, SizeStats] = {}
        by_module: dict[str, SizeStats] = {}
        by_kind: dict[str, SizeStats] = {}
        for (key, artifact, module), stats in self._groups.items():
            _merge(by_key, key, stats)
            if artifact is not None:
                _merge(by_artifact, artifact, stats)
            _merge(by_module, module, stats)
            _merge(by_kind, key if artifact is None else artifact, stats)
        return by_key, by_artifact, by_module, by_kind

    def result(
        self,
        *,
        path: str,
        total_bytes: int,
        total_lines: int,
        file_bytes: int,
        compressed: bool,
        version: tuple[int, int],
    ) -> LogSize:
        by_key, by_artifact, by_module, by_kind = self._tables()
        attributed = SizeStats()
        for stats in by_key.values():
            attributed.bytes += stats.bytes
            attributed.lines += stats.lines
        return LogSize(
            format_version=version[0],
            format_minor=version[1],
            path=path,
            total_bytes=total_bytes,
            total_lines=total_lines,
            file_bytes=file_bytes,
            compressed=compressed,
            by_event_key=_biggest_first(by_key),
            other=SizeStats(bytes=total_bytes - attributed.bytes, lines=total_lines - attributed.lines),
            by_artifact=_biggest_first(by_artifact),
            by_compile_id=_biggest_first(self.by_compile_id),
            by_module=_biggest_first(by_module),
            by_setting=_settings(by_kind),
            biggest_payloads=[big for _, _, big in sorted(self._heap, key=lambda t: (-t[0], -t[1]))],
        )


def _settings(by_kind: dict[str, SizeStats]) -> list[SettingSize]:
    found: dict[str, SettingSize] = {}
    for kind, stats in sorted(by_kind.items(), key=lambda kv: -kv[1].bytes):
        setting = setting_of(kind)
        entry = found.setdefault(setting, SettingSize(setting=setting, bytes=0, kinds=[]))
        entry.bytes += stats.bytes
        entry.kinds.append(kind)
    return sorted(found.values(), key=lambda s: -s.bytes)


def _display(cid: CompileId | None) -> str:
    return "unknown" if cid is None else cid.normalised().display


def _merge(table: dict[str, SizeStats], key: str, stats: SizeStats) -> None:
    total = table.get(key)
    if total is None:
        total = table[key] = SizeStats()
    total.bytes += stats.bytes
    total.lines += stats.lines
    total.events += stats.events
    total.payload_bytes += stats.payload_bytes


def _biggest_first(table: dict[str, SizeStats]) -> dict[str, SizeStats]:
    return dict(sorted(table.items(), key=lambda kv: (-kv[1].bytes, kv[0])))
