"""Byte-identity check: every output tree of a base revision and of this checkout, compared.

    python tools/identity.py                    # base = main's merge-base... see --base
    python tools/identity.py --base 35f8773     # the revision before issue 10's refactor
    python tools/identity.py --base HEAD --cases simple
    python tools/identity.py --list

A refactor must not change what tlscope writes. This runs the same commands with the base
revision's `src/` (extracted with `git archive`, run with that folder first on sys.path) and with
this checkout's `src/`, and compares, for each command:

* the exit status, stdout and stderr;
* the output tree: the same relative paths, each the same kind (file, folder, symlink) and every
  file the same bytes.

Cases (discovered, none listed by hand):

* every log of `corpus/traces/` (gzipped) but the muxed one, alone, in the default mode; `-p`
  (plain-text output code) on every log that is not a rank log; `-i` on the provenance
  scenario's logs, `-e` on the export scenario's logs;
* every corpus scenario with rank logs, as a directory (`--all-ranks-html`, default `-j`, and
  `-j 1` for the first one); the muxed log (split by rank, then multi-rank);
* `tlscope split` on the muxed log and `tlscope redact` on a few logs (`--map`, `--user`);
* when `../shared/traces/tlparse` is present: each of its single logs (default mode; `-e` for the
  export logs, `-i` for the provenance logs) and each of its multi-rank folders.

What is ignored, and why (nothing else is):

* Both revisions run, one after the other, in the same scratch folder with identical relative
  arguments (`-o out`) and the same absolute input paths, so `manifest.json`'s `command` and
  `inputs[].path`, the summaries printed and every page naming a path are the same in both
  runs: nothing needs masking for them.
* A muxed log is split into a fresh temporary folder with a random name (`tempfile.mkdtemp`),
  deleted at the end of the run, and each rank is parsed from there, so the rank manifests'
  `inputs[].path` (and nothing else) name that folder. Where it lives changed on purpose in
  issue 9 (`$TMPDIR/tlscope-split-XXXX` before, `.../.OUT.tlscope-XXXX/.split`, inside OUT's
  temporary sibling, since: a run that is killed leaves nothing in $TMPDIR). So such a folder's
  whole path, up to the log's file name, is replaced by `<split>` in text files before comparing;
  the file name after it is still compared. `--control` runs the base twice and shows that this
  is the only difference between two runs of one revision.

What is allowed to differ, and only against a base that predates it (a difference is forgiven
when removing the addition from the new file gives the base's bytes exactly):

* format 1.9 (issue 19, the rules carried in the data): `format_minor` 8 -> 9 at the top of
  manifest.json, compiles.json, log_size.json and ranks.json; compiles.json's top-level
  `status_order` (the status vocabulary, most severe first) and each recompile's `recommended`
  (null or `{"index": N, "why": "..."}`, right after `guard_failures`). Such files are counted
  in the summary line ("differ by the format additions only").
* format 1.10 (issue 23, where a dynamic dimension comes from): `format_minor` 9 -> 10 in the
  same files; compiles.json's top-level `symbols` and `input_shapes` (the file's last two lists)
  and each recompile's `fix` (null or an object, last in `recompile`); in the report's index.html,
  the line under a size recompile saying that fix (`<p class="answers-fix">To avoid it, add …` or `change …`).
* format 1.11 (issue 23, graphs as data): `format_minor` 10 -> 11 in the same files,
  manifest.json's `graphs` object (right after `payloads`), and the files under `graphs/` (beside
  `payloads/`: a single log's folder, or a job's).
* format 1.12 (issue 20, torch's fix hints of a failed compile): `format_minor` 11 -> 12 in the
  same files and those of `graphs/`, and each `failure`'s `hints` and `docs_url` in compiles.json (right after its
  `traceback`, last in the object; an entry's and each metrics record's).
* format 1.14 (issue 22, the median rank decided in Python): `format_minor` 13 -> 14 in the same
  files and those of `graphs/`, and ranks.json's `stragglers.median_rank` (right after
  `median_compile_time_s`).

* format 1.15 (issue 23, a specialisation's or a guard's fix): `format_minor` 14 -> 15 in the same
  files and those of `graphs/`, and the `fix` (null or an object) last in each of compiles.json's
  `symbols` (after `failed_in`) and in each of their `specializations` (after `user_frame`).

* format 1.17 (the collectives of Dynamo's graphs, compared across ranks): `format_minor` 16 -> 17
  in the same files, provenance.json and those of `graphs/`, each compiles.json graph's
  `collectives` (last, after `inputs`), ranks.json's `divergence.collectives` (last in
  `divergence`) and multi_rank_summary.json's `overview.collectives` of each rank.

Exit status 0 when every case is identical, 1 otherwise (the differences are listed).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus" / "traces"
SHARED = Path(os.environ.get("TLSCOPE_SHARED", REPO.parent / "shared")) / "traces" / "tlparse"
#: The split scratch folder's path, either form (see the module docstring): a JSON string's
#: characters up to `tlscope-split-XXXX/` or `.NAME.tlscope-XXXX/.split/`.
_SPLIT_DIR = re.compile(
    rb'(?<=")[^"\n]*/(?:tlscope-split-[A-Za-z0-9_]+|\.[^"/\n]+\.tlscope-[A-Za-z0-9_]+/\.split)(?=/)'
)
_RANK_LOG = re.compile(r"^dedicated_log_torch_trace_rank_\d+")
#: How a revision's tlscope is started: its src/ first on sys.path, checked, then `python -m tlscope`.
_LAUNCH = (
    "import runpy, sys; src = sys.argv.pop(1); sys.path.insert(0, src); import tlscope; "
    "assert tlscope.__file__.startswith(src), (tlscope.__file__, src); "
    "sys.argv[0] = 'tlscope'; runpy.run_module('tlscope', run_name='__main__', alter_sys=True)"
)


@dataclass(frozen=True)
class Case:
    name: str
    #: tlscope's arguments; "OUT" is replaced by the case's output path (relative to its folder).
    args: tuple[str, ...]


@dataclass
class Outcome:
    status: int
    stdout: bytes
    stderr: bytes
    #: relative path -> ("dir" | "link:<target>" | file bytes)
    tree: dict[str, bytes | str] = field(default_factory=dict)


def _corpus_logs() -> list[Path]:
    return sorted(CORPUS.rglob("*.log.gz")) if CORPUS.is_dir() else []


def _label(path: Path) -> str:
    for root in (CORPUS, SHARED):
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return str(path)


def discover() -> list[Case]:
    """Every case (see the module docstring)."""
    cases: list[Case] = []
    logs = _corpus_logs()
    for log in logs:
        if log.parent.name == "muxed":
            continue  # goes multi-rank: see below
        cases.append(Case(f"parse {_label(log)}", (str(log), "-o", "OUT")))
        if not _RANK_LOG.match(log.name):
            cases.append(Case(f"parse -p {_label(log)}", (str(log), "-p", "-o", "OUT")))
        if log.parent.name == "provenance":
            cases.append(Case(f"parse -i {_label(log)}", (str(log), "-i", "-o", "OUT")))
        if log.parent.name == "export":
            cases.append(Case(f"parse -e {_label(log)}", (str(log), "-e", "-o", "OUT")))
    rank_dirs = sorted({log.parent for log in logs if _RANK_LOG.match(log.name)})
    for i, folder in enumerate(rank_dirs):
        cases.append(Case(f"multi-rank {_label(folder)}/", (str(folder), "--all-ranks-html", "-o", "OUT")))
        if i == 0:
            serial = (str(folder), "--all-ranks-html", "-j", "1", "-o", "OUT")
            cases.append(Case(f"multi-rank -j 1 {_label(folder)}/", serial))
    for log in (p for p in logs if p.parent.name == "muxed"):
        cases.append(Case(f"muxed {_label(log)}", (str(log), "-o", "OUT")))
        cases.append(Case(f"split {_label(log)}", ("split", str(log), "-o", "OUT")))
    for log in [p for p in logs if p.parent.name in ("simple", "export", "muxed")]:
        redact = ("redact", str(log), "-o", "OUT", "--map", "$PREFIX=/opt/python", "--user", "torch=someone")
        cases.append(Case(f"redact {_label(log)}", redact))
    cases += _shared_cases()
    return cases


def _shared_cases() -> list[Case]:
    if not SHARED.is_dir():
        return []
    cases: list[Case] = []
    inputs = SHARED / "inputs"
    for log in sorted(p for p in inputs.iterdir() if p.is_file()):
        cases.append(Case(f"parse shared/{_label(log)}", (str(log), "-o", "OUT")))
        if log.name.startswith("export"):
            cases.append(Case(f"parse -e shared/{_label(log)}", (str(log), "-e", "-o", "OUT")))
        if log.name.startswith("inductor_provenance"):
            cases.append(Case(f"parse -i shared/{_label(log)}", (str(log), "-i", "-o", "OUT")))
    folders = [p for p in sorted(inputs.iterdir()) if p.is_dir()] + [SHARED / "graph_exec_order_tests"]
    for folder in folders:
        if folder.is_dir():
            cases.append(Case(f"multi-rank shared/{_label(folder)}/", (str(folder), "--all-ranks-html", "-o", "OUT")))
    return cases


def extract(revision: str, dest: Path) -> Path:
    """The revision's src/ folder, extracted with git archive into `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest / "src.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), revision, "src"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    return dest / "src"


