"""Regenerates the trace corpus: runs each scenario in corpus/scenarios/ with TORCH_TRACE set,
redacts and gzips the logs into corpus/traces/<scenario>/, then rewrites corpus/README.md.

    python corpus/generate.py                 # every scenario
    python corpus/generate.py --only simple   # some (repeatable)
    python corpus/generate.py --list

Run from anywhere; needs torch (2.13.0 for the committed corpus) and the tlscope package
(src/ is put on sys.path if it is not installed).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent
SCENARIOS = CORPUS / "scenarios"
TRACES = CORPUS / "traces"
MAX_TOTAL_BYTES = 30 * 1024 * 1024
TIMEOUT_S = 1800

try:
    from tlscope.read import redact
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO / "src"))
    from tlscope.read import redact

sys.path.insert(0, str(CORPUS))
import describe  # noqa: E402

# Variables that would change what torch writes, or where: the scenario decides these itself.
_SCRUB_ENV = (
    "TORCH_TRACE",
    "TORCH_DTRACE",
    "TORCH_LOGS",
    "TORCH_LOGS_OUT",
    "TORCH_COMPILE_DEBUG",
    "INDUCTOR_PROVENANCE",
    "TORCHINDUCTOR_CACHE_DIR",
    "TORCHINDUCTOR_FX_GRAPH_CACHE",
    "TORCHINDUCTOR_AUTOGRAD_CACHE",
    "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS",
    "TORCH_COMPILE_JOB_ID",
    "TORCH_COMPILE_STICKY_PGO_KEY",
    "TORCH_COMPILE_DYNAMIC_SOURCES",
)


def scenario_names() -> list[str]:
    return sorted(p.stem for p in SCENARIOS.glob("*.py") if not p.name.startswith("_"))


def _redactor(scratch: Path, trace: Path, cache: Path) -> redact.Redactor:
    paths: list[redact.Mapping] = []
    for path, placeholder in (
        (cache, "$TORCHINDUCTOR_CACHE_DIR"),
        (trace, "$TORCH_TRACE"),
        (scratch, "$SCRATCH"),
        (REPO, "$CWD"),
    ):
        for variant in {str(path), os.path.realpath(path)}:
            paths.append(redact.Mapping(variant, placeholder))
    auto_paths, users, hosts = redact.auto_mappings()
    return redact.Redactor(paths + auto_paths, users, hosts)


def leaks(text: str) -> list[str]:
    """Machine-identifying strings still in text (the same list tests/test_corpus.py checks)."""
    found = [s for s in ("/root", "/work/", "/tmp/", "/home/", sys.prefix, str(REPO)) if s in text]
    for host in redact._host_names():
        if re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", text):
            found.append(f"host {host}")
    return found


def run_scenario(name: str, keep_raw: bool) -> list[Path]:
    scratch = Path(tempfile.mkdtemp(prefix=f"tlscope-corpus-{name}-"))
    trace, cache = scratch / "trace", scratch / "inductor_cache"
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB_ENV}
    env.update(TORCH_TRACE=str(trace), TORCHINDUCTOR_CACHE_DIR=str(cache), PYTHONHASHSEED="0")
    log = scratch / "output.txt"
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.run(
            [sys.executable, str(SCENARIOS / f"{name}.py")],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=TIMEOUT_S,
            check=False,
        )
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"scenario {name} failed ({proc.returncode}); output in {log}:\n{tail}")
    raw_logs = sorted(trace.rglob("*.log"))
    if not raw_logs:
        raise RuntimeError(f"scenario {name} wrote no trace log under {trace}")
    dest = TRACES / name
    if dest.exists():
        shutil.rmtree(dest)
    written = []
    for raw in raw_logs:
        out_path = dest / raw.relative_to(trace).with_name(raw.name + ".gz")
        out_path.parent.mkdir(parents=True, exist_ok=True)
        stats = redact.redact_file(raw, out_path, _redactor(scratch, trace, cache))
        text = _read_gz(out_path)
        if found := leaks(text):
            raise RuntimeError(f"{out_path} still names the machine: {found}")
        print(f"  {out_path.relative_to(REPO)}: {stats.records} records, {out_path.stat().st_size} bytes")
        written.append(out_path)
    print(f"  {name}: {time.monotonic() - started:.0f}s")
    if keep_raw:
        print(f"  raw logs kept in {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return written


def _read_gz(path: Path) -> str:
    import gzip

    with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the tlscope trace corpus.")
    parser.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="run only this scenario (repeatable)"
    )
    parser.add_argument("--list", action="store_true", help="list scenarios and exit")
    parser.add_argument("--keep-raw", action="store_true", help="keep each scenario's unredacted scratch directory")
    args = parser.parse_args(argv)
    names = scenario_names()
    if args.list:
        print("\n".join(names))
        return 0
    unknown = sorted(set(args.only) - set(names))
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; have {names}")
    for name in args.only or names:
        print(f"scenario {name}", flush=True)
        run_scenario(name, args.keep_raw)
    total = sum(p.stat().st_size for p in TRACES.rglob("*.gz"))
    describe.main([])
    print(f"corpus: {total} bytes gzipped; README rewritten")
    if total > MAX_TOTAL_BYTES:
        print(f"corpus is over {MAX_TOTAL_BYTES} bytes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
