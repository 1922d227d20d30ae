"""The `tlscope PATH` command line: inputs, --latest, errors before OUT is touched, the summary.

Every run is in-process through `tlscope.cli.main` except the `python -m tlscope` checks; all
runs pass --no-browser.
"""

from __future__ import annotations

import gzip
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, require_shared

from tlscope import load
from tlscope.cli import main

LOGS = ["comp_metrics.log", "comp_failure.log", "artifacts.log"]


def tlscope(*args: str | Path) -> int:
    return main(["--no-browser", *map(str, args)])


def manifest(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "manifest.json").read_text())
    return data


def copy_logs(directory: Path, names: list[str]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    inputs = require_shared() / "inputs"
    return [Path(shutil.copy2(inputs / name, directory / name)) for name in names]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- what PATH may be ---------------------------------------------------------------------------


def test_a_directory_with_one_log_just_works(tmp_path: Path) -> None:
    [log] = copy_logs(tmp_path / "logs", ["comp_metrics.log"])
    (tmp_path / "logs" / "README.md").write_text("not a log")
    assert tlscope(tmp_path / "logs", "-o", tmp_path / "from_dir") == 0
    assert tlscope(log, "-o", tmp_path / "from_file") == 0
    assert manifest(tmp_path / "from_dir")["inputs"][0]["path"] == str(log)
    assert (tmp_path / "from_dir" / "raw.jsonl").read_bytes() == (tmp_path / "from_file" / "raw.jsonl").read_bytes()


@pytest.mark.parametrize("newest", LOGS)
def test_latest_picks_the_most_recently_modified_log(newest: str, tmp_path: Path) -> None:
    logs = copy_logs(tmp_path / "logs", LOGS)
    for i, log in enumerate(logs):
        # Explicit mtimes, none equal to the copy time: the newest is the parameter, not the last copied.
        os.utime(log, (1_700_000_000 + i, 1_700_000_000 + i))
    os.utime(tmp_path / "logs" / newest, (1_800_000_000, 1_800_000_000))
    assert tlscope(tmp_path / "logs", "--latest", "-o", tmp_path / "out") == 0
    assert manifest(tmp_path / "out")["inputs"][0]["path"] == str(tmp_path / "logs" / newest)


def test_several_logs_without_latest_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_logs(tmp_path / "logs", LOGS)
    assert tlscope(tmp_path / "logs", "-o", tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert "3 logs" in err and "--latest" in err and "comp_metrics.log" in err
    assert not (tmp_path / "out").exists()


def test_latest_with_a_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    [log] = copy_logs(tmp_path, ["comp_metrics.log"])
    assert tlscope(log, "--latest", "-o", tmp_path / "out") == 1
    assert "not a directory" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_directory_without_logs_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert tlscope(tmp_path / "empty", "-o", tmp_path / "out") == 1
    assert "No log files" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_folder_of_runs_names_the_sub_folders_that_hold_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    for name in ("run2", "run1", "notes"):
        (runs / name).mkdir(parents=True)
    for name in ("run1", "run2"):
        (runs / name / "dedicated_log_torch_trace_x.log").write_text("")
    (runs / "notes" / "plot.png").write_bytes(b"")
    assert tlscope(runs, "-o", tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert f"No log files found in directory {runs}; its sub-folders run1, run2 hold logs" in err
    assert str(runs / "run1") in err and "notes" not in err
    assert not (tmp_path / "out").exists()


def test_gz_input_gives_the_same_raw_jsonl(tmp_path: Path) -> None:
    plain = require_shared() / "inputs" / "simple.log"
    packed = tmp_path / "simple.log.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert tlscope(plain, "-o", tmp_path / "a") == 0
    assert tlscope(packed, "-o", tmp_path / "b") == 0
    for name in ("raw.jsonl", "chromium_events.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert snapshot(tmp_path / "a" / "payloads") == snapshot(tmp_path / "b" / "payloads")
    a, b = manifest(tmp_path / "a"), manifest(tmp_path / "b")
    assert (a["inputs"][0]["compressed"], b["inputs"][0]["compressed"]) == (False, True)
    assert a["events"] == b["events"] and a["inputs"][0]["lines"] == b["inputs"][0]["lines"]


# -- errors happen before OUT is touched ----------------------------------------------------------


@pytest.fixture
def old_out(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    assert tlscope(require_shared() / "inputs" / "comp_failure.log", "-o", out) == 0
    (out / "notes.txt").write_text("mine")
    return out


def test_missing_input_touches_nothing(tmp_path: Path, old_out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept, siblings = snapshot(old_out), sorted(tmp_path.iterdir())
    assert tlscope(tmp_path / "nope.log", "-o", old_out, "--overwrite") == 1
    assert "does not exist" in capsys.readouterr().err
    assert tlscope(tmp_path / "nope.log", "-o", tmp_path / "fresh") == 1
    assert snapshot(old_out) == kept and sorted(tmp_path.iterdir()) == siblings


def test_existing_out_without_overwrite(tmp_path: Path, old_out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept, siblings = snapshot(old_out), sorted(tmp_path.iterdir())
    assert tlscope(require_shared() / "inputs" / "simple.log", "-o", old_out) == 1
    assert "--overwrite" in capsys.readouterr().err
    assert snapshot(old_out) == kept and sorted(tmp_path.iterdir()) == siblings


@pytest.mark.parametrize("overwrite", [False, True])
def test_out_that_is_a_file(overwrite: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.write_text("a file, not a folder")
    flags = ["--overwrite"] if overwrite else []
    assert tlscope(require_shared() / "inputs" / "simple.log", "-o", out, *flags) == 1
    assert "not a directory" in capsys.readouterr().err
    assert out.read_text() == "a file, not a folder" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_default_out_is_tl_out_in_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert tlscope(require_shared() / "inputs" / "comp_metrics.log") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tl_out"]
    assert (tmp_path / "tl_out" / "manifest.json").is_file()


# -- the summary paragraph ------------------------------------------------------------------------


def test_summary_paragraph_of_a_clean_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = require_shared() / "inputs" / "simple.log"
    assert tlscope(log, "-o", tmp_path / "out") == 0
    # One paragraph, the compiles' statuses, then how to open the folder in the explorer (issue 20, finding 7).
    text, compiles, *answers, explore = capsys.readouterr().out.strip().split("\n")
    assert compiles == "Compiles: 1 ok."
    # A clean log's only first answer is its compile, which took over a second (format 1.43).
    (slow,) = answers
    assert slow.startswith("  most compile time: [0/0] ") and "the run's only timed compile" in slow
    assert explore.startswith(f"Explore it: tlscope serve {tmp_path / 'out'} ")
    m = manifest(tmp_path / "out")
    events = sum(v["count"] for v in m["events"].values())
    assert text.startswith(f"Read {log} (")
    assert f"{m['inputs'][0]['lines']} lines" in text
    assert f"{events} events of {len(m['events'])} kinds" in text
    assert "1 compile ids" in text and "no problems." in text
    assert f"raw.jsonl ({m['raw_jsonl_events']} events)" in text
    assert f"{m['payloads']['files']} payloads, chromium_events.json ({m['chromium_events']} chromium events)" in text
    # The counts add up for the reader (issue 20): raw.jsonl + chromium events + str entries = events.
    strings, chromium = m["events"]["str"]["count"], m["events"]["chromium_event"]["count"]
    assert m["raw_jsonl_events"] + chromium + strings == events
    assert (
        f"({m['raw_jsonl_events']} in raw.jsonl, {chromium} chromium events, "
        f"{strings} str entries in raw.jsonl's string table)"
    ) in text
    assert re.search(r"\(\d+(\.\d)? (B|KiB|MiB), ", text)  # binary units, named so


@pytest.mark.parametrize("scenario", ["failures", "recompiles", "graph_breaks", "simple"])
def test_the_run_says_the_compiles_statuses_as_compiles_json_counts_them(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "no problems" is about reading the log: a compile that failed, broke or recompiled is said
    on a line of its own, counted as compiles.json has them, most severe first, with where to
    read why (summary)."""
    from tlscope.format.status import STATUS_ORDER, status_words

    (log,) = sorted((REPO / "corpus" / "traces" / scenario).glob("*.log.gz"))
    out = tmp_path / "out"
    assert tlscope(log, "-o", out) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    entries = json.loads((out / "compiles.json").read_text())["compiles"]
    counts = {s: sum(e["status"] == s for e in entries) for s in STATUS_ORDER if s != "outside"}
    said = ", ".join(f"{n} {status_words(s)}" for s, n in counts.items() if n)
    recompiles = sum(e["recompile"] is not None for e in entries)
    if recompiles:
        said += f"; {recompiles} recompile{'s' if recompiles != 1 else ''}"
    trouble = recompiles or any(counts[s] for s in ("failed", "restarted", "graph_break", "metrics_missing"))
    why = f"; why and what to change: tlscope summary {out}" if trouble else ""
    assert lines[1] == f"Compiles: {said}{why}."
    assert (scenario == "simple") != bool(why)


def test_summary_paragraph_names_the_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = require_shared() / "inputs" / "simple_corrupted_json.log"
    assert tlscope(log, "-o", tmp_path / "out") == 0
    text = capsys.readouterr().out.strip()
    m = manifest(tmp_path / "out")
    first = m["problems"]["first"][0]
    assert f"{m['problems']['total']} problems" in text
    assert all(f"{kind} {n}" in text for kind, n in m["problems"]["counts"].items())
    assert f"first at line {first['line']}" in text


def test_summary_separates_the_problem_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = require_shared() / "inputs" / "simple_corrupted_json.log"
    assert tlscope(log, "-o", tmp_path / "out") == 0
    assert "compile ids 2 problems" not in capsys.readouterr().out


def test_verbose_lists_the_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = require_shared() / "inputs" / "simple_corrupted_json.log"
    assert tlscope(log, "-o", tmp_path / "out", "-v") == 0
    err = capsys.readouterr().err
    for p in manifest(tmp_path / "out")["problems"]["first"]:
        assert f"line {p['line']}: {p['kind']}" in err


# -- python -m tlscope -----------------------------------------------------------------------------


def test_python_m_tlscope(tmp_path: Path) -> None:
    log = require_shared() / "inputs" / "comp_metrics.log"
    done = subprocess.run(
        [sys.executable, "-m", "tlscope", str(log), "-o", "out", "--no-browser"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Read {log}")
    assert {"raw.jsonl", "manifest.json", "chromium_events.json", "payloads"} <= {
        p.name for p in (tmp_path / "out").iterdir()
    }
    version = subprocess.run([sys.executable, "-m", "tlscope", "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("tlscope ")


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter (the command's exit is what these tests look at)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_console_main_exits_with_mains_status_objects_frozen() -> None:
    # The command freezes every object before exiting (the final collection then skips them);
    # status and output are main()'s, and atexit handlers still run.
    code = (
        "import atexit, gc, sys; import tlscope.cli as cli\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "cli.main = lambda argv=None: print('ran') or 3\n"
        "cli.console_main()"
    )
    done = _python(code)
    assert (done.returncode, done.stdout.split()) == (3, ["ran", "frozen", "True"]), done.stderr


#: Snippet lines making os._exit write its argument to stdout first: the run left by os._exit,
#: skipping the interpreter's teardown (tlscope.cli._shutdown_done).
_EXIT_WRITES = (
    "import os, sys; real = os._exit\n"
    "os._exit = lambda status: (sys.stdout.write({!r}), sys.stdout.flush(), real(status))\n"
)


def test_console_main_skips_an_idle_shutdown_with_its_output_flushed() -> None:
    # Nothing registered at exit: the command leaves by os._exit, and what main printed without a
    # newline (still buffered) on stdout and stderr comes out all the same, with main's status.
    code = (
        "import sys; import tlscope.cli as cli\n"
        "cli.main = lambda argv=None: print('out', end='') or print('err', end='', file=sys.stderr) or 3\n"
        + _EXIT_WRITES.format(" idle")
        + "cli.console_main()"
    )
    done = _python(code)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out idle", "err")


def test_console_main_waits_for_a_thread_left() -> None:
    # A thread still running (not daemon): the exit waits for it, as before, and what it printed
    # comes out; then the teardown is skipped.
    code = (
        "import os, sys, threading, time; import tlscope.cli as cli\n"
        "def late(): time.sleep(0.2); print('late')\n"
        "cli.main = lambda argv=None: threading.Thread(target=late).start() or 0\n"
        + _EXIT_WRITES.format("fast")
        + "cli.console_main()"
    )
    done = _python(code)
    assert (done.returncode, done.stdout) == (0, "late\nfast"), done.stderr


def test_console_main_leaves_in_the_end_when_a_thread_never_ends() -> None:
    # A thread left waiting forever (a process pool's manager reading half a message from a
    # killed worker): the exit joined it forever and the run never ended. After EXIT_WAIT the
    # command leaves all the same, with main's status and its output flushed.
    code = (
        "import threading; import tlscope.cli as cli\n"
        "cli.EXIT_WAIT = 0.5\n"
        "def main(argv=None):\n"
        "    threading.Thread(target=threading.Event().wait).start()\n"
        "    print('ran', end='')\n"
        "    return 143\n"
        "cli.main = main\n"
        "cli.console_main()"
    )
    started = time.monotonic()
    done = _python(code)
    assert (done.returncode, done.stdout, done.stderr) == (143, "ran", "")
    assert time.monotonic() - started < 30


def test_console_main_runs_the_exit_hooks_then_skips_the_teardown() -> None:
    # What a job's process pool and multiprocessing register: threading's exit hooks run first,
    # then the atexit callbacks, each once, what they print flushed; then os._exit with main's
    # status (the teardown of every module only frees memory).
    code = (
        "import atexit, os, sys, threading; import tlscope.cli as cli\n"
        "def main(argv=None):\n"
        "    threading._register_atexit(print, 'hook')\n"
        "    atexit.register(print, 'atexit', end='')\n"
        "    return 4\n"
        "cli.main = main\n" + _EXIT_WRITES.format(" fast") + "cli.console_main()"
    )
    done = _python(code)
    assert (done.returncode, done.stdout) == (4, "hook\natexit fast"), done.stderr


def test_console_main_takes_the_normal_exit_with_a_daemon_thread_left() -> None:
    # A daemon thread still running after the join: the interpreter's own exit, as before, and
    # the atexit callbacks still run once.
    code = (
        "import atexit, os, sys, threading, time; import tlscope.cli as cli\n"
        "def main(argv=None):\n"
        "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "    atexit.register(print, 'atexit')\n"
        "    return 5\n"
        "cli.main = main\n"
        "os._exit = lambda status: print('fast')\n"
        "cli.console_main()"
    )
    done = _python(code)
    assert (done.returncode, done.stdout) == (5, "atexit\n"), done.stderr


def test_a_reader_that_stops_reading_gets_no_error_message() -> None:
    """`tlscope diff JOB --ranks 0 3 | head -1`: ~115 KB of diff, more than a pipe holds, and the
    reader leaves after one line. The command stops there, quietly (it printed `Error: Broken
    pipe`), with diff's error status."""
    from helpers import CORPUS

    args = [sys.executable, "-m", "tlscope", "diff", str(CORPUS / "ranks_diverge_4"), "--ranks", "0", "3"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 2
    assert first.startswith(b"Ranks diverge") and err == b""


def _backward_s(entry: dict[str, Any]) -> float:
    """The seconds of a compile's backward compiles (its `bwd_compilation_metrics` records)."""
    return sum(r["time_s"] or 0.0 for r in entry["metrics_records"] if r["kind"] == "bwd_compilation_metrics")


def _named(entry: dict[str, Any]) -> str:
    """A compile's function as its sentences say it: by the module torch's wrapper compiled (1.46)."""
    return f"{entry['module']}.forward" if "module" in entry else str(entry["function"]["name"])


@pytest.mark.parametrize("scenario", ["failures", "recompiles", "graph_breaks", "specialized", "simple"])
def test_the_run_says_its_first_answers_under_the_counts(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under the counts, the first answers at the user's own line, each compiles.json's: the first
    failed compile (type, reason, line), the distinct graph break met most often, the first
    recompile's reason in words and its fix (a line to change for a specialisation); the report's
    index and `summary` (its --json `headline`) say the same lines."""
    (log,) = sorted((REPO / "corpus" / "traces" / scenario).glob("*.log.gz"))
    out = tmp_path / "out"
    assert tlscope(log, "-o", out) == 0
    lines = capsys.readouterr().out.strip().split("\n")
    said = lines[2 : next(i for i, line in enumerate(lines) if line.startswith("Explore it:"))]
    data = json.loads((out / "compiles.json").read_text())
    entries = data["compiles"]
    failed = next((e for e in entries if e["status"] == "failed"), None)
    recompiled = next((e for e in entries if e["recompile"] is not None), None)
    breaks = data["graph_breaks"]
    expected = []
    if failed is not None:
        f = failed["failure"]
        where = f"{f['user_frame']['file'].rsplit('/', 1)[-1]}:{f['user_frame']['line']}"
        expected.append(f"  first failure: {failed['id']} {_named(failed)} failed at {where} (")
    if breaks:
        top = max(breaks, key=lambda b: b["count"])
        expected.append(f"  most frequent graph break ({top['count']} time")
    if recompiled is not None:
        fix = recompiled["recompile"]["fix"]
        head = f"  first recompile: {recompiled['id']} {_named(recompiled)}: size of x on dim 0 changed"
        change = "; fix: change the line specialized.py:" if fix["kind"] == "change_code" else f"; fix: {fix['code']}"
        expected.append(head)
        assert change in said[len(expected) - 1]
    timed = [(e["time"]["duration_s"] + _backward_s(e), e) for e in entries if e["time"] and e["status"] != "outside"]
    seconds, slowest = max(timed, key=lambda t: t[0])  # the first among equals
    if seconds >= 1.0:
        # The compile, where the user's code defines it (or reached it: a torch wrapper's), its time.
        where = slowest["user_frame"] if slowest["user_frame"]["file"] != slowest["function"]["file"] else None
        at = f"called from {where['file'].rsplit('/', 1)[-1]}:{where['line']}" if where else None
        at = at or f"{slowest['function']['file'].rsplit('/', 1)[-1]}:{slowest['function']['line']}"
        expected.append(f"  most compile time: {slowest['id']} {_named(slowest)} ({at}) took {seconds:.2f} s")
    assert len(said) == len(expected) and all(line.startswith(e) for line, e in zip(said, expected, strict=True))
    assert (scenario == "simple") == all(line.startswith("  most compile time: ") for line in said)
    # The report's index says them too, in its Compiles section, escaped (log text).
    page = (out / "index.html").read_text()
    listed = (
        re.findall(r"<li>(.*?)</li>", page.split('<ul id="first-answers">', 1)[1].split("</ul>", 1)[0]) if said else []
    )
    assert [html.unescape(item) for item in listed] == [line.strip() for line in said]
    # And `summary` says them (from compiles.json, read back), its --json as `headline`.
    capsys.readouterr()
    assert main(["summary", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["headline"] == [line.strip() for line in said]
    # compiles.json carries them (1.41), each with its kind and the compile it is about, for the
    # explorer to show; `tlscope.load` reads them, and finds them again in a folder before 1.41.
    answers = data["first_answers"]
    assert [a["text"] for a in answers] == [line.strip() for line in said]
    has = {"failure": failed is not None, "graph_break": bool(breaks), "recompile": recompiled is not None}
    has["slow_compile"] = seconds >= 1.0
    kinds = [kind for kind, here in has.items() if here]
    assert [a["kind"] for a in answers] == kinds
    ids = {
        "failure": failed and failed["id"],
        "recompile": recompiled and recompiled["id"],
        "slow_compile": slowest["id"],
    }
    ids["graph_break"] = max(breaks, key=lambda b: b["count"])["compile_ids"][0] if breaks else None
    assert [a["compile_id"] for a in answers] == [ids[k] for k in kinds]
    assert [(a.kind, a.compile_id, a.text) for a in load(out).first_answers] == [
        (a["kind"], a["compile_id"], a["text"]) for a in answers
    ]
    older = dict(data, format_minor=40)
    del older["first_answers"]
    (out / "compiles.json").write_text(json.dumps(older))
    assert [a.text for a in load(out).first_answers] == [line.strip() for line in said]
    if scenario == "failures":
        assert said[0].endswith(": Unsupported: Failed to trace builtin operator")
    if scenario == "graph_breaks":
        assert said[0].endswith(
            "Attempted to copy.deepcopy a tensor at graph_breaks.py:18 (`return copy.deepcopy(t) + 1`)"
        )