def run(src: Path, case: Case, folder: Path) -> Outcome:
    """Run `case` with the tlscope of `src` in `folder` (fresh), output at folder/out."""
    folder.mkdir(parents=True)
    args = ["out" if a == "OUT" else a for a in case.args]
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "120"}
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCH, str(src), *args, *_browser_flag(case)],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=900,
    )
    outcome = Outcome(done.returncode, done.stdout, done.stderr)
    out = folder / "out"
    if out.is_file():
        outcome.tree["."] = out.read_bytes()
    elif out.is_dir():
        outcome.tree = dict(_tree(out))
    return outcome


def _browser_flag(case: Case) -> list[str]:
    """--no-browser for parse runs (split and redact have no browser to open)."""
    return [] if case.args[0] in ("split", "redact") else ["--no-browser"]


def _tree(root: Path) -> Iterator[tuple[str, bytes | str]]:
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                yield rel, f"link:{os.readlink(path)}"
            elif path.is_dir():
                yield rel, "dir"
            else:
                yield rel, path.read_bytes()


def normalise(data: bytes) -> bytes:
    """The one run-specific part of an output (see the module docstring) masked."""
    return _SPLIT_DIR.sub(b"<split>", data)


_MINOR_9 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)9(?=,)')
_STATUS_ORDER = re.compile(rb',"status_order":\[(?:"[a-z_]+",)*"[a-z_]+"\](?=,"compiles":)')
_RECOMMENDED = re.compile(rb',"recommended":(?:null|\{"index":\d+,"why":"(?:[^"\\\n]|\\.)*"\})(?=,"compared_with":)')
#: Files counted as differing only by the format 1.9 additions (see the module docstring).
forgiven: list[str] = []


def without_19_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.8 wrote it: the 1.9 additions of issue 19 removed (see the module docstring)."""
    name = rel.rsplit("/", 1)[-1]
    if name not in ("manifest.json", "compiles.json", "log_size.json", "ranks.json"):
        return data
    data = _MINOR_9.sub(rb"\g<1>8", data, count=1)
    if name == "compiles.json":
        data = _RECOMMENDED.sub(b"", _STATUS_ORDER.sub(b"", data, count=1))
    return data


_MINOR_10 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)10(?=,)')
_STRING = rb'"(?:[^"\\\n]|\\.)*"'
#: A recompile's `fix`: null or an object of strings, numbers and one nested object (`where`), last in `recompile`.
_FIX = re.compile(
    rb',"fix":(?:null|\{"kind":"[a-z_]+"(?:[^{}"\n]|' + _STRING + rb"|\{(?:[^{}\"\n]|" + _STRING + rb")*\})*\})(?=\})"
)
#: compiles.json's last two lists, one item a line, at the end of the file.
_TAIL_110 = re.compile(rb'\n\],"symbols":\[(?:\n[^\n]*)*?\n\],"input_shapes":\[(?:\n[^\n]*)*?\n\]\}\n\Z')


#: The report's line saying a size recompile's fix (index.html, "Recompiles explained").
_ANSWERS_FIX = re.compile(rb'(?<=\n)<p class="answers-fix">To avoid it, (?:add|change) <code>[^\n]*</p>\n')


def without_110_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.9 wrote it: the 1.10 additions of issue 23 removed (see the module docstring)."""
    name = rel.rsplit("/", 1)[-1]
    if name == "index.html":
        return _ANSWERS_FIX.sub(b"", data)
    if name not in ("manifest.json", "compiles.json", "log_size.json", "ranks.json"):
        return data
    data = _MINOR_10.sub(rb"\g<1>9", data, count=1)
    if name == "compiles.json":
        data = _TAIL_110.sub(b"\n]}\n", _FIX.sub(b"", data), count=1)
    return data


