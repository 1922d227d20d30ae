"""CPU of the compile fold with and without issue 23's additions (the symbols fold, each size
recompile's fix, the "did the sizes change?" tables), over logs held in memory (the reader's time
left out), in interleaved rounds: median and range.

    python bench/dynamic_dims.py LOG [LOG ...]

"Without" switches the additions off in-process (no symbol event folded, no fix, no table), so
both sides run the same code otherwise.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import tlscope.analyse.fold.compile_fold as compile_fold
import tlscope.analyse.fold.compileresult as compileresult
from tlscope.analyse.fold.shapes import input_shapes
from tlscope.read.reader import LogReader

ROUNDS = 7


def main(argv: list[str]) -> int:
    records = [list(LogReader(Path(p))) for p in argv]
    keys, attach = compile_fold.SYMBOL_KEYS, compileresult.attach_fixes

    def run(additions: bool) -> float:
        compile_fold.SYMBOL_KEYS = keys if additions else frozenset()
        compileresult.attach_fixes = attach if additions else (lambda compiles, symbols: None)
        start = time.process_time()
        for log in records:
            fold = compile_fold.CompileFold()
            for record in log:
                fold.feed(record)
            found = compileresult.entries(fold)
            if additions:
                input_shapes(found)
        return time.process_time() - start

    without, with_ = [], []
    for _ in range(ROUNDS):
        without.append(run(False))
        with_.append(run(True))
    print(f"{sum(map(len, records))} records, {ROUNDS} interleaved rounds, CPU seconds")
    for name, xs in (("without", without), ("with", with_)):
        print(f"{name}: median {statistics.median(xs) * 1000:.1f} ms ({min(xs) * 1000:.1f}-{max(xs) * 1000:.1f})")
    print(f"overhead of the compile fold: {100 * (statistics.median(with_) / statistics.median(without) - 1):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
