"""compiles.json, the distinct graph breaks and log_size.json against real torch logs (issue 12).

Every figure is checked against the log itself, read here with a small independent parser
(it shares no code with tlscope's reader): the corpus (torch 2.13 logs made by corpus/) and
tlparse's public traces in ../shared.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, TLPARSE_TRACES, require_shared

from tlscope.pipeline.single import run
from tlscope.write.outdir import OutputDir
from tlscope.write.run_options import ParseOptions

CORPUS_LOGS = sorted(p for p in CORPUS.rglob("*.log.gz") if "muxed" not in p.parts)
SHARED_LOGS = sorted(
    p
    for p in (TLPARSE_TRACES / "inputs").glob("*")
    if p.is_file() and p.suffix in (".log", ".txt") and TLPARSE_TRACES.is_dir()
)
LOGS = [*CORPUS_LOGS, *SHARED_LOGS]
IDS = [p.relative_to(CORPUS if p.is_relative_to(CORPUS) else TLPARSE_TRACES).as_posix() for p in LOGS]

_ENVELOPE = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]]*\] (?P<json>\{.*)$")
_AT = re.compile(r"^Graph break in user code at (.+):(\d+)\s*$")
_LIBRARY = re.compile(r"(^|/)(site-packages|dist-packages|torch)/|(^|/)lib/python\d[\d.]*/")


def log_text(path: Path) -> bytes:
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as f:
            return f.read()
    return path.read_bytes()


def envelopes(path: Path) -> list[tuple[dict[str, Any], str]]:
    """(metadata, payload) of every line that is a JSON envelope; other lines are skipped."""
    found: list[tuple[dict[str, Any], list[str]]] = []
    for line in log_text(path).decode("utf-8", "replace").split("\n"):
        if line.startswith("\t") and found:
            found[-1][1].append(line[1:])
            continue
        match = _ENVELOPE.match(line.rstrip("\r"))
        if match is None:
            continue
        try:
            meta = json.loads(match["json"])
        except ValueError:
            continue
        if isinstance(meta, dict):
            found.append((meta, []))
    return [(meta, "\n".join(lines)) for meta, lines in found]


def restart_breaks(records: list[tuple[dict[str, Any], str]]) -> Counter[tuple[str, str | None, int | None]]:
    """An older torch's breaks (FORMAT.md "Distinct graph breaks", 1.47): each metrics record's
    restart reasons, at the line of the next resume function of the same function and file."""
    metrics = [m["compilation_metrics"] for m, _ in records if isinstance(m.get("compilation_metrics"), dict)]
    resume = re.compile(r"torch_dynamo_resume_in_(.+)_at_(\d+)")
    found: Counter[tuple[str, str | None, int | None]] = Counter()
    for i, record in enumerate(metrics):
        name, file = record.get("co_name") or "", record.get("co_filename")
        base = resume.fullmatch(name)[1] if resume.fullmatch(name) else name
        later = (resume.fullmatch(r.get("co_name") or "") for r in metrics[i + 1 :] if r.get("co_filename") == file)
        line = next((int(m[2]) for m in later if m is not None and m[1] == base), record.get("co_firstlineno"))
        for reason in dict.fromkeys(record.get("restart_reasons") or []):
            found[(reason.strip().splitlines()[0].strip("'\" "), file, line)] += 1
    return found


def display(meta: dict[str, Any]) -> str:
    """A compile id's display form, as FORMAT.md spells it."""
    fields = ("frame_id", "frame_compile_id", "attempt", "compiled_autograd_id")
    frame, fcid, attempt, ca = (meta.get(k) for k in fields)
    head = "" if ca is None else f"!{ca}/"
    text = "-" if frame is None else str(frame)
    text += "/" + ("-" if fcid is None else str(fcid))
    return f"[{head}{text}{'' if not attempt else f'_{attempt}'}]"


