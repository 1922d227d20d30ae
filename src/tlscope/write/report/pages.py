"""Small page builders shared by the report's handlers: each turns event data into a file's content."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import msgspec
from markupsafe import Markup, escape

from tlscope.analyse.tlparse.directory import CompileDirectory, Entry
from tlscope.analyse.tlparse.naming import simplify_filename, split_name
from tlscope.analyse.tlparse.stack import resolve_stack
from tlscope.format.json_boundary import decode
from tlscope.model.events import CompilationMetrics, GuardAddedFast, SymbolicShapeSpecialization
from tlscope.model.payloads import DynamoGuardsPayload
from tlscope.model.record import Record
from tlscope.read.source import LogSource
from tlscope.write.outdir import OutputDir
from tlscope.write.report import compiledir, jsonfmt
from tlscope.write.report.highlight import render_code
from tlscope.write.report.render import render, safe_href
from tlscope.write.report.stacks import details, format_stack

__all__ = ["highlighted", "render"]


def highlighted(code: str) -> str:
    return render_code(code)


def trusted(html: str) -> Markup:
    """--custom-header-html is the user's own markup, inserted as is (by design)."""
    return Markup(html)


def text(value: Any) -> str:
    """A logged value as the report prints it: null empty, numbers as serde_json prints them."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return jsonfmt.number(value)
    return str(value)


class StackRow(msgspec.Struct, frozen=True):
    """A row of a metrics page's specializations or guards-added-fast table."""

    symbol: str
    sources: list[str]
    value: str
    expr: str
    user_stack_html: Markup
    stack_html: Markup


def stack_row(event: SymbolicShapeSpecialization | GuardAddedFast, record: Record) -> StackRow:
    """A specialization or guard-added-fast row, with its stacks resolved now (tables grow)."""
    spec = event if isinstance(event, SymbolicShapeSpecialization) else None
    return StackRow(
        symbol="" if spec is None else text(spec.symbol),
        sources=[] if spec is None else [text(s) for s in spec.sources or ()],
        value="" if spec is None else text(spec.value),
        expr=text(event.expr) if isinstance(event, GuardAddedFast) else "",
        user_stack_html=format_stack(resolve_stack(event.user_stack, record), "User Stack"),
        stack_html=format_stack(resolve_stack(event.stack, record), "Framework Stack"),
    )


def mini_stack(m: CompilationMetrics) -> Markup:
    """The one-frame stack of the compiled function (only when name, file and line are known)."""
    name, filename, lineno = m.co_name, m.co_filename, m.co_firstlineno
    if name is None or filename is None or lineno is None:
        return Markup("")
    inner = Markup("<li>{}:{} in {}<br>&nbsp;&nbsp;&nbsp;&nbsp;</li>\n").format(
        simplify_filename(str(filename)), lineno, name
    )
    return details("Stack", inner)


class OutputRow(msgspec.Struct, frozen=True):
    """An "Output files" row of a metrics page; hrefs are relative to OUT (the page has base ..)."""

    href: str | None
    short: str
    number: int


def output_file(entry: Entry) -> OutputRow:
    return OutputRow(
        href=safe_href(entry.url) if entry.link else entry.url,
        short=entry.name.rpartition("/")[2],
        number=entry.number,
    )


_GUARDS = msgspec.json.Decoder(DynamoGuardsPayload)


def parse_guards(text: str) -> list[str] | None:
    """The guard codes of a dynamo_guards payload, or None if it is not tlparse's shape."""
    try:
        guards = decode(text, _GUARDS)
    except ValueError:  # not JSON, or not a list of {code: string}
        return None
    return [g.code for g in guards]


def reformat_json(payload: bytes | None) -> bytes:
    """A json artifact pretty-printed like serde_json; left as it was when it is not JSON."""
    data = payload or b""
    try:
        return jsonfmt.pretty_bytes(jsonfmt.loads(data))
    except (ValueError, RecursionError):  # UnicodeError is a ValueError
        return data


def readable_name(rel: str) -> str:
    """`<dir>/<stem>_readable.html`, the readable page of the stack-traces JSON at `rel`."""
    parent, slash, last = rel.rpartition("/")
    return f"{parent}{slash}{split_name(last)[0]}_readable.html"


def readable_page(payload: bytes) -> bytes:
    """The readable page of a kernel stack-traces JSON payload (checked by json_error), as written
    (a page job: derived.py)."""
    return readable_stack_traces(jsonfmt.loads(payload)).encode("utf-8")


def readable_stack_traces(value: Any) -> str:
    """The readable page of parsed kernel stack-traces JSON: each kernel with its traces.

    Kernels share their traces (the big trace's 32 pages show 17,566 traces, 25 distinct texts):
    each distinct text is unescaped and escaped once a page (`markupsafe.escape`, autoescape's
    own function; the template's autoescape then leaves the Markup as it is). Done per trace,
    that was a third of the page's time.
    """
    kernels = []
    shown: dict[str, Markup] = {}
    if isinstance(value, dict):
        for kernel in sorted(value):
            traces = value[kernel]
            texts = []
            for t in traces if isinstance(traces, list) else ():
                if isinstance(t, str):
                    html = shown.get(t)
                    if html is None:
                        html = shown[t] = escape(t.replace("\\n", "\n").rstrip("\n"))
                    texts.append(html)
            kernels.append((kernel, texts))
    return render("readable_stack_traces.html.jinja", kernels=kernels)


def write_compile_directory(out: OutputDir, directory: CompileDirectory) -> None:
    # One key at a time: as one document it was the largest peak of a long log's run.
    compiledir.write(out.path("compile_directory.json"), directory)


class RawLogCopy:
    """raw.log copied by a thread beside the pass, from the start of the run.

    The copy is the kernel's (`sendfile`) or, for a .gz input, zlib's: neither holds the GIL, so
    it runs on another core while the main pass reads the log (a 1 GB log's copy took ~0.8 s of
    wall time at the end of the run). `wait` joins it and raises what it raised.
    """

    def __init__(self, source: Path, dest: Path) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._copy, args=(source, dest), name="tlscope-raw-log", daemon=True)
        self._thread.start()

    def _copy(self, source: Path, dest: Path) -> None:
        try:
            copy_raw_log(source, dest)
        except BaseException as err:  # handed to the main thread by `wait`
            self._error = err

    def wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


def copy_raw_log(source: Path, dest: Path) -> None:
    """raw.log: the input streamed, never held in memory; a .gz input is written decompressed."""
    with LogSource(source) as log:
        if not log.compressed:
            shutil.copyfile(source, dest)
            return
        with dest.open("wb") as target:
            shutil.copyfileobj(log.stream, target, 1024 * 1024)
