"""pgo: why a dimension is dynamic that nobody marked, and how to make it dynamic from the start.
Three processes share one TORCHINDUCTOR_CACHE_DIR. run1/ (TORCH_COMPILE_JOB_ID set) calls
`shaped` with a new batch size and a new int: torch recompiles and makes dim 0 of x and k dynamic
(automatic dynamic shapes), and writes its PGO profile. run2/ (the same job id) reads that profile
first, so its first compile is already dynamic: nothing in run2's own calls asked for it. run3/
(no job id) sets TORCH_COMPILE_DYNAMIC_SOURCES to what tlscope recommends from run1
(`L['x']:0,L['k']`): one dynamic compile, dim 1 of x kept static."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

#: What `tlscope summary` recommends for run1 (tests/test_dynamic_why.py checks they agree).
RECOMMENDED = "L['x']:0,L['k']"


def shaped(x: torch.Tensor, k: int) -> torch.Tensor:
    return torch.relu(x) * k


def workload() -> None:
    torch.manual_seed(0)
    f = torch.compile(shaped)
    for rows, k in ((4, 2), (6, 3), (8, 4)):
        f(torch.randn(rows, 8), k)


def main() -> None:
    if "--child" in sys.argv:
        workload()
        return
    trace_root = os.environ["TORCH_TRACE"]
    runs = (
        ("run1", {"TORCH_COMPILE_JOB_ID": "tlscope-pgo"}),
        ("run2", {"TORCH_COMPILE_JOB_ID": "tlscope-pgo"}),
        ("run3", {"TORCH_COMPILE_DYNAMIC_SOURCES": RECOMMENDED}),
    )
    for run, extra in runs:
        env = dict(os.environ, TORCH_TRACE=os.path.join(trace_root, run), **extra)
        # All share the inherited TORCHINDUCTOR_CACHE_DIR (generate.py's, empty at the start):
        # the local PGO profile is kept there (dynamo/code_state_<job id>.pkl).
        subprocess.run([sys.executable, __file__, "--child"], env=env, check=True)


if __name__ == "__main__":
    main()