def owners(records: list[tuple[dict[str, Any], str]]) -> list[str]:
    """Each record's compile as compiles.json reads it (FORMAT.md "Fullgraph captures" and "AOT
    Inductor compiles"): its own compile id, except that a record outside any compile id inside an
    open `fullgraph_capture` span, or a metrics record after the span closed, is the compile the
    span traced last (until a compile of its own or another capture starts), and likewise for a
    `compile_fx_aot` span, whose records are `aot_inductor[N]`, the Nth such span."""
    found: list[str] = []
    span_open, captured = False, None
    aoti_open, aoti, spans = False, None, 0
    for meta, payload in records:
        own = display(meta)
        if meta.get("frame_id") is not None or meta.get("compiled_autograd_id") is not None:
            captured = own if span_open else None
            aoti = aoti if aoti_open else None
            found.append(own)
            continue
        if "chromium_event" in meta:
            try:
                event = json.loads(payload)
            except ValueError:
                event = None
            name, ph = (event.get("name"), event.get("ph")) if isinstance(event, dict) else (None, None)
            if name == "fullgraph_capture":
                span_open, captured = (True, None) if ph == "B" else (span_open and ph != "E", captured)
            elif name == "compile_fx_aot":
                if ph == "B":
                    aoti_open, aoti, spans = True, f"aot_inductor[{spans}]", spans + 1
                elif ph == "E":
                    aoti_open = False
            found.append(own)
            continue
        metrics = any(isinstance(meta.get(key), dict) for key in METRICS_KEYS)
        if captured is not None and (span_open or metrics):
            found.append(captured)
        elif aoti is not None and (aoti_open or metrics):
            found.append(aoti)
        else:
            found.append(own)
    return found


def with_aot_inductor(compiles: dict[str, Any]) -> list[dict[str, Any]]:
    """compiles.json's entries, then its AOT Inductor compiles named as `owners` names them."""
    aoti = [{**c, "id": f"aot_inductor[{c['index']}]"} for c in compiles.get("aot_inductor", [])]
    return [*compiles["compiles"], *aoti]


def break_key(payload: str) -> tuple[str, str | None, int | None]:
    """(reason headline, user file, user line) of a graph-break payload, read independently."""
    lines = payload.split("\n")
    at = _AT.match(lines[0]) if lines else None
    reason = ""
    for i, line in enumerate(lines):
        if line.startswith("Graph Break Reason:"):
            rest = line[len("Graph Break Reason:") :].strip()
            if rest and not rest.startswith(("Encountered graph break", "Failed to handle graph break gracefully")):
                reason = rest
            else:
                reason = next((t.strip() for t in lines[i + 1 :] if t.strip()), rest)
            # The user's own exception is named only in the debug context.
            raised = re.search(r"Developer debug context: raised exception (.+)", payload)
            if reason == "Observed exception" and raised:
                reason = f"{reason}: {raised[1].strip()}"
            # A skipped function is named only in the debug context, before the traceback: a
            # module's own function with its module (format 1.46: `time.time`, not `time`).
            own = payload.split("Traceback")[0]
            skipped = re.search(r"debug context: module: ([^\n]*?), qualname: ([\w.<>]+)", own)
            if reason == "Attempted to call function marked as skipped" and skipped:
                plain = "." not in skipped[2] and re.fullmatch(r"[\w.]+", skipped[1])
                reason = f"{reason}: {skipped[1] + '.' if plain else ''}{skipped[2]}"
            # A disabled function too (1.46), as its repr: `<function hook at 0x…>`.
            disabled = re.search(r"debug context: <function ([\w.<>]+)", own)
            if reason == "Skip calling `torch.compiler.disable()`d function" and disabled:
                reason = f"{reason}: {disabled[1]}"
            # An operator fake tensors cannot trace, by its op (1.47: `aten.nonzero.default`).
            op = re.search(r"debug context: (aten\.[\w.]+)", own)
            if reason.startswith(("Data dependent operator", "Dynamic shape operator")) and op:
                reason = f"{reason}: {op[1]}"
            break
    frames = re.findall(r'File "([^"]*)", line (\d+)', payload.split("Traceback (most recent")[0])
    where = (at[1], int(at[2])) if at is not None else (frames[-1][0], int(frames[-1][1])) if frames else (None, None)
    # FORMAT.md "What is user code": a place in library code is the innermost user frame instead.
    mine = [(f, int(n)) for f, n in frames if not _library(f)]
    if mine and _library(where[0]):
        where = mine[-1]
    return reason, where[0], where[1]


def _library(file: str | None) -> bool:
    return not file or file.startswith("<") or _LIBRARY.search(file) is not None


def parsed(log: Path, folder: Path) -> Path:
    """The tlscope format files of `log` (the report is not needed here)."""
    out = OutputDir(folder / "out", overwrite=False)
    out.check()
    run(log, out, ParseOptions())
    return folder / "out"


