"""The terminal face of the summary (`tlscope summary`): rich tables that fit 80 columns.

Log-derived strings go through `Text` (never markup), so a reason holding `[bold]` prints as is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tlscope import terminal
from tlscope.analyse.fold.export_words import where_text
from tlscope.analyse.fold.guards import input_name
from tlscope.analyse.fold.vllm import vllm_line
from tlscope.analyse.ranks.divergence import said_sentences
from tlscope.analyse.ranks.job_answers import answer_lines
from tlscope.analyse.ranks.stragglers import straggler_lines, straggler_title
from tlscope.analyse.trace_summary import TOP, CompileRow, Summary
from tlscope.format.compiles import Fix, InputShapes, ShapeCell, Symbol, Vllm
from tlscope.format.status import severity, status_words


def render(summary: Summary, title: str, *, width: int | None = None, console: Console | None = None) -> None:
    # Its text is made visible (tlscope.terminal): log strings hold control characters at times.
    console = console or terminal.console(width=width or _width(), highlight=False, soft_wrap=False)
    statuses = ", ".join(f"{n} {status_words(s, n)}" for s, n in summary.statuses.items()) or "none"
    head = Text(f"{title}\n", style="bold")
    if summary.ranks:
        console.print(head, end="")
        _print_ranks(summary, console, title)
        head = Text(f"Details of rank {summary.rank} (--rank N for another)\n", style="bold")
    # Two lines of their own rather than one that wraps at 80 columns mid-phrase.
    head.append(f"torch {summary.torch_version or '?'} · {summary.compile_time_s:.2f} s compiling\n")
    lines = []
    if summary.exports:
        exports = Counter(call.status.replace("_", " ") for call in summary.exports)
        calls = f"{len(summary.exports)} export call{'s' if len(summary.exports) != 1 else ''}"
        lines.append(f"{calls}: {', '.join(f'{n} {s}' for s, n in exports.most_common())}")
    if summary.aot_inductor:
        said = Counter(status_words(c.status) for c in summary.aot_inductor).most_common()
        compiles = f"{len(summary.aot_inductor)} AOT Inductor compile{'s' if len(summary.aot_inductor) != 1 else ''}"
        lines.append(f"{compiles}: {', '.join(f'{n} {s}' for s, n in said)}")
    if summary.vllm:
        lines.append(vllm_line(summary.vllm))
    if summary.compiles or not lines:
        lines.append(f"{_compile_count(summary.compiles)}: {statuses}")
    # The first answers (analyse/headline.py), as `tlscope LOG` says them under its counts.
    lines += [f"  {line}" for line in summary.headline]
    head.append("\n".join(lines))
    console.print(head)
    if summary.exports:
        console.print(_exports(summary))
    if summary.aot_inductor:
        console.print(_aot_inductor(summary))
    for found in summary.vllm[:TOP]:
        console.print(_vllm(found))
    if summary.exports_note:
        console.print(Text(summary.exports_note, style="yellow"))
    for table in (
        _compiles(summary),
        _breaks(summary),
        _recompiles(summary),
        _failures(summary),
        _phases(summary),
        _functions(summary),
        _faster(summary),
        _sizes(summary),
    ):
        if table.row_count:
            console.print(table)
        if table.title == "Compiles":
            _print_reused(summary, console)
        if table.title == "Recompiles":
            for extra in (*_shapes(summary), _symbols(summary), _dynamic(summary), _settings(summary)):
                if isinstance(extra, Text) or extra.row_count:
                    console.print(extra)
    console.print(_footer(summary))


def _print_ranks(summary: Summary, console: Console, job: str) -> None:
    """Every rank first: a line per rank, then how they diverge, one sentence per group."""
    table = _table(
        f"{len(summary.ranks)} ranks", "rank", "compiles", "time s", "breaks", "recompiles", "failures", "cache hits"
    )
    for line in summary.ranks:
        failures = Text(str(line.failures), style="red" if line.failures else "")
        cells = (line.compiles, f"{line.compile_time_s:.2f}", line.graph_breaks, line.recompiles)
        table.add_row(str(line.rank), *map(str, cells), failures, str(line.cache_hits))
    console.print(table)
    _print_rank_answers(summary, console)
    _print_stragglers(summary, console)
    divergence = summary.divergence
    said = said_sentences(divergence, job) if divergence is not None else []
    if divergence is None or not divergence.diverges:
        # "Agree" only when nothing below says otherwise (their collectives may still differ).
        agree = "Ranks agree: every" if not said else "Every"
        console.print(Text(f"{agree} rank compiled the same compile ids.\n"))
    for listed, sentences in said:
        # A collective that differs fails or hangs the job: red; the rest explain.
        text = Text(listed.title + ":\n", style="bold red" if listed.list == "collectives" else "bold yellow")
        for sentence in sentences:
            text.append("  " + sentence + "\n", style="")
        console.print(text)


def _print_rank_answers(summary: Summary, console: Console) -> None:
    """The ranks' first answers, each line once with the ranks that say it (ranks.json's)."""
    answers = summary.rank_answers
    if answers is None or not answers.lines:
        return
    text = Text("First answers, all ranks:\n", style="bold")
    for line in answer_lines(answers):
        text.append(f"  {line}\n", style="")
    console.print(text)


def _print_stragglers(summary: Summary, console: Console) -> None:
    slow = summary.stragglers
    if slow is None or not slow.ranks:
        return
    text = Text(straggler_title(slow) + "\n", style="bold yellow")
    for line in straggler_lines(slow):
        text.append(f"  {line}\n", style="")
    console.print(text)


def _print_reused(summary: Summary, console: Console) -> None:
    """Compile ids whose earlier compile failed: the table shows their last, working, compile."""
    for reused in summary.reused:
        if reused.failed:
            text = Text(f"{reused.id} also held a failed compile ", style="yellow")
            text.append(f"({', '.join(reused.failed)}, {reused.failed_time_s:.2f} s)", style="red")
            text.append(" before a later compile of the same id worked")
        else:
            text = Text(f"{reused.id} held {reused.compiles} compiles", style="yellow")
        if len(set(reused.functions)) > 1:
            text.append(f", of {', '.join(reused.functions)}")
        text.append(f": {reused.why}")
        console.print(text)


def _width() -> int:
    import shutil

    return min(max(shutil.get_terminal_size((80, 24)).columns, 60), 160)


def _cut(text: str | None) -> Text:
    """The first line of a log-derived text, whole: the table folds it, never cuts it (issue 20)."""
    value = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return Text(value)


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", expand=False, pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _compiles(summary: Summary) -> Table:
    rows = summary.compiles
    backward = any(row.backward_s for row in rows)
    # A compile's time is its backward's too when it has one (the run's total counts both).
    table = _table(
        "Compiles", "id", "status", "function", "time s", *(("of it backward",) if backward else ()), "breaks"
    )
    shown = _shown_compiles(rows)
    for row in shown:
        time = f"{row.duration_s + (row.backward_s or 0.0):.2f}" if row.duration_s is not None else ""
        of_it = (f"{row.backward_s:.2f}" if row.backward_s else "",) if backward else ()
        style = {"failed": "red", "graph_break": "yellow", "restarted": "yellow"}.get(row.status, "")
        function = _cut(row.function)
        if row.capture:  # torch.compile(...).aot_compile or strict export: no function of its own logged
            function.append(f"{' ' if row.function else ''}({row.capture})", style="dim")
        if row.called_from:
            function.append(f"\n← {row.called_from}", style="dim")
        table.add_row(row.id, Text(row.status, style=style), function, time, *of_it, str(row.graph_breaks or ""))
    if len(shown) < len(rows):
        hidden = Counter(row.status for row in rows) - Counter(row.status for row in shown)
        said = ", ".join(f"{n} {status_words(s, n)}" for s, n in sorted(hidden.items(), key=lambda i: severity(i[0])))
        table.caption = f"{len(rows) - len(shown)} more compiles not shown: {said} (--json lists every one)"
    return table


def _shown_compiles(rows: list[CompileRow]) -> list[CompileRow]:
    """Every compile when they fit, else the 2 x TOP most severe of those not ok (a failure before a
    restart), in compile order: the ones to look at first, never cut for being late in the log."""
    if len(rows) <= 2 * TOP:
        return rows
    ranked = sorted((i for i, r in enumerate(rows) if r.status != "ok"), key=lambda i: (severity(rows[i].status), i))
    kept = set(ranked[: 2 * TOP])
    return [row for i, row in enumerate(rows) if i in kept]


def _breaks(summary: Summary) -> Table:
    table = _table("Distinct graph breaks", "count", "reason", "where")
    for group in summary.graph_breaks[:TOP]:
        where = f"{(group.user_frame.file or '?').rsplit('/', 1)[-1]}:{group.user_frame.line or '?'}"
        reason = _cut(group.reason)
        if isinstance(group.fix, Fix):  # tlscope's fix first (1.50), then torch's own hints
            reason.append_text(_fix(group.fix))
        for hint in group.hints:  # torch's own fix hints, beside the break they belong to
            reason.append(f"\nhint: {hint}", style="cyan")
        if group.docs_url:
            reason.append(f"\n{group.docs_url}", style="dim")
        table.add_row(str(group.count), reason, Text(where))
    return table


def _compile_count(rows: Sequence[CompileRow]) -> str:
    """`3 compiles`; `2 compile ids, 6 compiles (…)` where ids held several compiles, as the
    slowest compile's line counts them."""
    ids, made = len(rows), sum(r.compiles for r in rows)
    said = f"{ids} compile{'s' if ids != 1 else ''}"
    if made > ids:  # torch._dynamo.reset(), or strict export's next call, numbers ids again
        said = f"{ids} compile id{'s' if ids != 1 else ''}, {made} compiles (an id numbered again holds several)"
    return said


