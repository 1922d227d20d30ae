"""One parse in this process: the main thread's CPU (the critical path when another core is
free), the whole process's (every thread) and its workers', and where the pass ends.

    python bench/mainthread.py LOG [--src DIR] [--out DIR]

tlscope moves work that frees the GIL (the input's SHA-256, the raw.log copy) to threads, and
the graphs and the report's pages to worker processes; `bench/ab.py` adds all of it up. This
splits it: `pass` is the main thread's CPU up to the end of the log's pass (FormatWriter.finish),
`end` the rest of the run (the format's, the answers' and the report's last files).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path)
    parser.add_argument("--src", default=str(REPO / "src"), help="the src/ folder whose tlscope to measure")
    parser.add_argument("--out", type=Path, help="where to write (default: a temporary folder, removed)")
    args = parser.parse_args()
    sys.path.insert(0, args.src)
    import tlscope.write.format as format_module
    from tlscope.pipeline.parse import parse_log
    from tlscope.write.run_options import ParseOptions

    marks: dict[str, tuple[float, float]] = {}
    finish = format_module.FormatWriter.finish

    def timed_finish(self: object, reader: object) -> None:
        marks["pass"] = (time.thread_time(), time.perf_counter())
        finish(self, reader)  # type: ignore[arg-type]

    format_module.FormatWriter.finish = timed_finish  # type: ignore[method-assign]
    tmp = Path(tempfile.mkdtemp(prefix="tlscope-mainthread-")) if args.out is None else None
    out = args.out or (tmp / "out")  # type: ignore[operator]
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        parse_log(args.log, out, ParseOptions(), overwrite=True)
        cpu_end, wall_end = time.thread_time(), time.perf_counter()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    pass_cpu, pass_wall = marks["pass"][0] - cpu, marks["pass"][1] - wall
    end_cpu = cpu_end - marks["pass"][0]
    print(
        f"main thread CPU: pass {pass_cpu:.2f} s, end {end_cpu:.2f} s, total {cpu_end - cpu:.2f} s | "
        f"process CPU (imports too) {own.ru_utime + own.ru_stime:.2f} s, "
        f"workers {children.ru_utime + children.ru_stime:.2f} s | wall {wall_end - wall:.2f} s (pass {pass_wall:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