def load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_answers_on_real_logs(log: Path, tmp_path: Path) -> None:
    if not log.is_relative_to(CORPUS):
        require_shared()
    out = parsed(log, tmp_path)
    records = envelopes(log)
    compiles = load(out, "compiles.json")
    by_id = {c["id"]: c for c in with_aot_inductor(compiles)}
    manifest = load(out, "manifest.json")

    # An entry per compile id, in manifest order.
    assert [c["id"] for c in compiles["compiles"]] == [c["id"] for c in manifest["compile_ids"]]
    assert all(c["status"] in compiles["statuses"] for c in compiles["compiles"])

    # Distinct graph breaks: the distinct (reason, location) pairs, counts summing to the artifacts.
    breaks = Counter(
        break_key(payload)
        for meta, payload in records
        if isinstance(meta.get("artifact"), dict) and meta["artifact"].get("name") == "dynamo_graph_break_reason"
    )
    found = {
        (g["reason"], g["user_frame"].get("file"), g["user_frame"].get("line")): g["count"]
        for g in compiles["graph_breaks"]
    }
    breaks = breaks or restart_breaks(records)  # an older torch logged no break artifact (1.47)
    assert found == dict(breaks)
    assert sum(g["count"] for g in compiles["graph_breaks"]) == sum(breaks.values())

    last_forward: dict[str, dict[str, Any]] = {}
    for (meta, _), owner in zip(records, owners(records), strict=True):
        metrics = meta.get("compilation_metrics")
        if not isinstance(metrics, dict):
            continue
        entry = by_id[owner]
        last_forward[entry["id"]] = metrics
        # Every compile whose metrics carry a recompile_reason is listed with it.
        if metrics.get("recompile_reason") is not None:
            assert entry["recompile"]["reason"] == metrics["recompile_reason"], entry["id"]
        # Every failure is kept: the entry's first failure is the first failed record's.
        if metrics.get("fail_type") is not None:
            assert entry["failure"] is not None, entry["id"]
    # The entry's status is its last forward compile's: failed exactly when that one failed.
    for cid, metrics in last_forward.items():
        assert (by_id[cid]["status"] == "failed") == (metrics.get("fail_type") is not None), cid
    assert_every_metrics_record_kept(records, with_aot_inductor(compiles))

    # Every byte of the input is attributed.
    size = load(out, "log_size.json")
    text = log_text(log)
    assert size["total_bytes"] == len(text)
    assert size["total_lines"] == text.count(b"\n") + (not text.endswith(b"\n") and bool(text))
    assert sum(s["bytes"] for s in size["by_event_key"].values()) + size["other"]["bytes"] == len(text)
    assert sum(s["lines"] for s in size["by_event_key"].values()) + size["other"]["lines"] == size["total_lines"]
    attributed = len(text) - size["other"]["bytes"]
    assert sum(s["bytes"] for s in size["by_compile_id"].values()) == attributed
    assert sum(s["bytes"] for s in size["by_module"].values()) == attributed
    assert sum(s["bytes"] for s in size["by_setting"]) == attributed


METRICS_KEYS = (
    "compilation_metrics",
    "bwd_compilation_metrics",
    "compilation_metrics_runtime",
    "bwd_compilation_metrics_runtime",
)


def record_seconds(metrics: dict[str, Any]) -> float:
    """A record's compile time as FORMAT.md defines `time_s` (0 when neither field was logged)."""
    if metrics.get("entire_frame_compile_time_s") is not None:
        return float(metrics["entire_frame_compile_time_s"])
    return float(metrics.get("duration_us") or 0) / 1e6


def assert_every_metrics_record_kept(records: list[tuple[dict[str, Any], str]], entries: list[dict[str, Any]]) -> None:
    """Per compile id and kind, compiles.json's metrics_records match the log's records: count,
    log lines' order, time (summed) and failures."""
    log: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for (meta, _), owner in zip(records, owners(records), strict=True):
        for key in METRICS_KEYS:
            if isinstance(meta.get(key), dict):
                log.setdefault((owner, key), []).append(meta[key])
    kept: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in entries:
        lines = [r["log_line"] for r in entry["metrics_records"]]
        assert lines == sorted(lines), entry["id"]
        assert entry["metrics"] is None or entry["metrics"]["records"] == len(lines), entry["id"]
        for record in entry["metrics_records"]:
            kept.setdefault((entry["id"], record["kind"]), []).append(record)
    assert {k: len(v) for k, v in kept.items()} == {k: len(v) for k, v in log.items()}
    for key, found in kept.items():
        assert sum(r["time_s"] or 0.0 for r in found) == pytest.approx(sum(map(record_seconds, log[key])), abs=1e-6)
        assert [r["failure"]["type"] if r["failure"] else None for r in found] == [m.get("fail_type") for m in log[key]]
        assert [r["status"] == "failed" for r in found] == [m.get("fail_type") is not None for m in log[key]]
        assert [r["co_name"] for r in found] == [m.get("co_name") for m in log[key]]
    # The acceptance figure: forward compile time over the whole log.
    total = sum(record_seconds(m) for (_, kind), ms in log.items() if kind == "compilation_metrics" for m in ms)
    ours = sum(r["time_s"] or 0.0 for (_, kind), rs in kept.items() if kind == "compilation_metrics" for r in rs)
    assert ours == pytest.approx(total, abs=1e-6)