def _recompiles(summary: Summary) -> Table:
    table = _table("Recompiles", "id", "why (the recommended guard failure)")
    for row in summary.recompiles[: 2 * TOP]:
        why = _cut(row.explanation)
        for change in row.changes[:3]:
            why.append("\n  " + change)
        if row.fix is not None:
            why.append_text(_fix(row.fix))
        table.add_row(row.id, why)
    return table


def _fix(fix: Fix) -> Text:
    """What to change (compiles.json `recompile.fix`): the line to add, where, and why."""
    # `change_code`: `code` is the user's line to change, `where` that line; else a line to add before `where`.
    changes = fix.kind == "change_code"
    text = Text("\n  fix: change the line " if changes else "\n  fix: ", style="green")
    where = fix.where
    if changes and where is not None:
        text.append(f"{(where.file or '?').rsplit('/', 1)[-1]}:{where.line}", style="bold green")
        text.append(f"  {fix.code.strip()}", style="dim")
    else:
        text.append(fix.code, style="bold green")
    if where is not None and not changes:
        text.append(f"\n    {'at' if fix.kind == 'dynamic_false' else 'before'} ")
        text.append(f"{(where.file or '?').rsplit('/', 1)[-1]}:{where.line}")
        if where.code:
            text.append(f"  {where.code.strip()}", style="dim")
    text.append(f"\n    {fix.why}", style="dim")
    return text


