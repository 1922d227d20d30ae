"""break_batch: a compiled training step that checks its loss for NaN with a Python `if` (a
data-dependent branch, a graph break: the rest of the step runs as Dynamo's resume function
`torch_dynamo_resume_in_step_at_N`) and
whose last batch is smaller. The step and its resume function each recompile for the new batch
size. The step's fix marks the batch at the call; the resume function's input `out` is made
inside the step, which no mark_dynamic before a call reaches: its fix is the graph break's line.
`scale` breaks the same way but its resume function's input is `scale`'s own parameter `x`,
the same tensor the caller passed: its fix marks it at the call of `scale`, which makes both
graphs dynamic at once."""

from __future__ import annotations

import torch
from torch import nn


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    @torch.compile(backend="eager")
    def step(batch: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        out = model(batch)
        loss = ((out - target) ** 2).mean()
        if torch.isnan(loss):  # a tensor's truth value in Python: a graph break
            raise FloatingPointError("loss is NaN")
        return out.sigmoid() * 2  # after it, the resume function's input is batch-sized

    @torch.compile(backend="eager")
    def scale(x: torch.Tensor) -> torch.Tensor:
        if torch.isnan(x.sum()):  # a graph break; x goes on into the resume function
            raise FloatingPointError("x holds a NaN")
        return x * 2

    for n in (32, 32, 4):  # the last batch is smaller
        step(torch.randn(n, 16), torch.randn(n, 1))
        scale(torch.randn(n, 8))


if __name__ == "__main__":
    main()