def test_compile_failure_keeps_both_compiles_of_0_0(tmp_path: Path) -> None:
    """compile_failure's [0/0]: a failed 0.1049 s compile, then after torch._dynamo.reset() a good
    14.010961 s one; both kept, the entry's status the last one's, its metrics unmerged."""
    entry = next(c for c in corpus_compiles("compile_failure", tmp_path)["compiles"] if c["id"] == "[0/0]")
    assert [(r["status"], r["time_s"]) for r in entry["metrics_records"]] == [("failed", 0.1049), ("ok", 14.010961)]
    assert entry["metrics_records"][0]["failure"]["type"] == "BackendCompilerFailed"
    # fail_reason is "backend='flaky_backend' raised:\nRuntimeError: ...": the error is its 2nd line.
    said = "backend='flaky_backend' raised: RuntimeError: corpus: deliberate backend failure on first compile"
    assert entry["failure"]["reason"] == said
    assert entry["status"] == "ok"
    assert entry["failure"]["type"] == "BackendCompilerFailed"
    assert entry["metrics"]["entire_frame_compile_time_s"] == 14.010961
    assert entry["metrics"]["backend_compile_time_s"] == 13.94676
    assert entry["metrics"]["records"] == 2


def test_backward_record_does_not_overwrite_forward_metrics(tmp_path: Path) -> None:
    """simple's [0/0] has a forward record and a backward one: `metrics` is the forward's."""
    log = next((CORPUS / "simple").glob("*.log.gz"))
    forward = next(m["compilation_metrics"] for m, _ in envelopes(log) if "compilation_metrics" in m)
    entry = next(c for c in load(parsed(log, tmp_path), "compiles.json")["compiles"] if c["id"] == "[0/0]")
    assert [r["kind"] for r in entry["metrics_records"]] == ["compilation_metrics", "bwd_compilation_metrics"]
    assert entry["metrics"]["inductor_compile_time_s"] == forward["inductor_compile_time_s"]
    assert entry["metrics_records"][1]["time_s"] == pytest.approx(3.992364)


def corpus_compiles(scenario: str, tmp_path: Path) -> dict[str, Any]:
    log = next((CORPUS / scenario).glob("*.log.gz"))
    return load(parsed(log, tmp_path), "compiles.json")  # type: ignore[no-any-return]


def test_recompiles_explained_by_guard_kind(tmp_path: Path) -> None:
    """recompiles_dynamic: each recompile's newest failed guard, classified, with what changed."""
    entries = {c["id"]: c for c in corpus_compiles("recompiles_dynamic", tmp_path)["compiles"]}
    first = {cid: e["recompile"]["guard_failures"][0] for cid, e in entries.items() if e["recompile"]}
    kinds = {cid: f["kind"] for cid, f in first.items()}
    assert kinds == {
        "[0/1]": "size",
        "[0/2]": "size",
        "[0/3]": "rank",
        "[0/4]": "rank",
        "[0/5]": "stride",
        "[0/6]": "dynamic_range",
        "[1/1]": "value",
        "[1/2]": "global",
        "[2/1]": "length",
        "[3/1]": "value",
        "[3/2]": "value",
    }
    assert first["[0/1]"]["explanation"] == "size of x on dim 0 changed: 4 -> 5"
    assert first["[0/1]"]["cache_entry"] == "[0/0]"
    assert first["[1/2]"]["subject"] == "G['SCALE_UP']"
    changes = {(c["input"], c["what"]): (c["before"], c["after"]) for c in entries["[0/1]"]["recompile"]["changes"]}
    # Dim 0 became dynamic after the size change (automatic dynamic shapes).
    assert changes == {("L['x']", "size"): ("[4, 8]", "[5, 8]"), ("L['x']", "dynamic_dims"): ("[]", "[0]")}
    assert entries["[0/5]"]["status"] == "cache_hit"
    # The recompile limit: the last compile of `limited` fails.
    assert entries["[3/2]"]["status"] == "failed"


def test_grad_mode_dtype_requires_grad_recompiles(tmp_path: Path) -> None:
    entries = {c["id"]: c for c in corpus_compiles("recompiles", tmp_path)["compiles"]}
    first = [entries[f"[0/{n}]"]["recompile"]["guard_failures"][0]["kind"] for n in range(1, 5)]
    assert first == ["size", "dtype", "requires_grad", "grad_mode"]
    changes = {(c["what"], c["before"], c["after"]) for c in entries["[0/3]"]["recompile"]["changes"]}
    assert ("requires_grad", "False", "True") in changes
    changes = {(c["what"], c["before"], c["after"]) for c in entries["[0/2]"]["recompile"]["changes"]}
    assert ("dtype", "torch.float32", "torch.float64") in changes


