"""caches: the same small training step run in two processes that share one
TORCHINDUCTOR_CACHE_DIR: the first misses and fills the FX graph and AOTAutograd caches
(run1/), the second hits them (run2/)."""

from __future__ import annotations

import os
import subprocess
import sys

import torch


def workload() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 2))
    compiled = torch.compile(model)
    compiled(torch.randn(4, 8)).sum().backward()


def main() -> None:
    if "--child" in sys.argv:
        workload()
        return
    trace_root = os.environ["TORCH_TRACE"]
    for run in ("run1", "run2"):
        env = dict(os.environ, TORCH_TRACE=os.path.join(trace_root, run))
        # Both runs share the inherited TORCHINDUCTOR_CACHE_DIR, so run2 hits run1's entries.
        subprocess.run([sys.executable, __file__, "--child"], env=env, check=True)


if __name__ == "__main__":
    main()