#: The vLLM config keys said in its table's title, in this order, when logged.
_VLLM_SAID = ("model", "prefix", "backend", "mode", "cudagraph_mode", "compile_sizes")


def _vllm(found: Vllm) -> Table:
    """One vLLM compile (compiles.json `vllm`): its config's main keys, then each compile range's
    sentence, decided when the log was read."""
    said = ", ".join(f"{key} {found.config[key]}" for key in _VLLM_SAID if key in found.config)
    where = f" at {found.compile_id}" if found.compile_id else ""
    table = _table(f"vLLM compile {found.index}{where}" + (f": {said}" if said else ""), "compile range", "pieces")
    for at in found.ranges[:TOP]:
        which, _, pieces = at.sentence.partition(": ")
        table.add_row(which, pieces)
    if len(found.ranges) > TOP:
        table.caption = f"{len(found.ranges) - TOP} more ranges in compiles.json vllm"
    return table


def _aot_inductor(summary: Summary) -> Table:
    """Each AOT Inductor compile (compiles.json `aot_inductor`): how it ended, where it was called,
    how long it took, what it made."""
    table = _table("AOT Inductor", "#", "status", "called at", "time s", "made")
    style = {"failed": "red", "ok": "green"}
    for aoti in summary.aot_inductor[:TOP]:
        time = f"{aoti.time.duration_s:.2f}" if aoti.time is not None and aoti.time.duration_s is not None else ""
        made = Text(f"{len(aoti.graphs)} graphs, {len(aoti.code)} code files")
        if aoti.failure is not None:
            made = Text(f"{aoti.failure.type}: {aoti.failure.reason}", style="red")
        called = where_text(aoti.user_frame) if aoti.user_frame is not None else ""
        table.add_row(str(aoti.index), Text(aoti.status, style=style.get(aoti.status, "")), called, time, made)
    if len(summary.aot_inductor) > TOP:
        table.caption = f"{len(summary.aot_inductor) - TOP} more in compiles.json aot_inductor"
    return table