def test_an_exception_the_users_code_raised_is_named(tmp_path: Path) -> None:
    """corpus raised: `scaled` raised KeyError('scale') while Dynamo traced it. The break's headline
    was torch's wrapper ("Failed to handle graph break gracefully. ... encountered:") and the
    failure said only "Observed exception"; both now name the exception, at the user's line."""
    out = parsed(next((CORPUS / "raised").glob("*.log.gz")), tmp_path)
    compiles = load(out, "compiles.json")
    (group,) = compiles["graph_breaks"]
    assert group["reason"] == "Observed exception: KeyError('scale')"
    assert (Path(group["user_frame"]["file"]).name, group["user_frame"]["code"]) == (
        "raised.py",
        'return x * options["scale"]',
    )
    failed = {c["id"]: c for c in compiles["compiles"]}["[0/0]"]
    assert failed["status"] == "failed" and failed["failure"]["type"] == "Unsupported"
    assert failed["failure"]["reason"] == "Observed exception: KeyError('scale')"


def test_repeated_graph_breaks_grouped(tmp_path: Path) -> None:
    found = corpus_compiles("graph_breaks_repeated", tmp_path)
    groups = [
        (g["reason"], Path(g["user_frame"]["file"]).name, g["user_frame"]["line"], g["count"])
        for g in found["graph_breaks"]
    ]
    assert groups == [
        ("Failed to trace builtin operator", "graph_breaks_repeated.py", 15, 5),
        ("Call to `torch._dynamo.graph_break()`", "graph_breaks_repeated.py", 29, 2),
        ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "graph_breaks_repeated.py", 34, 1),
    ]
    statuses = {c["id"]: c["status"] for c in found["compiles"]}
    assert statuses["[0/0]"] == "restarted" and statuses["[0/0_1]"] == "graph_break"
    by_id = {c["id"]: c for c in found["compiles"]}
    assert by_id["[0/0]"]["restarted_as"] == "[0/0_1]"


def test_failures_with_user_frames(tmp_path: Path) -> None:
    entries = {c["id"]: c for c in corpus_compiles("failures", tmp_path)["compiles"]}
    assert [entries[i]["status"] for i in ("[0/0]", "[1/0]", "[2/0]")] == ["failed", "failed", "ok"]
    failure = entries["[1/0]"]["failure"]
    assert failure["type"] == "TorchRuntimeError"
    assert (Path(failure["user_frame"]["file"]).name, failure["user_frame"]["line"]) == ("failures.py", 22)
    assert failure["traceback"]["payload_filename"].startswith("payloads/")


def test_cache_miss_then_hit(tmp_path: Path) -> None:
    miss = {c["id"]: c for c in corpus_compiles("caches/run1", tmp_path / "1")["compiles"]}["[0/0]"]
    hit = {c["id"]: c for c in corpus_compiles("caches/run2", tmp_path / "2")["compiles"]}["[0/0]"]
    assert miss["status"] == "ok" and {c["outcome"] for c in miss["cache"]} == {"miss"}
    assert hit["status"] == "cache_hit" and {c["outcome"] for c in hit["cache"]} == {"hit"}
    assert {c["cache"] for c in hit["cache"]} == {"fx_graph", "aotautograd"}


def test_compile_entry_points_into_raw_jsonl(tmp_path: Path) -> None:
    """raw_lines ranges hold exactly the compile id's raw.jsonl events; graphs and code name payload files."""
    log = next((CORPUS / "simple").glob("*.log.gz"))
    out = parsed(log, tmp_path)
    raw = (out / "raw.jsonl").read_text(encoding="utf-8").splitlines()
    entry = next(c for c in load(out, "compiles.json")["compiles"] if c["id"] == "[0/0]")
    lines = [n for first, last in entry["raw_lines"] for n in range(first, last + 1)]
    assert lines
    for n in lines:
        event = json.loads(raw[n - 1].split("\t", 1)[-1]) if "\t" in raw[n - 1][:20] else json.loads(raw[n - 1])
        assert (event.get("frame_id"), event.get("frame_compile_id")) == (0, 0)
    assert entry["phases"] and entry["time"]["duration_s"] > 0
    assert all((out / g["payload_filename"]).is_file() for g in entry["graphs"] + entry["code"])
    assert any(g["nodes"] for g in entry["graphs"])


