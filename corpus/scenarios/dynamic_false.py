"""dynamic_false: `torch.compile(f, dynamic=False)` called with four batch sizes. Automatic dynamic
shapes is off, so each new size recompiles with the size static (run1/: four compiles). run2/ is
the same program with TORCH_COMPILE_DYNAMIC_SOURCES set to what tlscope's fix for run1 says
(`L['x']:0`), which overrides dynamic=False without changing code: one dynamic compile."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

#: The value run1's recompile fixes name (tests/test_dynamic_why.py checks they agree).
SETTING = "L['x']:0"


def rows(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) + 1


def workload() -> None:
    torch.manual_seed(0)
    f = torch.compile(rows, dynamic=False)
    for n in (4, 5, 6, 7):
        f(torch.randn(n, 3))


def main() -> None:
    if "--child" in sys.argv:
        workload()
        return
    trace_root = os.environ["TORCH_TRACE"]
    for run, extra in (("run1", {}), ("run2", {"TORCH_COMPILE_DYNAMIC_SOURCES": SETTING})):
        env = dict(os.environ, TORCH_TRACE=os.path.join(trace_root, run), **extra)
        subprocess.run([sys.executable, __file__, "--child"], env=env, check=True)


if __name__ == "__main__":
    main()