def _exports(summary: Summary) -> Table:
    """Each torch.export call: its answer (compiles.json `exports[].sentence`), then its issues
    with their fixes; the sentences are the format's, decided when the log was read."""
    table = _table("torch.export", "#", "status", "what happened")
    style = {"failed": "red", "exported_with_issues": "yellow", "exported": "green", "traced": "blue"}
    for call in summary.exports[:TOP]:
        text = Text(call.sentence)
        if call.called_at is not None:
            text.append(f"\n  called at {where_text(call.called_at)}", style="dim")
        for issue in call.issues[:TOP]:
            if call.status != "failed" or issue.sentence not in call.sentence:
                text.append(f"\n- {issue.title}: ", style="bold")
                text.append(issue.sentence + (f" ({issue.count} times)" if issue.count > 1 else ""))
            if issue.fix is not None:
                fix = issue.fix
                text.append("\n  fix: ", style="green")
                if fix.kind == "change_code" and fix.where is not None:
                    text.append(f"change the line {where_text(fix.where)}: ")
                    text.append(fix.code, style="bold green")
                else:
                    text.append(fix.code, style="bold green")
                    text.append(f" before {where_text(fix.where)}" if fix.where is not None else "")
                text.append(f"\n    {fix.why}", style="dim")
            if issue.payload is not None:
                text.append(f"\n  the graph traced so far: log line {issue.payload.log_line}", style="dim")
        if len(call.issues) > TOP:
            text.append(f"\n{len(call.issues) - TOP} more issues in compiles.json exports", style="dim")
        table.add_row(str(call.index), Text(call.status.replace("_", " "), style=style.get(call.status, "")), text)
    if len(summary.exports) > TOP:
        table.caption = f"{len(summary.exports) - TOP} more calls in compiles.json exports"
    return table


def _shapes(summary: Summary) -> list[Table | Text]:
    """Did the sizes change? One table per frame compiled more than once; `*` marks a changed
    dimension. A frame whose inputs never changed gets one line instead of a table of equal rows
    (its recompiles were about something else: their reasons are in the table above)."""
    tables: list[Table | Text] = []
    # A frame with one graph (its other compiles failed or broke before one) has nothing to compare.
    for frame in [f for f in summary.input_shapes if len(f.compile_ids) > 1][:TOP]:
        name = frame.function.name if frame.function is not None else "?"
        if not any(_changed(cell) for row in frame.inputs for cell in row.cells):
            one = len(frame.inputs) == 1
            inputs = "its input kept its" if one else f"its {len(frame.inputs)} inputs kept their"
            count = len(frame.compile_ids)
            compiles = "both compiles" if count == 2 else f"all {count} compiles"
            ids = ", ".join(frame.compile_ids[:TOP])
            tables.append(
                Text(
                    f"Did the sizes change? {name} (frame {frame.frame}): no, {inputs} dtype, shape and stride "
                    f"in {compiles} ({ids})."
                )
            )
            continue
        table = _table(
            f"Did the sizes change? {name} (frame {frame.frame})", "id", "input", "dtype", "shape, stride", "changed"
        )
        table.caption = "* changed since the compile before; ← the size or stride the recompile's reason names"
        # Only the inputs that changed: a model's parameters, hundreds of them, keep theirs.
        kept: list[InputShapes] = []
        for row in frame.inputs:
            if not any(_changed(cell) for cell in row.cells):
                kept.append(row)
                continue
            for cell in row.cells[: 2 * TOP]:
                table.add_row(cell.compile_id, Text(_row_label(row)), *_cell(cell))
        if kept:
            names = ", ".join(_row_label(row) for row in kept[:3]) + (", …" if len(kept) > 3 else "")
            table.caption += f"; {len(kept)} other input{'s' if len(kept) != 1 else ''} ({names}) unchanged throughout"
        tables.append(table)
    return tables


def _row_label(row: InputShapes) -> str:
    return input_name(row.source) if row.source else row.name


def _changed(cell: ShapeCell) -> bool:
    return bool(cell.changed_dims or cell.changed_strides or cell.dtype_changed or cell.absent)