def test_format_md_documents_every_compiles_and_log_size_field() -> None:
    from tlscope.format.compiles import CompileEntry
    from tlscope.format.logsize import LogSize

    text = (Path(__file__).resolve().parents[1] / "docs" / "FORMAT.md").read_text(encoding="utf-8")
    compiles = text.split("## 14. compiles.json", 1)[1].split("## 15.", 1)[0]
    for name in CompileEntry.__struct_fields__:
        assert f"| `{name}` |" in compiles, name
    size = text.split("## 15. log_size.json", 1)[1]
    for name in LogSize.__struct_fields__:
        assert f"`{name}`" in size, name


def test_chromium_log_lines_point_at_each_events_line(tmp_path: Path) -> None:
    log = next((CORPUS / "simple").glob("*.log.gz"))
    out = parsed(log, tmp_path)
    events = load(out, "chromium_events.json")
    lines = load(out, "chromium_log_lines.json")
    assert len(lines) == len(events) > 0
    text = log_text(log).decode("utf-8").split("\n")
    for event, line in zip(events, lines, strict=True):
        envelope = text[line - 1]
        assert '"chromium_event"' in envelope
        payload = []
        for following in text[line:]:
            if not following.startswith("\t"):
                break
            payload.append(following[1:])
        assert json.loads("\n".join(payload)) == event


@pytest.mark.parametrize(
    ("text", "prefix", "expected"),
    [
        ("0/1", False, "[0/1]"),
        ("!0/1/0", False, "[!0/1/0]"),
        ("0/1_2", False, "[0/1]"),
        ("[0/3]", False, "[0/3]"),
        ("None", False, None),
        ("0/3: tensor 'x' size mismatch", False, None),
        ("0/3: tensor 'x' size mismatch", True, "[0/3]"),
        ("x0/1", True, None),
    ],
)
def test_compile_ids_in_text(text: str, prefix: bool, expected: str | None) -> None:
    """Chromium `args.compile_id` and recompile reasons name frame compiles in one text form."""
    from tlscope.model.compile_id import frame_compile_from_text

    found = frame_compile_from_text(text, prefix=prefix)
    assert (found.display if found else None) == expected


def test_no_graph_captured_is_empty(tmp_path: Path) -> None:
    """Vibe finding A: a resume function with nothing to capture (no ops, no dynamo_output_graph)
    is `empty`, as index.html's "Empty graph" says, not `ok`."""
    breaks = {c["id"]: c for c in corpus_compiles("graph_breaks_repeated", tmp_path)["compiles"]}
    assert breaks["[2/0]"]["status"] == breaks["[8/0]"]["status"] == "empty"
    assert breaks["[2/0]"]["metrics"]["graph_op_count"] is None and breaks["[2/0]"]["graphs"] == []
    assert breaks["[3/0]"]["status"] == "ok"


def test_resume_function_inputs_dynamic_dims(tmp_path: Path) -> None:
    """Vibe finding C: L['___stack0'] is the graph placeholder L_stack0_, whose sizes are symbols."""
    breaks = {c["id"]: c for c in corpus_compiles("graph_breaks_repeated", tmp_path)["compiles"]}
    (stack0,) = breaks["[5/1_1]"]["inputs"]
    assert (stack0["source"], stack0["dynamic_dims"]) == ("L['___stack0']", [0, 1])
    changes = {c["what"]: (c["before"], c["after"]) for c in breaks["[5/1_1]"]["recompile"]["changes"]}
    assert changes["dynamic_dims"] == ("[]", "[0, 1]")


def test_guard_user_frame_from_trailing_comment(tmp_path: Path) -> None:
    """Vibe finding D: a guard's trailing comment `# <code>  # <file>:<line> in <fn>` is its user frame."""
    dynamic = {c["id"]: c for c in corpus_compiles("recompiles_dynamic", tmp_path)["compiles"]}
    frame = dynamic["[0/6]"]["recompile"]["guard_failures"][0]["user_frame"]
    assert (Path(frame["file"]).name, frame["line"], frame["name"], frame["code"]) == (
        "recompiles_dynamic.py",
        16,
        "shaped",
        "return torch.relu(x) * 2",
    )
    # A tensor guard has no comment and no frame.
    assert dynamic["[0/5]"]["recompile"]["guard_failures"][0]["user_frame"] is None
    # A source line with its own `  # comment`: the frame is the last `  # file:line in fn`.
    from tlscope.analyse.fold.guards import guard_failure

    found = guard_failure("1/0: k == 2  # return x @ w  # (4, 3): no  # m.py:20 in scaled (note)").user_frame
    assert found is not None and (found.file, found.line, found.code) == ("m.py", 20, "return x @ w  # (4, 3): no")


