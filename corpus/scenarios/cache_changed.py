"""cache_changed: why a warm start compiled again. Two processes share one
TORCHINDUCTOR_CACHE_DIR. Each compiles `scaled` (cacheable) and `branchy` (a torch.cond, which
neither the FX graph cache nor AOTAutograd's can store: a bypass with its reason, every run).
run1/ fills the caches; run2/ sets one Inductor option first (`fallback_random`), so the FX graph
cache key of `scaled` changes in that one part and both caches miss again."""

from __future__ import annotations

import os
import subprocess
import sys

import torch


def scaled(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 2 + 1


def branchy(x: torch.Tensor) -> torch.Tensor:
    def positive(t: torch.Tensor) -> torch.Tensor:
        return t.sin() * 2

    def negative(t: torch.Tensor) -> torch.Tensor:
        return t.cos() + 1

    return torch.cond(x.sum() > 0, positive, negative, (x,))


def workload(changed: bool) -> None:
    if changed:
        # An option in the FX graph cache's key: the cached entry no longer matches.
        torch._inductor.config.fallback_random = True
    torch.manual_seed(0)
    torch.compile(scaled)(torch.randn(4, 8))
    torch.compile(branchy)(torch.randn(4, 8))


def main() -> None:
    if "--child" in sys.argv:
        workload("--changed" in sys.argv)
        return
    trace_root = os.environ["TORCH_TRACE"]
    for run, extra in (("run1", []), ("run2", ["--changed"])):
        env = dict(os.environ, TORCH_TRACE=os.path.join(trace_root, run))
        # Both runs share the inherited TORCHINDUCTOR_CACHE_DIR (generate.py's, empty at the start).
        subprocess.run([sys.executable, __file__, "--child", *extra], env=env, check=True)


if __name__ == "__main__":
    main()
