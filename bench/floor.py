"""A small log's run taken apart: the interpreter, the libraries a parse imports, tlscope on a
3-line log, tlscope on LOG, and tlparse on LOG, interleaved round by round (issue 21).

    python bench/floor.py corpus/traces/simple/*.log.gz --rounds 11
    python bench/floor.py /dev/shm/graph_breaks.log --rounds 9 --callgrind

tlscope's wall time on a small log is mostly fixed cost: the interpreter, then its imports,
then a few milliseconds of first uses; the log's own work comes last. This measures the layers
as separate processes started as the console script is (bench/ab.py's launcher, .pyc files
compiled first), one of each per round in a rotating order, so a load change hits every layer
alike:

* `interpreter`: `python -c pass` (the interpreter and `site`, .pth files included);
* `libraries`: `python -c "import ..."` of every module outside tlscope that a parse of LOG
  imports (listed by a probe run of it: msgspec, Jinja2, the stdlib modules...), in the order
  they were imported, with tlscope's collector threshold: what tlscope could not go below
  without dropping a dependency;
* `tlscope 3 lines`: a parse of LOG's first three lines (the fixed cost: every import and
  first use, hardly any work);
* `tlscope`: a parse of LOG; `tlparse`: tlparse 0.4.3 on LOG (`$TLPARSE_BIN`, or found as
  bench/run.py finds it).

Each line gives the wall and CPU medians (quartiles), and the median of its per-round ratio to
tlparse's wall time. With `--callgrind`, each layer's instructions too (valgrind, one run each
after the timed rounds, PYTHONHASHSEED=0): a figure the load cannot move. Outputs go to a
temporary folder (put TMPDIR on a tmpfs: see bench/README.md, session 9), removed before each run
outside the timed region.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # bench/ is a directory of scripts, not a package
from ab import command
from harness import REPO, Sample

#: Run tlscope on argv in this process, then print the modules outside tlscope it imported.
_PROBE = """
import json, sys
sys.path.insert(0, sys.argv.pop(1))
before = set(sys.modules)
sys.argv = ["tlscope", *sys.argv[1:]]
from tlscope.cli import main
main()
found = [m for m in sys.modules if m not in before and m.split(".")[0] != "tlscope"]
sys.stderr.write("\\nMODULES " + json.dumps(found))
"""

#: The threshold tlscope's console script sets (tlscope.cli.GC_THRESHOLD), so the libraries'
#: figure is what their imports cost inside tlscope.
_IMPORTS = "import gc, importlib\ngc.set_threshold(50_000)\nfor m in {modules!r}:\n    importlib.import_module(m)\n"


def libraries(src: Path, log: Path, out: Path) -> list[str]:
    """The modules outside tlscope that a parse of `log` imports, in import order."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(src), str(log), "-o", str(out), "--no-browser"],
        capture_output=True, text=True, env=env, timeout=300, check=True,
    )  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)
    found: list[str] = json.loads(done.stderr.rpartition("\nMODULES ")[2])
    return [m for m in found if _importable(m)]


def _importable(name: str) -> bool:
    """Names that import as such (not `__main__`, not aliases such as `os.path` set by hand)."""
    return not name.startswith("__") and name not in ("os.path",)


def layers(src: Path, log: Path, tiny: Path, out: Path, tlparse: Path) -> dict[str, list[str]]:
    """Each layer's command line."""
    tlscope = command(src)
    flags = ["-o", str(out), "--no-browser"]
    modules = libraries(src, log, out)
    return {
        "interpreter": [sys.executable, "-c", "pass"],
        "libraries": [sys.executable, "-c", _IMPORTS.format(modules=modules)],
        "tlscope 3 lines": [*tlscope, str(tiny), *flags],
        "tlscope": [*tlscope, str(log), *flags],
        "tlparse": [str(tlparse), str(log), *flags],
    }


def instructions(argv: Sequence[str], out: Path) -> float:
    """Instructions of one run under callgrind, in millions."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind gave no count for {argv[:3]}: {done.stderr[-300:]}")
    return int(found.group(1)) / 1e6


def report(samples: dict[str, list[Sample]], counts: dict[str, float]) -> str:
    reference = samples["tlparse"]
    rows = []
    for name, runs in samples.items():
        walls, cpus = [1000 * s.wall_s for s in runs], [1000 * s.cpu_s for s in runs]
        ratios = [s.wall_s / r.wall_s for s, r in zip(runs, reference, strict=True) if r.wall_s > 0]
        rows.append(
            [name, _spread(walls), _spread(cpus), f"{statistics.median(ratios):.2f}x"]
            + ([f"{counts[name]:.1f}M"] if counts else [])
        )
    header = ["layer", "wall ms median (q1-q3)", "CPU ms median (q1-q3)", "wall / tlparse's (per round)"]
    return harness.markdown_table(header + (["instructions"] if counts else []), rows)


def _spread(values: Sequence[float]) -> str:
    q1, q2, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else (values[0],) * 3
    return f"{q2:.1f} ({q1:.1f}-{q3:.1f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, help="a small log (.gz logs are decompressed first)")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument(
        "--src", type=Path, default=REPO / "src", help="tlscope's src/ to run (default: this checkout's)"
    )
    parser.add_argument("--callgrind", action="store_true", help="count each layer's instructions too (valgrind)")
    args = parser.parse_args(argv)
    tlparse = harness.find_tlparse(REPO / "bench" / ".venv-tlparse")
    harness.compile_bytecode(args.src)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tlscope-floor-") as tmp:
        work = Path(tmp)
        log = harness.decompress_tree(args.log, work / "input" / args.log.name)
        tiny = work / "input" / "three_lines.log"
        with log.open("rb") as whole:
            tiny.write_bytes(b"".join(whole.readline() for _ in range(3)))
        commands = layers(args.src, log, tiny, work / "out", tlparse)
        samples = harness.rotated_rounds(commands, work / "out", args.rounds)
        counts = {name: instructions(cmd, work / "out") for name, cmd in commands.items()} if args.callgrind else {}
    print(f"{args.log.name}, {args.rounds} rounds, 1-minute load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    print(report(samples, counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