def test_failure_user_frame_from_dynamo_error(tmp_path: Path) -> None:
    """Vibe finding H: the failure's function and source line come from the dynamo_error traceback."""
    failed = {c["id"]: c for c in corpus_compiles("failures", tmp_path)["compiles"]}
    frame = failed["[0/0]"]["failure"]["user_frame"]
    assert (frame["line"], frame["name"], frame["code"]) == (
        17,
        "must_be_whole",
        'print("no graph breaks allowed", y.shape)',
    )
    assert failed["[1/0]"]["failure"]["user_frame"]["name"] == "mismatched"


def test_log_size_settings_say_what_the_bytes_are(tmp_path: Path) -> None:
    """Vibe finding N: graph break reasons are not "the graph's code"; chromium events are not only spans."""
    log = next((CORPUS / "graph_breaks_repeated").glob("*.log.gz"))
    size = load(parsed(log, tmp_path), "log_size.json")
    setting = {kind: s["setting"] for s in size["by_setting"] for kind in s["kinds"]}
    assert "graph break" in setting["dynamo_graph_break_reason"]
    assert "graph's code" not in setting["dynamo_graph_break_reason"]
    assert "instant events" in setting["chromium_event"]
    # by_* are objects keyed by name, biggest first (JSON object order as written).
    sizes = [s["bytes"] for s in size["by_event_key"].values()]
    assert sizes == sorted(sizes, reverse=True)


def _share(text: str, path: str) -> tuple[float, float]:
    row = next(line for line in text.splitlines() if line.startswith(f"| `{path}"))
    match = re.search(r"(\d+)\u2013(\d+)% of the log \|$", row)
    assert match is not None, f"FORMAT.md gives no measured share of the log for {path}"
    return float(match[1]), float(match[2])


@pytest.mark.parametrize("scenario", ["failures", "simple", "graph_breaks_repeated"])
def test_format_md_size_shares_hold_on_the_corpus(scenario: str, tmp_path: Path) -> None:
    """Vibe finding M: §1's "% of the log" of raw.jsonl, payloads/ and chromium_events.json are measured."""
    log = next((CORPUS / scenario).glob("*.log.gz"))
    folder = parsed(log, tmp_path)
    total = len(log_text(log))
    sizes = {
        "raw.jsonl": (folder / "raw.jsonl").stat().st_size,
        "payloads/": sum(p.stat().st_size for p in (folder / "payloads").iterdir()),
        "chromium_events.json": (folder / "chromium_events.json").stat().st_size,
    }
    text = (Path(__file__).resolve().parents[1] / "docs" / "FORMAT.md").read_text(encoding="utf-8")
    for path, size in sizes.items():
        low, high = _share(text, path)
        assert low <= 100 * size / total <= high, (path, round(100 * size / total, 1))


def test_mark_dynamic_surfaced_in_recompile_changes(tmp_path: Path) -> None:
    """Vibe finding E: [0/5] was compiled because x was marked dynamic (torch._dynamo.mark_dynamic);
    the input says so and the changes show it, while guard_failures keeps every entry's own guard."""
    entries = {c["id"]: c for c in corpus_compiles("recompiles_dynamic", tmp_path)["compiles"]}
    (x,) = entries["[0/5]"]["inputs"]
    assert x["marked_dynamic"] == [0]
    changes = {c["what"]: (c["before"], c["after"]) for c in entries["[0/5]"]["recompile"]["changes"]}
    assert changes["marked_dynamic"] == ("[]", "[0]")
    kinds = {f["cache_entry"]: f["kind"] for f in entries["[0/5]"]["recompile"]["guard_failures"]}
    assert kinds["[0/2]"] == "dim_marking"