_MINOR_11 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)11(?=,)')
_GRAPHS_STATS = re.compile(
    rb'\n  "graphs": \{\n    "files": \d+,\n    "bytes": \d+,\n    "failed": \d+\n  \},(?=\n  "chromium_events")'
)


def without_111_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.10 wrote it: the 1.11 additions (graphs as data) removed (see the module docstring)."""
    name = rel.rsplit("/", 1)[-1]
    if name not in ("manifest.json", "compiles.json", "log_size.json", "ranks.json"):
        return data
    data = _MINOR_11.sub(rb"\g<1>10", data, count=1)
    if name == "manifest.json":
        data = _GRAPHS_STATS.sub(b"", data, count=1)
    return data


_MINOR_12 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)12(?=,)')
#: A failure's `hints` and `docs_url`, after its `traceback` (null or a payload reference, which
#: holds no object), last in the failure; a graph break's own `hints` (since 1.8) follow no traceback.
_FAILURE_HINTS = re.compile(
    rb'(?<="traceback":)(null|\{[^{}]*\}),"hints":\[(?:'
    + _STRING
    + rb"(?:,"
    + _STRING
    + rb')*)?\],"docs_url":(?:null|'
    + _STRING
    + rb")(?=\})"
)


def without_112_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.11 wrote it: the 1.12 additions (a failure's hints) removed (see the module docstring)."""
    name = rel.rsplit("/", 1)[-1]
    if name not in ("manifest.json", "compiles.json", "log_size.json", "ranks.json") and not is_graphs_file(rel):
        return data
    data = _MINOR_12.sub(rb"\g<1>11", data, count=1)
    if name == "compiles.json":
        data = _FAILURE_HINTS.sub(rb"\1", data)
    return data


_MINOR_14 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)14(?=,)')
#: ranks.json's `stragglers.median_rank`, its own line after `median_compile_time_s`.
_MEDIAN_RANK = re.compile(rb'(?<=\n)    "median_rank": (?:null|\d+),\n(?=    "ranks": )')


def without_114_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.13 wrote it: the 1.14 addition (the median rank) removed (see the module docstring)."""
    name = rel.rsplit("/", 1)[-1]
    if name not in ("manifest.json", "compiles.json", "log_size.json", "ranks.json") and not is_graphs_file(rel):
        return data
    data = _MINOR_14.sub(rb"\g<1>13", data, count=1)
    if name == "ranks.json":
        data = _MEDIAN_RANK.sub(b"", data, count=1)
    return data


_MINOR_15 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)15(?=,)')
_FIX_BODY = (
    rb',"fix":(?:null|\{"kind":"[a-z_]+"(?:[^{}"\n]|' + _STRING + rb"|\{(?:[^{}\"\n]|" + _STRING + rb")*\})*\})(?=\})"
)
#: A symbol's `fix`, after its `failed_in` (a list of compile ids), and a specialisation's, after its `user_frame`.
_SYMBOL_FIX = re.compile(rb'("failed_in":\[(?:' + _STRING + rb"(?:," + _STRING + rb")*)?\])" + _FIX_BODY)
_SPECIALISATION_FIX = re.compile(rb'("user_frame":(?:null|\{(?:[^{}"\n]|' + _STRING + rb")*\}))" + _FIX_BODY)


def without_115_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.14 wrote it: the 1.15 additions (a specialisation's or guard's fix) removed."""
    name = rel.rsplit("/", 1)[-1]
    if name not in ("manifest.json", "compiles.json", "log_size.json", "ranks.json") and not is_graphs_file(rel):
        return data
    data = _MINOR_15.sub(rb"\g<1>14", data, count=1)
    if name == "compiles.json":
        data = _SPECIALISATION_FIX.sub(rb"\1", _SYMBOL_FIX.sub(rb"\1", data))
    return data


_MINOR_17 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)17(?=,)')
_LIST = rb'\[(?:[^\[\]"]|' + _STRING + rb'|\[(?:[^\[\]"]|' + _STRING + rb")*\])*\]"
#: compiles.json's graphs' `collectives`, last in each graph (after `inputs`).
_GRAPH_COLLECTIVES = re.compile(rb',"collectives":' + _LIST + rb"(?=\})")
#: ranks.json's `divergence.collectives`, its last field (the file is indented).
_RANK_COLLECTIVES = re.compile(rb',\n    "collectives": (?:\[\]|\[\n.*?\n    \])(?=\n  \})', re.DOTALL)
#: multi_rank_summary.json's `overview.collectives` of each rank (what ranks.json's are made of).
_OVERVIEW_COLLECTIVES = re.compile(rb',\n      "collectives": (?:\{\}|\{\n.*?\n      \})(?=\n    \})', re.DOTALL)


def without_117_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.16 wrote it: the 1.17 additions (the graphs' collectives) removed."""
    name = rel.rsplit("/", 1)[-1]
    if name == "multi_rank_summary.json":
        return _OVERVIEW_COLLECTIVES.sub(b"", data)
    formatted = ("manifest.json", "compiles.json", "log_size.json", "ranks.json", "provenance.json")
    if name not in formatted and not is_graphs_file(rel):
        return data
    data = _MINOR_17.sub(rb"\g<1>16", data, count=1)
    if name == "compiles.json":
        data = _GRAPH_COLLECTIVES.sub(b"", data)
    elif name == "ranks.json":
        data = _RANK_COLLECTIVES.sub(b"", data, count=1)
    return data


_MINOR_18 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)18(?=,)')
#: compiles.json's `exports`, its last field: each item on a line of its own, as written.
_EXPORTS = b'\n],"exports":['
#: ranks.json's `divergence.rows`, its last field (the file is indented).
_RANK_ROWS = re.compile(rb',\n    "rows": (?:\[\]|\[\n.*?\n    \])(?=\n  \})', re.DOTALL)
#: compiles.json's symbols' `retrace_of`, last in each (after `fix`); a symbol name or null.
_RETRACE_OF = re.compile(rb',"retrace_of":(?:null|"[A-Za-z0-9_]*")(?=\})')