def _symbols(summary: Summary) -> Table:
    """Where each dynamic dimension comes from: its source, range, the call that passed it, and
    what constrained it (specialised, a recompile its range guard failed)."""
    table = _table("Dynamic dimensions", "id", "symbol", "source", "range", "passed at")
    # An unbacked symbol torch's later passes made again is the one it stands for: said once, in the caption.
    own = [s for s in summary.symbols if s.retrace_of is None]
    shown = own[: 2 * TOP]
    for symbol in shown:
        where = symbol.entered_at or symbol.traced_at
        at = Text(f"{(where.file or '?').rsplit('/', 1)[-1]}:{where.line}" if where is not None else "")
        for spec in symbol.specializations[:1]:
            frame = spec.user_frame
            line = f" at {(frame.file or '?').rsplit('/', 1)[-1]}:{frame.line}" if frame is not None else ""
            at.append(f"\nspecialised to {spec.value}{line}", style="yellow")
            if spec.fix is not None:
                at.append(f"\n{_fix_text(spec.fix)}", style="green")
        if symbol.failed_in:
            at.append(f"\nits range failed {', '.join(symbol.failed_in)}", style="yellow")
        if symbol.fix is not None and symbol.guards:
            at.append(f"\nguarded: {symbol.guards[0]}\n{_fix_text(symbol.fix)}", style="yellow")
        if symbol.why is not None:
            at.append(f"\ndynamic: {WHY_WORDS.get(symbol.why, symbol.why)}")
        table.add_row(symbol.compile_id or "", symbol.symbol, Text(_symbol_source(symbol)), symbol.range or "", at)
    notes = []
    if len(shown) < len(own):
        notes.append(f"{len(own) - len(shown)} more in compiles.json symbols")
    again = len(summary.symbols) - len(own)
    if again:
        notes.append(
            f"{again} unbacked symbol{'s' if again != 1 else ''} made again by AOTAutograd and Inductor "
            "(compiles.json symbols[].retrace_of) not shown"
        )
    table.caption = "; ".join(notes) or None
    return table


#: `symbols[].why` in words.
WHY_WORDS = {
    "marked": "marked (mark_dynamic)",
    "maybe_marked": "marked (maybe_mark_dynamic)",
    "all_dynamic": "dynamic=True",
    "dynamic_shapes": "torch.export's dynamic_shapes",
    "configured": "TORCH_COMPILE_DYNAMIC_SOURCES",
    "automatic": "automatic",
    "profile": "the PGO profile read",
    "data_dependent": "data-dependent",
}


def _symbol_source(symbol: Symbol) -> str:
    """Dynamo's source of a backed symbol; an unbacked one's kind and the operator that made it."""
    if symbol.source is not None:
        return symbol.source
    return f"{symbol.kind}: {symbol.op}()" if symbol.op is not None else symbol.kind


def _dynamic(summary: Summary) -> Text:
    """Why inputs are dynamic that the code never marked, and the setting that asks for it
    (compiles.json `dynamic`'s sentence, decided in analyse/fold/dynamic.py)."""
    found = summary.dynamic
    if found is None:
        return Text("")
    text = Text("Why dynamic? ", style="bold")
    return text.append(found.sentence)


def _settings(summary: Summary) -> Text:
    """The compiles that ran under other settings than the first (compiles.json `settings`)."""
    found = summary.settings
    if found is None:
        return Text("")
    return Text("Other settings: ", style="bold").append(found.sentence)


def _fix_text(fix: Fix) -> str:
    """A specialisation's or guard's fix in one line: the change, and the user line it is about."""
    at = f"{(fix.where.file or '?').rsplit('/', 1)[-1]}:{fix.where.line}" if fix.where is not None else ""
    if fix.kind == "dynamic_false":
        return f"fix: {fix.code}" + (f" (or change {at})" if at else "")
    return f"fix: change the line {at}" if at else f"fix: {fix.code}"


def _cell(cell: ShapeCell) -> tuple[Text, Text, Text]:
    if cell.absent:
        return Text(""), Text("absent", style="dim"), Text("")
    dims = ", ".join(d + ("*" if i in cell.changed_dims else "") for i, d in enumerate(cell.shape or []))
    strides = ", ".join(d + ("*" if i in cell.changed_strides else "") for i, d in enumerate(cell.stride or []))
    said = []
    if cell.dtype_changed:
        said.append("dtype")
    said += [f"dim {d}" + (" ←" if d == cell.reason_dim else "") for d in cell.changed_dims]
    said += [
        f"stride {d}" + (" ←" if d == cell.reason_stride else "")
        for d in cell.changed_strides
        if d not in cell.changed_dims or d == cell.reason_stride
    ]
    if cell.reason_dim is not None and cell.reason_dim not in cell.changed_dims:
        said.append(f"← dim {cell.reason_dim}")
    if cell.reason_stride is not None and cell.reason_stride not in cell.changed_strides:
        said.append(f"← stride {cell.reason_stride}")
    dtype = Text((cell.dtype or "") + ("*" if cell.dtype_changed else ""))
    return dtype, Text(f"[{dims}] [{strides}]"), Text(", ".join(said), style="yellow" if said else "")


