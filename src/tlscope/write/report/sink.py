"""The report sink: tlparse's HTML report, fed the same records as the format writer.

Per record it runs tlparse's parsers in tlparse's order (reference §3.0) so every output gets
the same `_N` number, writes each output as soon as it is known (nothing is held back), and
folds what the global pages need (compile directory, stack tries, metrics, failures). At the
end it writes index.html, compile_directory.json, failures_and_restarts.html and raw.log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tlscope.analyse.directory import CompileDirectory, DirKey, Entry, key_label
from tlscope.analyse.metrics import Failure, MetricsIndex, failures_of, frame_key
from tlscope.analyse.naming import eval_with_key_id, file_stem, with_number
from tlscope.analyse.stack import ResolvedFrame, StackTrie, drop_convert_frame_suffix, resolve_stack
from tlscope.model.compile_id import CompileId
from tlscope.model.events import Frame
from tlscope.model.problems import ProblemKind
from tlscope.model.record import Record
from tlscope.pipeline.context import RunContext
from tlscope.write.outdir import OutputDir, safe_component
from tlscope.write.report import pages
from tlscope.write.report.derived import DerivedFiles, link_or_copy
from tlscope.write.report.export import ExportState
from tlscope.write.report.options import ReportOptions
from tlscope.write.report.provenance import ProvenanceCollector
from tlscope.write.report.render import render_to, safe_href

#: Payload-only parsers, in tlparse's order: `<cid dir>/<key>_<N>.txt` with the raw payload.
SENTINELS = (
    "optimize_ddp_split_graph",
    "compiled_autograd_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
    "aot_joint_graph",
    "inductor_post_grad_graph",
    "inductor_pre_grad_graph",
    "dynamo_cpp_guards_str",
)
_STACK_TRACES = "inductor_provenance_tracking_kernel_stack_traces"


class _Line:
    """What the parsers of one record share."""

    __slots__ = ("cid", "dir", "key", "record")

    def __init__(self, record: Record) -> None:
        self.record = record
        self.cid: CompileId | None = record.compile_id
        self.key: DirKey = None if self.cid is None else self.cid.normalised()
        self.dir = f"unknown_{record.line}" if self.cid is None else self.cid.dirname


class ReportSink:
    def __init__(self, ctx: RunContext, options: ReportOptions) -> None:
        self.ctx = ctx
        self.out: OutputDir = ctx.out
        self.options = options
        self.directory = CompileDirectory()
        self.metrics = MetricsIndex()
        self.stack_index: dict[DirKey, list[ResolvedFrame]] = {}
        self.trie = StackTrie()
        self.unknown_trie = StackTrie()
        self.specializations: dict[DirKey, list[dict[str, Any]]] = {}
        self.guards_fast: dict[DirKey, list[dict[str, Any]]] = {}
        self.failures: list[Failure] = []
        self.has_chromium_events = False
        self.derived = DerivedFiles(options.highlight_workers)
        self.export = ExportState() if options.export else None
        self.provenance = ProvenanceCollector() if options.inductor_provenance else None
        #: Payload MD5 -> whether it parses as JSON (decides a stack-trace file's readable page).
        self._json_valid: dict[str, bool] = {}

    # -- per record ------------------------------------------------------------------------------

    def feed(self, record: Record) -> None:
        if record.key == "str" or record.foreign:
            return
        line = _Line(record)
        self.directory.touch(line.key)
        env = record.envelope
        if self.export is not None:
            self._export_parsers(line, env)
        else:
            self._parsers(line, env)
        self._fold(line, env)

    def _parsers(self, line: _Line, env: dict[str, Any]) -> None:
        for key in SENTINELS:
            if env.get(key) is not None:
                self._payload_file(line, f"{line.dir}/{key}.txt")
        graph_dump = _obj(env.get("graph_dump"))
        if graph_dump is not None and isinstance(graph_dump.get("name"), str):
            self._payload_file(line, f"{line.dir}/{safe_component(graph_dump['name'])}.txt")
        if env.get("dynamo_output_graph") is not None:
            self._payload_file(line, f"{line.dir}/dynamo_output_graph.txt")
        if env.get("dynamo_guards") is not None:
            self._guards(line)
        code = _obj(env.get("inductor_output_code"))
        if code is not None:
            self._output_code(line, code)
        child = _obj(env.get("optimize_ddp_split_child"))
        if child is not None and isinstance(child.get("name"), str):
            self._payload_file(line, f"{line.dir}/optimize_ddp_split_child_{safe_component(child['name'])}.txt")
        aot_bwd = _obj(env.get("aot_autograd_backward_compilation_metrics"))
        if aot_bwd is not None:
            self._page(line, "aot_autograd_backward_compilation_metrics", m=aot_bwd)
        bwd = _obj(env.get("bwd_compilation_metrics"))
        if bwd is not None:
            self._page(line, "bwd_compilation_metrics", m=bwd)
        link = _obj(env.get("link"))
        if link is not None and isinstance(link.get("name"), str) and isinstance(link.get("url"), str):
            self.directory.register_link(line.key, link["name"], link["url"])
        artifact = _obj(env.get("artifact"))
        if artifact is not None:
            self._artifact(line, artifact)
        dump = _obj(env.get("dump_file"))
        if dump is not None and isinstance(dump.get("name"), str):
            self._dump_file(line, dump["name"])
        metrics = _obj(env.get("compilation_metrics"))
        if metrics is not None:
            self._compilation_metrics(line, metrics)

    def _export_parsers(self, line: _Line, env: dict[str, Any]) -> None:
        assert self.export is not None
        if env.get("exported_program") is not None:
            self._payload_file(line, f"{line.dir}/exported_program.txt")
        for page in self.export.feed(line.record, line.cid, line.dir):
            rel = self._number(f"{line.dir}/symbolic_guard_information.html")
            self._write_text(rel, self.export.page_html(page, rel))
            self.directory.register_file(line.key, rel)

    def _fold(self, line: _Line, env: dict[str, Any]) -> None:
        record = line.record
        if env.get("chromium_event") is not None:
            self.has_chromium_events = True
        stack = env.get("stack")
        if isinstance(stack, list):
            self.unknown_trie.insert(resolve_stack(_frames(stack), record), None)
        start = _obj(env.get("dynamo_start"))
        if start is not None and isinstance(start.get("stack"), list):
            frames = drop_convert_frame_suffix(resolve_stack(_frames(start["stack"]), record))
            self.stack_index[line.key] = frames
            self.trie.insert(frames, line.cid)
        for name, index in (
            ("symbolic_shape_specialization", self.specializations),
            ("guard_added_fast", self.guards_fast),
        ):
            found = _obj(env.get(name))
            if found is not None:
                index.setdefault(line.key, []).append(pages.stack_row(found, record))

    # -- outputs -----------------------------------------------------------------------------

    def _number(self, path: str) -> str:
        return with_number(path, self.directory.counter)

    def _register(self, line: _Line, rel: str) -> Entry:
        """Register a written file; stack-trace JSON gets its readable page (and a number) first."""
        readable = None
        if rel.rpartition("/")[2].startswith(_STACK_TRACES) and rel.endswith(".json"):
            readable = self._readable_page(rel, line.record)
            if readable:
                self.directory.take_number()
        return self.directory.register_file(line.key, rel, readable_url=readable)

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
            valid = self._json_valid[md5] = pages.is_json(record.payload)
        if not valid:
            return ""
        readable = pages.readable_name(rel)
        self.derived.submit("readable", md5, self._payload_path(md5), self.out.path(readable))
        return readable

    def _payload_path(self, md5: str) -> Path:
        return self.out.path(f"payloads/{md5}.txt")

    def _payload_file(self, line: _Line, path: str) -> None:
        rel = self._number(path)
        record = line.record
        self._write_payload(rel, record)
        if self.provenance is not None:
            self.provenance.output(line.key, rel.rpartition("/")[2], rel)
        self._register(line, rel)

    def _write_payload(self, rel: str, record: Record) -> None:
        dest = self.out.path(rel)
        if record.payload_md5 is not None and record.payload is not None:
            link_or_copy(self._payload_path(record.payload_md5), dest)
        else:
            dest.write_bytes(b"")

    def _write_text(self, rel: str, text: str) -> None:
        self.out.path(rel).write_text(text, encoding="utf-8", errors="surrogateescape")

    def _page(self, line: _Line, stem: str, **context: Any) -> str:
        rel = self._number(f"{line.dir}/{stem}.html")
        self._write_text(rel, pages.render(f"{stem}.html.jinja", cid=key_label(line.cid), **context))
        self.directory.register_file(line.key, rel)
        return rel

    def _guards(self, line: _Line) -> None:
        guards = pages.parse_guards(line.record.payload_text)
        if guards is None:
            self._problem(line, "dynamo_guards payload is not a JSON list of {code: ...}")
            return
        self._page(line, "dynamo_guards", guards=guards)

    def _output_code(self, line: _Line, meta: dict[str, Any]) -> None:
        filename = meta.get("filename")
        stem = file_stem(filename) if isinstance(filename, str) else None
        name = "inductor_output_code" if stem is None else f"inductor_output_code_{safe_component(stem)}"
        record = line.record
        if self.options.plain_text:
            self._payload_file(line, f"{line.dir}/{name}.txt")
            return
        rel = self._number(f"{line.dir}/{name}.html")
        dest = self.out.path(rel)
        if record.payload_md5 is None or record.payload is None:
            self._write_text(rel, pages.highlighted(""))
        else:
            self.derived.submit("code", record.payload_md5, self._payload_path(record.payload_md5), dest)
        if self.provenance is not None and record.payload_md5 is not None:
            self.provenance.output(
                line.key, rel.rpartition("/")[2], f"payloads/{record.payload_md5}.txt", pre_line=True
            )
        self.directory.register_file(line.key, rel)

    def _artifact(self, line: _Line, meta: dict[str, Any]) -> None:
        name, encoding = meta.get("name"), meta.get("encoding")
        if not isinstance(name, str) or not isinstance(encoding, str):
            self._problem(line, "artifact without a string name and encoding")
            return
        if encoding == "string":
            self._payload_file(line, f"{line.dir}/{safe_component(name)}.txt")
        elif encoding == "json":
            rel = self._number(f"{line.dir}/{safe_component(name)}.json")
            self._json_file(rel, line.record)
            if self.provenance is not None:
                self.provenance.output(line.key, rel.rpartition("/")[2], rel)
            self._register(line, rel)
        else:
            self._problem(line, f"artifact {name!r}: unsupported encoding {encoding!r}")

    def _json_file(self, rel: str, record: Record) -> None:
        """A json artifact pretty-printed like serde_json (by a worker, once per distinct payload)."""
        if record.payload_md5 is None or record.payload is None:
            self.out.path(rel).write_bytes(b"")
            return
        self.derived.submit("json", record.payload_md5, self._payload_path(record.payload_md5), self.out.path(rel))

    def _dump_file(self, line: _Line, name: str) -> None:
        eval_id = eval_with_key_id(name)
        rel = f"dump_file/eval_with_key_{eval_id}.html" if eval_id else f"dump_file/{safe_component(name)}.html"
        self._write_text(rel, pages.render("dump_file.html.jinja", lines=line.record.payload_text.splitlines()))
        self.directory.register_file(line.key, rel)

    def _compilation_metrics(self, line: _Line, m: dict[str, Any]) -> None:
        earlier = list(self.directory.entries(line.key))
        lookup = line.key
        specializations = self.specializations.pop(lookup, [])
        guards_fast = self.guards_fast.pop(lookup, [])
        stack = self.stack_index.get(None if line.cid is None else frame_key(line.cid))
        rel = self._page(
            line,
            "compilation_metrics",
            m=m,
            mini_stack=pages.mini_stack(m),
            output_files=[pages.output_file(e) for e in earlier],
            stack_html=pages.stack_box(stack, "Stack") if stack is not None else "",
            restart_reasons=_strings(m.get("restart_reasons")),
            compliant_custom_ops=_strings(m.get("compliant_custom_ops")),
            non_compliant_ops=_strings(m.get("non_compliant_ops")),
            specializations=specializations,
            guards_added_fast=guards_fast,
        )
        self.failures.extend(failures_of(line.cid, None if line.cid is None else rel, m))
        self.metrics.add(line.cid, m)

    def _problem(self, line: _Line, message: str) -> None:
        self.ctx.problems.add(ProblemKind.REPORT, line.record.line, message, str(self.ctx.reader.path))

    # -- end of pass ---------------------------------------------------------------------------

    def finish(self, ctx: RunContext) -> None:
        self.derived.close()
        if self.export is not None:
            self._write_text("index.html", self.export.index(self.directory, self.options.custom_header_html))
            return
        self._write_text(
            "failures_and_restarts.html", pages.render("failures_and_restarts.html.jinja", failures=self.failures)
        )
        pages.write_compile_directory(self.out, self.directory)
        provenance_pages: list[tuple[str, str]] = []
        if self.provenance is not None:
            provenance_pages = self.provenance.write(self.out, [k for k, _ in self.directory.items()])
        self._write_index(provenance_pages)
        pages.copy_raw_log(ctx.reader, self.out.path("raw.log"))

    def _write_index(self, provenance_pages: list[tuple[str, str]]) -> None:
        """index.html streamed to its file: it grows with the log (a row per output)."""
        directory = ((key_label(key), [_index_entry(e) for e in entries]) for key, entries in self.directory.items())
        render_to(
            self.out.path("index.html"),
            "index.html.jinja",
            custom_header_html=pages.trusted(self.options.custom_header_html),
            stack_trie_html=self.trie.render(self.metrics.status),
            unknown_stack_trie_html=self.unknown_trie.render(self.metrics.status) if self.unknown_trie else "",
            num_breaks=len(self.failures),
            has_chromium_events=self.has_chromium_events,
            directory=directory,
            provenance_pages=provenance_pages,
            collectives_parity_link=self.options.multi_rank,
        )


def _index_entry(entry: Entry) -> dict[str, Any]:
    return {
        "href": safe_href(entry.url) if entry.link else entry.url,
        "name": entry.name,
        "url": entry.url,
        "readable_url": entry.readable_url,
        "suffix": entry.suffix,
        "number": entry.number,
    }


def _obj(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _frames(stack: list[Any]) -> list[Frame]:
    frames = []
    for item in stack:
        if isinstance(item, dict):
            frames.append(
                Frame(
                    filename=item.get("filename") if isinstance(item.get("filename"), (int, str)) else None,
                    line=item.get("line") if isinstance(item.get("line"), int) else None,
                    name=item.get("name") if isinstance(item.get("name"), str) else None,
                    loc=item.get("loc") if isinstance(item.get("loc"), str) else None,
                    uninterned_filename=item.get("uninterned_filename")
                    if isinstance(item.get("uninterned_filename"), str)
                    else None,
                )
            )
    return frames