def without_118_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.17 wrote it: the 1.18 addition (compiles.json's `exports`) removed."""
    name = rel.rsplit("/", 1)[-1]
    formatted = ("manifest.json", "compiles.json", "log_size.json", "ranks.json", "provenance.json")
    if name not in formatted and not is_graphs_file(rel):
        return data
    data = _MINOR_18.sub(rb"\g<1>17", data, count=1)
    at = data.rfind(_EXPORTS)
    # A JSON string cannot hold this text unescaped (its quotes would be `\"`): it is the field.
    if name == "compiles.json" and at != -1 and data.endswith(b"\n]}\n"):
        data = data[:at] + b"\n]}\n"
    if name == "compiles.json":
        data = _RETRACE_OF.sub(b"", data)
    elif name == "ranks.json":
        data = _RANK_ROWS.sub(b"", data, count=1)
    return data


_MINOR_19 = re.compile(rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)19(?=,)')


#: compiles.json's `exports_note`, its last field (after `exports`' closing bracket), as written.
_EXPORTS_NOTE = re.compile(rb'\n\],"exports_note":(?:null|"(?:[^"\\]|\\.)*")\}\n$')


def without_119_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.18 wrote it: 1.19 added an export issue kind (`dynamo_error`, in logs of
    strict torch.export alone) and compiles.json's `exports_note` (last)."""
    name = rel.rsplit("/", 1)[-1]
    formatted = ("manifest.json", "compiles.json", "log_size.json", "ranks.json", "provenance.json")
    if name not in formatted and not is_graphs_file(rel):
        return data
    data = _MINOR_19.sub(rb"\g<1>18", data, count=1)
    return _EXPORTS_NOTE.sub(b"\n]}\n", data, count=1) if name == "compiles.json" else data


_FORMATTED = ("manifest.json", "compiles.json", "log_size.json", "ranks.json", "provenance.json")


def _minor_back(rel: str, data: bytes, minor: int) -> tuple[str | None, bytes]:
    """For a format file: its name, and `data` with its `format_minor` `minor` made `minor - 1`;
    for any other file, (None, `data`)."""
    name = rel.rsplit("/", 1)[-1]
    if name not in _FORMATTED and not is_graphs_file(rel):
        return None, data
    head = rb'^(\{\s*"format":\s?"tlscope",\s*"format_version":\s?1,\s*"format_minor":\s?)'
    pattern = re.compile(head + str(minor).encode() + rb"(?=,)")
    return name, pattern.sub(rb"\g<1>" + str(minor - 1).encode(), data, count=1)


def _without_tail(data: bytes, tail: bytes) -> bytes:
    """compiles.json without its last field `tail` (as written, with the object's end)."""
    return data[: -len(tail)] + b"}\n" if data.endswith(tail) else data


#: A metrics record's `co_name`, its last field (the entry's `metrics` has one too, never last).
_CO_NAME = re.compile(rb',"co_name":(?:null|"(?:[^"\\]|\\.)*")\}')
#: An export issue's `event_kind`, its last field, as written (no other struct has the key).
_EVENT_KIND = re.compile(rb',"event_kind":(?:null|"(?:[^"\\]|\\.)*")\}')
#: compiles.json's `vllm` and `aot_inductor` when empty, each the last field when added.
_NO_VLLM = b',"vllm":[\n]}\n'
_NO_AOT_INDUCTOR = b',"aot_inductor":[\n]}\n'
#: A compile entry's `capture` (its last field) when null, as written: a JSON string cannot hold
#: this text unescaped, so it is the field.
_NO_CAPTURE = b',"capture":null}'


#: A compile entry's `collective_schedules` (its last field, written only when logged): op names
#: hold no quote.
_SCHEDULES = re.compile(rb',"collective_schedules":\[\[[^\]]*\](?:,\[[^\]]*\])*\]\}')
#: A collective mismatch's `kind` `graph`, its last field (pretty-printed).
_COLLECTIVE_KIND = re.compile(rb',\n +"kind": "graph"(?=\n +\})')


#: A rank overview's `schedules` when empty (multi_rank_summary.json, pretty-printed), its last field.
_NO_SCHEDULES = re.compile(rb',\n +"schedules": \{\}(?=\n +\})')


#: A straggler's `why` when null, its last field (pretty-printed).
_NO_STRAGGLER_WHY = re.compile(rb',\n +"why": null(?=\n +\})')


#: ranks.json's `divergence.said` (pretty-printed, the divergence's last field), empty or not.
_SAID = re.compile(rb',\n    "said": \[(?:\]|\n.*?\n    \])(?=\n  \})', re.S)


#: compiles.json's `slow_compile` first answer (1.43), the last of `first_answers` (one a line).
_SLOW_ANSWER = re.compile(rb',?\n\{"kind":"slow_compile",[^\n]*\}(?=\n\]\}\n\Z)')
#: The same in a rank overview of multi_rank_summary.json (pretty-printed), the last of its list.
_SLOW_OVERVIEW = re.compile(rb',?\n +\{\n +"kind": "slow_compile",\n(?: +"[a-z_]+": [^\n]*\n)+? +\}(?=\n +\])')
_EMPTIED = re.compile(rb'"first_answers": \[\n +\]')
#: ranks.json's `first_answers` lines of that kind (pretty-printed, each ends a line of 6 spaces).
_SLOW_JOB_LINE = re.compile(rb',?\n      \{\n        "kind": "slow_compile",\n.*?\n      \}', re.S)
_NO_JOB_LINES = re.compile(rb'"lines": \[\n    \]')
#: The report's index line of it (its Compiles section's list), and the list when it was alone.
_SLOW_ITEM = re.compile(rb"<li>most compile time: [^\n]*</li>\n")
_NO_ITEMS = b'<ul id="first-answers">\n</ul>\n'
#: A job's landing page: its lines of it (`rank 1: most compile time: …`), the list's title
#: that names the kinds, and the title and list when those lines were all it held.
_SLOW_JOB_ITEM = re.compile(rb"<li>[^<:\n]*: most compile time: [^\n]*</li>\n")
_JOB_TITLE = (b"graph break, first recompile and slowest compile, said", b"graph break and first recompile, said")
_NO_JOB_ITEMS = re.compile(
    rb'<p><strong>First answers, all ranks</strong>[^\n]*</p>\n<ul id="rank-first-answers">\n</ul>\n'
)
#: The line a run prints of it under its counts (stdout).
_SLOW_LINE = re.compile(rb"(?m)^  (?:[^:\n]*: )?most compile time: [^\n]*\n")
#: A job's "First answers, all ranks:" title left with no line under it.
_NO_JOB_LINES_SAID = re.compile(rb"(?m)^First answers, all ranks:\n(?!  )")


def without_143_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.42 wrote it: 1.43 added the first answer `slow_compile` (the slowest
    compile, where its time went), forgiven whatever it says: in compiles.json, ranks.json's lines
    of it, each rank's overview in multi_rank_summary.json and the report's index (the run's
    stdout: `_stdout_same`)."""
    name, data = _minor_back(rel, data, 43)
    if name == "compiles.json":
        return _SLOW_ANSWER.sub(b"", data, count=1)
    if name == "ranks.json":
        return _NO_JOB_LINES.sub(b'"lines": []', _SLOW_JOB_LINE.sub(b"", data))
    base = rel.rsplit("/", 1)[-1]
    if base == "multi_rank_summary.json":
        return _EMPTIED.sub(b'"first_answers": []', _SLOW_OVERVIEW.sub(b"", data))
    if base == "index.html":
        data = _SLOW_ITEM.sub(b"", data, count=1).replace(_NO_ITEMS, b"", 1)
        data = _SLOW_JOB_ITEM.sub(b"", data).replace(_JOB_TITLE[0], _JOB_TITLE[1], 1)
        return _NO_JOB_ITEMS.sub(b"", data, count=1)
    return data


def _stdout_same(old: bytes, new: bytes) -> bool:
    """The run's stdout alike but for the 1.43 `slow_compile` lines (a job's after the ranks that
    say them, its first answers' title gone with them when they were all it said) and the 1.44
    failure reason's announced error and first failure of an id a later compile got past."""
    # Newest first, compared after each, as `_same` does: a base that said 1.43's lines keeps them.
    new = _ANNOUNCED.sub(rb"\g<1>", _GOT_PAST_LINE.sub(b"", new))
    new = _VIOLATED.sub(rb"\g<1>", _VIOLATION_AT.sub(rb"\g<1>\g<2>", _FAILED_FN_AT.sub(rb"\g<1>\g<2>", new)))
    new = _STACK_NAMED.sub(rb"\g<1>", _FILLED.sub(rb"\g<1>", new))
    return old == new or old == _NO_JOB_LINES_SAID.sub(b"", _SLOW_LINE.sub(b"", new))


#: A failure's announced error joined to its announcement (1.44), e.g. `backend='b' raised:
#: RuntimeError: boom`, in JSON (to the string's end), HTML (to the tag) or text (to the line's end).
_ANNOUNCED = re.compile(rb"(raised:) [A-Za-z_][\w.]*(?:Error|Exception|Failed|Failure)\b[^\"<\n]*")


#: 1.44's first failure of an id a later compile got past, in compiles.json (one item a line),
#: the report's index and stdout.
_GOT_PAST = rb"first failure: [^\n]*; a later compile numbered [^\n]*"
_GOT_PAST_ANSWER = re.compile(rb'\n\{"kind":"failure","compile_id":"[^"]*","text":"' + _GOT_PAST + rb"\}(?:,(?=\n))?")
_GOT_PAST_ITEM = re.compile(rb"<li>" + _GOT_PAST + rb"</li>\n")
_GOT_PAST_LINE = re.compile(rb"(?m)^  " + _GOT_PAST + rb"\n")


#: 1.44's constraint violation: the list's first item joined to the reason's first line (whose
#: end, TORCH_LOGS="+dynamic"., is written in JSON, HTML or text), the user's line from the
#: reason's `User stack:` in the entry's failure and its first answer (null and unsaid before).
_VIOLATED = re.compile(rb'(TORCH_LOGS=(?:\\"|&#34;|&quot;|")\+dynamic(?:\\"|&#34;|&quot;|")\.) [^"<\n]*')
_VIOLATION_FRAME = re.compile(
    rb'("type":"ConstraintViolationError","reason":"(?:[^"\\]|\\.)*","user_frame":)\{[^{}]*\}'
)
_VIOLATION_AT = re.compile(rb"(first failure: [^\n\"<]*? failed) at [^\n\"<]*?(: ConstraintViolationError: )")
#: 1.44's failure at the recompile limit says what filled it.
_FILLED = re.compile(rb"(recompile limit exceeded); \S+ had compiled \d+ times: [^\n\"<]*")
#: 1.44 names a resume function's `___stackN` by the graph break that left it.
_STACK_NAMED = re.compile(rb"the value the graph break at [^ \n\"<]+ left on the stack \((___stack\d+)\)")
#: 1.44's first failure with no user line names where its function is: `[0/0] f (a.py:4) failed:`.
_FAILED_FN_AT = re.compile(
    rb"(first failure: \[[^\]\n]*\](?: [^ \n\"<]+)?) \((?:called from )?[^()\n\"<]*:\d+\)( failed: )"
)


#: A compile entry's `module` (1.46), its last field, as written.
_MODULE = re.compile(rb',"module":"(?:[^"\\]|\\.)*"(?=\})')


#: 1.46's words for `metrics_missing`, and 1.47's vocabulary entries in their place.
_MISSING_146 = (
    "No compilation metrics were logged for this compile id and no later attempt explains why: the "
    "process may have died or the log been cut, or the id holds only runtime events, or it is a "
    "compiled-autograd id with no frame (`[!N/-/-]`, holding the compiled backward graphs)."
)


def _vocabulary_147() -> tuple[bytes, bytes]:
    """compiles.json's `statuses` entries for `captured` and `metrics_missing` as 1.47 writes them, and as 1.46 did."""
    from tlscope.format.status import STATUSES

    def entry(name: str, words: str) -> bytes:
        return json.dumps({name: words}, ensure_ascii=False, separators=(",", ":"))[1:-1].encode()

    new = entry("captured", STATUSES["captured"]) + b"," + entry("metrics_missing", STATUSES["metrics_missing"])
    return new, entry("metrics_missing", _MISSING_146)


#: A compile entry's `backward_s` (1.49), after `time_fix` or `unfinished` or `module`, as written.
_BACKWARD_S = re.compile(rb',"backward_s":-?[0-9][0-9.eE+-]*(?=[,}])')


def without_150_changes(rel: str, data: bytes) -> bytes:
    """`data` as format 1.49 wrote it but for its minor (not forgiven: a graph break's `fix` (a
    logging call, a print, a training step compiled whole) and the `graph_break` line's clause,
    torch's hint to remove a `graph_break()` call torch.optim makes, a library function's failure
    named with the user's line that called it and the break there whose fix avoids it)."""
    return _minor_back(rel, data, 50)[1]


def without_149_changes(rel: str, data: bytes) -> bytes:
    """`data` as format 1.48 wrote it but for its minor and a compile's `backward_s`, the sum of
    records the file already holds (not forgiven: a slow compile's `time_fix` and the
    `slow_compile` line's clause, the fix kind `tensor_lr`, a big Dynamo graph's `busiest_line`,
    an argument list's `change_code`, a failure's callees)."""
    name, data = _minor_back(rel, data, 49)
    return _BACKWARD_S.sub(b"", data) if name == "compiles.json" else data


def without_148_changes(rel: str, data: bytes) -> bytes:
    """`data` as format 1.47 wrote it but for what 1.48 says anew: a cell of `input_shapes` gives
    the stride its recompile names in `reason_stride`, not `reason_dim` (moved back; not forgiven:
    a float's row left out, stride changes left out of `dynamic`, no `size_guard` fix from a guard
    on an input's layout or two sizes' equality, the fixes `recompile_limit`, `dynamic_parameters`,
    an int's `change_code` and `mark_unbacked` after a size-1 entry, `mark_unbacked`'s module, a
    module list's `change_code`, a compile's `unfinished` and its first answer)."""
    name, data = _minor_back(rel, data, 48)
    if name != "compiles.json":
        return data
    return _REASON_STRIDE.sub(rb'"reason_dim":\g<1>', data).replace(b',"reason_stride":null', b"")


#: A cell's `reason_stride` (1.48), after its `reason_dim`, null when a stride is named.
_REASON_STRIDE = re.compile(rb'"reason_dim":null,"reason_stride":(\d+)')


def without_147_changes(rel: str, data: bytes) -> bytes:
    """`data` as format 1.46 wrote it but for what 1.47 says anew: the status vocabulary's
    `captured` (in `statuses` and `status_order`) is removed, `metrics_missing`'s words restored,
    each recompile change's `name` removed (not forgiven: the report's changes named by it, a
    compiled-autograd capture's status `captured` and time, `CompiledAutogradN` naming its
    graph's compile, and the equals of the most frequent graph break)."""
    name, data = _minor_back(rel, data, 47)
    if name != "compiles.json":
        return data
    new, old = _vocabulary_147()
    data = data.replace(new, old, 1).replace(b'"ok","captured","metrics_missing"', b'"ok","metrics_missing"', 1)
    return _CHANGE_NAME.sub(rb"\g<1>}", data)


#: A recompile change's `name` (1.47), last in the change, after its `after`.
_STRING = rb'(?:null|"(?:[^"\\]|\\.)*")'
_CHANGE_NAME = re.compile(
    rb'("what":' + _STRING + rb',"before":' + _STRING + rb',"after":' + _STRING + rb'),"name":"(?:[^"\\]|\\.)*"\}'
)


def without_146_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.45 wrote it: 1.46 added a compile entry's `module` (last), the class
    torch's wrapper `inner` compiled (not forgiven: the sentences naming it `Sequential.forward`)."""
    name, data = _minor_back(rel, data, 46)
    return _MODULE.sub(b"", data) if name == "compiles.json" else data


def without_145_changes(rel: str, data: bytes) -> bytes:
    """`data` as format 1.44 wrote it but for what 1.45 says anew (not forgiven: the first answer
    `no_graph`, a global-state failure's parts in words, module attributes named as the code does)."""
    return _minor_back(rel, data, 45)[1]


def without_144_changes(rel: str, data: bytes) -> bytes:
    """`data` as format 1.43 wrote it: 1.44's failure `reason` joins the error to a first line
    that only announces it (`backend='b' raised:`), forgiven in every file that says the reason;
    and the first failure of an id a later compile got past (not said before)."""
    name, data = _minor_back(rel, data, 44)
    # The new answer first: its text holds the joined reason, which would no longer match after.
    if name == "compiles.json":
        data = _GOT_PAST_ANSWER.sub(b"", data, count=1)
    elif rel.rsplit("/", 1)[-1] == "index.html":
        data = _GOT_PAST_ITEM.sub(b"", data, count=1).replace(_NO_ITEMS, b"", 1)
    data = _VIOLATION_AT.sub(rb"\g<1>\g<2>", _VIOLATION_FRAME.sub(rb"\g<1>null", data))
    data = _STACK_NAMED.sub(rb"\g<1>", _FAILED_FN_AT.sub(rb"\g<1>\g<2>", _FILLED.sub(rb"\g<1>", data)))
    return _VIOLATED.sub(rb"\g<1>", _ANNOUNCED.sub(rb"\g<1>", data))


#: ranks.json's `first_answers`, its last field (pretty-printed), whatever it holds.
_RANK_ANSWERS = re.compile(rb',\n  "first_answers": (?:null|\{\n.*?\n  \})(?=\n\}\n?\Z)', re.S)


def without_142_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.41 wrote it: 1.42 added ranks.json's `first_answers` (last), forgiven
    whatever it says: each rank's compiles.json `first_answers` (compared as they are), grouped."""
    name, data = _minor_back(rel, data, 42)
    return _RANK_ANSWERS.sub(b"", data, count=1) if name == "ranks.json" else data


#: compiles.json's `first_answers`, its last field, whatever it holds (one item a line).
_FIRST_ANSWERS = re.compile(rb',"first_answers":\[(?:,?\n\{.*?\})*\n\]\}\n\Z', re.S)


def without_141_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.40 wrote it: 1.41 added compiles.json's `first_answers` (last),
    forgiven whatever it says: the lines the run prints under its counts (stdout and the report's
    index, compared as they are), with the compile each is about."""
    name, data = _minor_back(rel, data, 41)
    return _FIRST_ANSWERS.sub(b"}\n", data, count=1) if name == "compiles.json" else data


def without_140_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.39 wrote it: 1.40 added ranks.json's `divergence.said` (last), forgiven
    whatever it says: the order and titles of lists the file already holds, not a new fact."""
    name, data = _minor_back(rel, data, 40)
    return _SAID.sub(b"", data, count=1) if name == "ranks.json" else data


#: A symbol's `op` when null, its last field (compiles.json is written compact).
_NO_SYMBOL_OP = b',"op":null}'


def without_139_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.38 wrote it: 1.39 added compiles.json's `symbols[].op` (last), forgiven
    when null; an operator said, and the `why` `data_dependent` said with it, are new (not
    forgiven)."""
    name, data = _minor_back(rel, data, 39)
    return data.replace(_NO_SYMBOL_OP, b"}") if name == "compiles.json" else data


def without_138_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.37 wrote it: 1.38 added ranks.json's settings mismatches of one compile
    (`divergence.settings[].id`), said where a compile ran under other settings on some of the
    ranks whose first compiles agree (not forgiven); nothing else."""
    return _minor_back(rel, data, 38)[1]


def without_137_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.36 wrote it: 1.37 added ranks.json's graph mismatch kind `output_code`,
    said where ranks' output code differs (not forgiven); nothing else."""
    return _minor_back(rel, data, 37)[1]


#: ranks.json's `divergence.caches` when empty, the divergence's last field (pretty-printed).
_NO_CACHES = re.compile(rb',\n    "caches": \[\]\n  \}')


def without_136_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.35 wrote it: 1.36 added ranks.json's `divergence.caches` (last),
    forgiven when empty; one said is new (not forgiven)."""
    name, data = _minor_back(rel, data, 36)
    return _NO_CACHES.sub(b"\n  }", data, count=1) if name == "ranks.json" else data


def without_135_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.34 wrote it: 1.35 added each straggler's `why` in ranks.json (last),
    forgiven when null; one said is new (not forgiven)."""
    name, data = _minor_back(rel, data, 35)
    return _NO_STRAGGLER_WHY.sub(b"", data) if name == "ranks.json" else data


def without_134_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.33 wrote it: 1.34 added compiles.json's `collective_schedules` where a
    compile logged one, each collective mismatch's `kind` (last), forgiven when `graph`, and each
    rank overview's `schedules` in multi_rank_summary.json, forgiven when empty; a `schedule`
    mismatch is new (not forgiven)."""
    if rel == "multi_rank_summary.json":
        return _NO_SCHEDULES.sub(b"", data)
    name, data = _minor_back(rel, data, 34)
    if name == "compiles.json":
        return _SCHEDULES.sub(b"}", data)
    return _COLLECTIVE_KIND.sub(b"", data) if name == "ranks.json" else data


def without_133_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.32 wrote it: 1.33 added ranks.json's `rows[].columns`, written only where
    ranks number functions differently, and named the groups' and `not_on_every_rank`'s ids by
    function there (not forgiven); nothing else."""
    return _minor_back(rel, data, 33)[1]


def without_132_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.31 wrote it: 1.32 added two values of compiles.json's `symbols[].why`,
    said where it was null (not forgiven); nothing else."""
    return _minor_back(rel, data, 32)[1]


#: ranks.json's `divergence.frames` when empty, the divergence's last field (pretty-printed).
_NO_FRAMES = re.compile(rb',\n    "frames": \[\]\n  \}')
#: A graph group's `id`, its last field (after its `payload`).
_GROUP_ID = re.compile(rb'("payload": (?:null|"[^"\n]*")),\n +"id": "[^"\n]*"')


def without_131_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.30 wrote it: 1.31 added ranks.json's `divergence.frames` (last),
    forgiven when empty, and each graph group's `id` (last); one said is new (not forgiven)."""
    name, data = _minor_back(rel, data, 31)
    if name != "ranks.json":
        return data
    return _GROUP_ID.sub(rb"\g<1>", _NO_FRAMES.sub(b"\n  }", data, count=1))


#: ranks.json's `divergence.graphs` and `.settings` when empty, the divergence's last fields
#: (pretty-printed).
_NO_GRAPHS = re.compile(rb',\n    "graphs": \[\],\n    "settings": \[\]\n  \}')


def without_130_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.29 wrote it: 1.30 added ranks.json's `divergence.graphs` and
    `.settings` (last), forgiven when empty; one said is new (not forgiven)."""
    name, data = _minor_back(rel, data, 30)
    return _NO_GRAPHS.sub(b"\n  }", data, count=1) if name == "ranks.json" else data


#: compiles.json's `dynamic` and `settings` when null, its last fields when added.
_NO_DYNAMIC = b',"dynamic":null,"settings":null}\n'
#: A symbol's `why` when null, its last field (after its `retrace_of`).
_NO_WHY = re.compile(rb'("retrace_of":(?:null|"(?:[^"\\]|\\.)*")),"why":null\}')


def without_129_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.28 wrote it: 1.29 added compiles.json's `dynamic` and `settings` (last)
    and each symbol's `why` (last), forgiven when null; one said is new (not forgiven)."""
    name, data = _minor_back(rel, data, 29)
    if name != "compiles.json":
        return data
    data = data[: -len(_NO_DYNAMIC)] + b"}\n" if data.endswith(_NO_DYNAMIC) else data
    return _NO_WHY.sub(rb"\g<1>}", data)


#: An export call's `trace_id`, its last field (after its `issues` list).
_TRACE_ID = re.compile(rb'\],"trace_id":(?:null|"(?:[^"\\]|\\.)*")\}')


def without_128_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.27 wrote it: 1.28 added each export call's `trace_id` (last); a call
    `traced` is new (not forgiven)."""
    name, data = _minor_back(rel, data, 28)
    return _TRACE_ID.sub(b"]}", data) if name == "compiles.json" else data


#: A metrics record's `co_filename` and `co_firstlineno`, its last fields (after its `co_name`).
_CO_PLACE = re.compile(rb',"co_filename":(?:null|"(?:[^"\\]|\\.)*"),"co_firstlineno":(?:null|-?\d+)\}')


def without_127_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.26 wrote it: 1.27 added each metrics record's `co_filename` and
    `co_firstlineno` (last)."""
    name, data = _minor_back(rel, data, 27)
    return _CO_PLACE.sub(b"}", data) if name == "compiles.json" else data


#: A cache lookup's two times, its last fields (the lookup's `event` object before them).
_CACHE_TIMES = re.compile(rb',"time_saved_s":(?:null|[-+.eE0-9]+),"time_taken_s":(?:null|[-+.eE0-9]+)\}')


def without_126_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.25 wrote it: 1.26 added each cache lookup's `time_saved_s` and
    `time_taken_s` (last)."""
    name, data = _minor_back(rel, data, 26)
    return _CACHE_TIMES.sub(b"}", data) if name == "compiles.json" else data


#: A graph_dump payload reference's `name`, its last field, written only when set, after the
#: reference's `log_line` (no other struct has that pair).
_REF_NAME = re.compile(rb'(,"log_line":\d+),"name":"(?:[^"\\]|\\.)*"\}')


def without_125_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.24 wrote it: 1.25 added a graph_dump payload reference's `name` (last)."""
    name, data = _minor_back(rel, data, 25)
    return _REF_NAME.sub(rb"\1}", data) if name == "compiles.json" else data


def without_124_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.23 wrote it: 1.24 added each metrics record's `co_name` (last)."""
    name, data = _minor_back(rel, data, 24)
    return _CO_NAME.sub(b"}", data) if name == "compiles.json" else data


def without_123_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.22 wrote it: 1.23 added each export issue's `event_kind` (last)."""
    name, data = _minor_back(rel, data, 23)
    return _EVENT_KIND.sub(b"}", data) if name == "compiles.json" else data


def without_122_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.21 wrote it: 1.22 added compiles.json's `vllm` (last), empty but in a log
    of vLLM's compiles."""
    name, data = _minor_back(rel, data, 22)
    return _without_tail(data, _NO_VLLM) if name == "compiles.json" else data


def without_121_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.20 wrote it: 1.21 added compiles.json's `aot_inductor` (last), empty but
    in a log of AOT Inductor compiles (whose `[-/-]` entry changed too: not forgiven)."""
    name, data = _minor_back(rel, data, 21)
    return _without_tail(data, _NO_AOT_INDUCTOR) if name == "compiles.json" else data


def without_120_additions(rel: str, data: bytes) -> bytes:
    """`data` as format 1.19 wrote it: 1.20 added each compile entry's `capture` (last), null for
    every compile but a fullgraph capture's (whose entry's other fields change too: not forgiven)."""
    name, data = _minor_back(rel, data, 20)
    return data.replace(_NO_CAPTURE, b"}") if name == "compiles.json" else data


def is_graphs_file(rel: str) -> bool:
    """A file of graphs/ (1.11), in a single log's folder or a job's."""
    return rel == "graphs" or rel.startswith("graphs/")


#: Each format addition's remover, newest first: a file of a base written before an addition is
#: compared with the new one once every later addition is removed.
_ADDITIONS = (
    without_150_changes,
    without_149_changes,
    without_148_changes,
    without_147_changes,
    without_146_additions,
    without_145_changes,
    without_144_changes,
    without_143_additions,
    without_142_additions,
    without_141_additions,
    without_140_additions,
    without_139_additions,
    without_138_additions,
    without_137_additions,
    without_136_additions,
    without_135_additions,
    without_134_additions,
    without_133_additions,
    without_132_additions,
    without_131_additions,
    without_130_additions,
    without_129_additions,
    without_128_additions,
    without_127_additions,
    without_126_additions,
    without_125_additions,
    without_124_additions,
    without_123_additions,
    without_122_additions,
    without_121_additions,
    without_120_additions,
    without_119_additions,
    without_118_additions,
    without_117_additions,
    without_115_additions,
    without_114_additions,
    without_112_additions,
    without_111_additions,
)


#: 1.44's rule of which guard failure explains a recompile says why in other words: the choice
#: and its words are masked on both sides (a changed choice still shows, in `compared_with`,
#: `changes` and the explanation said).
_CHOSEN = re.compile(rb'"recommended":\{"index":\d+,"why":"(?:[^"\\]|\\.)*"\}')
_RECOMMENDED_WHY = re.compile(rb'(<p class="answers-why">Why: <strong>[^\n]*?</strong>) <small>\([^\n]*?\)</small>')


def recommended_masked(data: bytes) -> bytes:
    """`data` with each recompile's recommended failure (which, and why) masked."""
    return _RECOMMENDED_WHY.sub(rb"\g<1>", _CHOSEN.sub(b'"recommended":{}', data))


