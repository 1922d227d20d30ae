"""killed: a training step whose compile never ends because the process is killed inside it, as
the kernel's out-of-memory killer or a job scheduler's time limit does. The step compiles with a
backend that sends its own process SIGKILL once Dynamo hands it the graph (standing in for an
Inductor compile that runs out of memory), so the log stops inside the compile: no metrics record,
the `dynamo`, `compile_attempt` and `backend_compile` spans begun and never ended. tlscope's first
answer (`unfinished`) says where the log ends and what that means. The scenario's own process runs
the step in a child and exits cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import torch


def killing_backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
    os.kill(os.getpid(), signal.SIGKILL)  # the OOM killer: no exception, no cleanup, no more logging
    return gm.forward


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w).sum()


def child() -> None:
    compiled = torch.compile(step, backend=killing_backend)
    compiled(torch.randn(8, 8), torch.randn(8, 8))


def main() -> None:
    if "--child" in sys.argv:
        child()
        return
    done = subprocess.run([sys.executable, __file__, "--child"], check=False)
    assert done.returncode == -signal.SIGKILL, done.returncode


if __name__ == "__main__":
    main()