def _failures(summary: Summary) -> Table:
    table = _table("Failures", "id", "type", "reason", "user frame")
    for entry in summary.failures[:TOP]:
        failure = entry.failure
        assert failure is not None
        frame = failure.user_frame
        where = f"{(frame.file or '?').rsplit('/', 1)[-1]}:{frame.line}" if frame else ""
        reason = _cut(failure.reason)
        for hint in failure.hints:  # torch's own fix hints (compiles.json 1.12), as a break's are shown
            reason.append(f"\nhint: {hint}", style="cyan")
        if failure.docs_url:
            reason.append(f"\n{failure.docs_url}", style="dim")
        table.add_row(entry.id, Text(failure.type, style="red"), reason, Text(where))
    return table


def _phases(summary: Summary) -> Table:
    table = _table("Slowest phases", "phase", "seconds", "compiles")
    for row in summary.slowest_phases[:5]:
        table.add_row(row.name, f"{row.seconds:.2f}", str(row.compiles))
    return table


def _functions(summary: Summary) -> Table:
    table = _table(
        "Slowest functions to compile (compile_time.html draws them)", "function", "where", "seconds", "compiles"
    )
    for row in summary.slowest_functions[:5]:
        where = f"{(row.file or '?').rsplit('/', 1)[-1]}:{row.line or '?'}"
        table.add_row(_cut(row.function), Text(where), f"{row.seconds:.2f}", str(row.compiles))
    return table


def _faster(summary: Summary) -> Table:
    """Each slow compile's `time_fix` (1.49), as the Recompiles table says a recompile's fix."""
    table = _table("To compile faster", "id", "change")
    for row in summary.compiles:
        fix = row.time_fix
        if fix is None:
            continue
        said = Text(fix.code, style="cyan")
        if fix.where is not None:
            said.append(f"  before {(fix.where.file or '?').rsplit('/', 1)[-1]}:{fix.where.line}", style="cyan")
        said.append(f"\n{fix.why}", style="dim")
        table.add_row(row.id, said)
    return table


def _sizes(summary: Summary) -> Table:
    size = summary.log_size
    table = _table(f"Log size: {size.total_bytes:,} bytes, {size.total_lines:,} lines", "event key", "bytes", "%")
    for key, stats in list(size.by_event_key.items())[:8]:
        table.add_row(key, f"{stats.bytes:,}", f"{100 * stats.bytes / max(size.total_bytes, 1):.1f}")
    if size.other.bytes:
        table.add_row(
            "other (no event)", f"{size.other.bytes:,}", f"{100 * size.other.bytes / max(size.total_bytes, 1):.1f}"
        )
    return table


#: Compile ids the terminal lists per bypass (`--json` has up to analyse/caches.py's MAX_IDS).
BYPASS_IDS = 6


def _footer(summary: Summary) -> Text:
    cache = summary.cache
    rate = f"{100 * cache.hit_rate:.0f}%" if cache.hit_rate is not None else "no lookups"
    text = Text(f"Cache: {cache.hits} hits, {cache.misses} misses, {cache.bypasses} bypasses ({rate})\n")
    if cache.saved_s is not None:
        text.append(f"  the hits saved {cache.saved_s:.2f} s of compiling, as torch logged it\n")
    if cache.missed_s is not None:
        text.append(f"  the misses cost {cache.missed_s:.2f} s of Inductor compiling, which a warm cache saves\n")
    if cache.bypassed:
        text.append("  bypassed, so every run compiles these again:\n")
    for group in cache.bypassed:
        # A few ids a line: a run that turned a cache off bypasses it in every compile.
        shown = group.compile_ids[:BYPASS_IDS]
        more = f" and {group.compiles - len(shown)} more" if group.compiles > len(shown) else ""
        text.append(f"    {group.cache}: {group.reason} ({', '.join(shown)}{more})\n")
    problems = ", ".join(f"{n} {k}" for k, n in summary.problems.items()) or "none"
    text.append(f"Problems: {problems}")
    return text