def _same(rel: str, old: bytes, new: bytes) -> bool:
    if old == new:
        return True
    masked = recommended_masked(old)
    for without in _ADDITIONS:
        new = without(rel, new)
        if old == new or masked == recommended_masked(new):
            forgiven.append(rel)
            return True
    newer = without_110_additions(rel, new)
    if old in (newer, without_19_additions(rel, newer)):
        forgiven.append(rel)
        return True
    return False


def differences(base: Outcome, new: Outcome) -> list[str]:
    """Human-readable differences between two outcomes ([] when identical)."""
    found: list[str] = []
    if base.status != new.status:
        found.append(f"exit status {base.status} -> {new.status}")
    for stream in ("stdout", "stderr"):
        old, now = normalise(getattr(base, stream)), normalise(getattr(new, stream))
        if old != now and stream == "stdout" and _stdout_same(old, now):
            forgiven.append(stream)
        elif old != now:
            found.append(f"{stream} differs:\n{_diff(old, now)}")
    for rel in sorted(set(base.tree) - set(new.tree)):
        found.append(f"missing in the new tree: {rel}")
    for rel in sorted(set(new.tree) - set(base.tree)):
        if is_graphs_file(rel):
            forgiven.append(rel)
            continue
        found.append(f"only in the new tree: {rel}")
    for rel in sorted(set(base.tree) & set(new.tree)):
        old_item, new_item = base.tree[rel], new.tree[rel]
        if isinstance(old_item, bytes) and isinstance(new_item, bytes):
            if not _same(rel, normalise(old_item), normalise(new_item)):
                found.append(f"{rel} differs:\n{_diff(normalise(old_item), normalise(new_item))}")
        elif old_item != new_item:
            found.append(f"{rel}: {_kind(old_item)} -> {_kind(new_item)}")
    return found