def test_an_id_numbered_again_after_reset_says_every_function_it_held(tmp_path: Path) -> None:
    """corpus reset: scale, then gate, then scale again, with torch._dynamo.reset() between them, are
    all [0/0]. Before 1.24 the entry said `scale` alone; each metrics record now names its function
    (`co_name`) and summary and the report's index say the three."""
    import subprocess
    import sys

    out = parsed(next((CORPUS / "reset").glob("*.log.gz")), tmp_path)
    (entry,) = [c for c in load(out, "compiles.json")["compiles"] if c["id"] == "[0/0]"]
    assert [(r["kind"], r["co_name"]) for r in entry["metrics_records"]] == [
        ("compilation_metrics", "scale"),
        ("compilation_metrics", "gate"),
        ("compilation_metrics", "scale"),
    ]
    said = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", str(out), "--width", "200"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = "[0/0] held 3 compiles, of scale, gate, scale: ids are numbered again after torch._dynamo.reset()"
    assert line in said
    summary = json.loads(
        subprocess.run(
            [sys.executable, "-m", "tlscope", "summary", str(out), "--json"], capture_output=True, text=True
        ).stdout
    )
    assert summary["reused"] == [
        {
            "id": "[0/0]",
            "failed": [],
            "failed_time_s": 0.0,
            "compiles": 3,
            "functions": ["scale", "gate", "scale"],
            "why": "ids are numbered again after torch._dynamo.reset()",
        }
    ]
    report = tmp_path / "report"
    log = next((CORPUS / "reset").glob("*.log.gz"))
    subprocess.run([sys.executable, "-m", "tlscope", str(log), "-o", str(report), "--no-browser"], check=True)
    assert "[0/0] held 3 compiles, of scale, gate, scale (ids are numbered again" in (report / "index.html").read_text()


def test_an_id_numbered_again_tells_each_functions_compile_time(tmp_path: Path) -> None:
    """corpus reset: [0/0] held scale, gate and scale. Slowest functions said `scale 1 compile` with
    gate's time in it, and the flame graph drew all three under scale. Each metrics record now says
    where its function is (1.27, `co_filename`, `co_firstlineno`), and compile time is told per
    function: scale twice under the entry's stack (its first compile's), gate once under (no stack)."""
    import subprocess
    import sys

    import tlscope

    log = next((CORPUS / "reset").glob("*.log.gz"))
    metrics = [meta["compilation_metrics"] for meta, _ in envelopes(log) if "compilation_metrics" in meta]
    starts = [meta["dynamo_start"] for meta, _ in envelopes(log) if "dynamo_start" in meta]
    expected: dict[str, list[float]] = {}
    for m in metrics:
        expected.setdefault(m["co_name"], []).append(m["entire_frame_compile_time_s"])
    assert sorted(expected) == ["gate", "scale"] and len(expected["scale"]) == 2
    out = parsed(log, tmp_path)
    (entry,) = [c for c in load(out, "compiles.json")["compiles"] if c["id"] == "[0/0]"]
    assert [(r["co_name"], r["co_firstlineno"]) for r in entry["metrics_records"]] == [
        (m["co_name"], m["co_firstlineno"]) for m in metrics
    ]
    assert all(r["co_filename"].endswith("reset.py") for r in entry["metrics_records"])
    # The entry's stack is its first compile's, as its function is.
    assert [f["line"] for f in entry["stack"]] == [f["line"] for f in starts[0]["stack"]]
    summary = json.loads(
        subprocess.run(
            [sys.executable, "-m", "tlscope", "summary", str(out), "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    rows = {r["function"]: r for r in summary["slowest_functions"]}
    for name, times in expected.items():
        assert rows[name]["compiles"] == len(times)
        assert rows[name]["seconds"] == pytest.approx(sum(times), abs=1e-5)
    root = tlscope.load(out).flame_graph()
    under = {child.name: [g.name for g in child.children] for child in root.children}
    assert under["(no stack)"] == ["gate"] and "scale" not in under["(no stack)"]
    assert root.seconds == pytest.approx(sum(sum(t) for t in expected.values()), abs=1e-5)


def test_a_stack_logged_from_inside_dynamo_names_the_compiled_function(tlparse_traces: Path, tmp_path: Path) -> None:
    """tlparse's artifacts.log (an older torch) logged dynamo_start's stack from inside Dynamo:
    its innermost frames are convert_frame.py's `catch_errors` and `_convert_frame`, which is not
    what was compiled. The function is then the code object the metrics name (`fn`, defined at
    test_codecache.py:439), as the compiles table and the first answers say it; the stack and the
    user's line (the test's call, line 448) stay as logged."""
    log = tlparse_traces / "inputs" / "artifacts.log"
    metrics = next(json.loads(line[line.index("{") :]) for line in log.open() if '"compilation_metrics"' in line)
    named = metrics["compilation_metrics"]
    entry = next(c for c in load(parsed(log, tmp_path), "compiles.json")["compiles"] if c["id"] == "[0/0]")
    assert entry["stack"][-1]["name"] == "_convert_frame"
    assert (entry["function"]["name"], entry["function"]["file"], entry["function"]["line"]) == (
        named["co_name"],
        named["co_filename"],
        named["co_firstlineno"],
    )
    assert entry["user_frame"]["line"] == 448
    answers = load(parsed(log, tmp_path / "again"), "compiles.json")["first_answers"]
    assert answers[0]["text"].startswith("most compile time: [0/0] fn (test_codecache.py:439) took ")
