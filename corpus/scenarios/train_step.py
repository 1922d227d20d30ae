"""train_step: a whole training step compiled (`@torch.compile` on a function that runs the model,
`loss.backward()`, `opt.step()` and `opt.zero_grad()`), three steps, eager backend. Dynamo does not
trace `Tensor.backward()`, torch.optim breaks the graph before and after every step on purpose,
and Dynamo skips `zero_grad`: one step becomes 11 compiles on torch 2.13 (Inductor: 8.6 s). tlscope
gives the backward's break the fix of kind `compile_model` (compile the model the step calls, and
run the backward after it) and the optimizer's breaks `step_outside`, and leaves out torch's hint
to remove the `graph_break()` call torch.optim itself makes; checked with Inductor: the model
compiled instead, 1 compile, 4.8 s."""

from __future__ import annotations

import torch
from torch import nn

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="eager")
def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()  # not traced: the step breaks here
    opt.step()  # torch.optim breaks the graph around it on purpose
    opt.zero_grad()  # skipped by Dynamo
    return loss


def main() -> None:
    torch.manual_seed(0)
    for _ in range(3):
        train_step(torch.randn(16, 32), torch.randn(16, 1))


if __name__ == "__main__":
    main()