def _kind(item: bytes | str) -> str:
    return "file" if isinstance(item, bytes) else item


def _diff(old: bytes, new: bytes, limit: int = 12) -> str:
    a = old.decode("utf-8", "replace").splitlines()
    b = new.decode("utf-8", "replace").splitlines()
    lines = list(difflib.unified_diff(a, b, "base", "new", n=1, lineterm=""))
    shown = [line[:200] for line in lines[:limit]]
    return "\n".join(f"    {line}" for line in shown) + ("\n    ..." if len(lines) > limit else "")


def select(cases: Sequence[Case], patterns: Sequence[str] | None) -> list[Case]:
    if not patterns:
        return list(cases)
    return [c for c in cases if any(p in c.name for p in patterns)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="main", help="git revision to compare against (default: main)")
    parser.add_argument("--new", type=Path, default=REPO / "src", help="src/ folder to check (default: ours)")
    parser.add_argument("--cases", nargs="*", help="only cases whose name contains one of these")
    parser.add_argument("--control", action="store_true", help="compare the base with itself (what is run-specific)")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case, not only failures")
    args = parser.parse_args(argv)
    cases = select(discover(), args.cases)
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    if not cases:
        print("no cases", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tlscope-identity-") as tmp:
        scratch = Path(tmp)
        base_src = extract(args.base, scratch / "base")
        new_src = base_src if args.control else args.new.resolve()
        failed = 0
        files = 0
        for i, case in enumerate(cases):
            # The same folder for both sides, one after the other: paths in the outputs agree.
            base = run(base_src, case, scratch / f"{i}")
            shutil.rmtree(scratch / f"{i}")
            new = run(new_src, case, scratch / f"{i}")
            found = differences(base, new)
            files += sum(isinstance(v, bytes) for v in base.tree.values())
            shutil.rmtree(scratch / f"{i}")
            if found:
                failed += 1
                print(f"DIFFERS  {case.name}")
                for item in found[:20]:
                    print(f"  {item}")
            elif args.verbose:
                print(f"same     {case.name} (exit {base.status}, {len(base.tree)} paths)")
    label = "base vs base" if args.control else f"{args.base} vs {args.new}"
    extra = f"; {len(forgiven)} of them differ by the format additions only" if forgiven else ""
    print(f"{label}: {len(cases) - failed}/{len(cases)} cases identical ({files} files compared{extra})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
