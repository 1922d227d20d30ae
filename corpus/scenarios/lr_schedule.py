"""lr_schedule: a compiled optimizer step (AdamW, wrapped in a function given to torch.compile, as
torch's recipe does) with an LR scheduler (StepLR, halving the rate every step), four training
steps, eager backend. The scheduler's first change of the learning rate, a float in AdamW's
param_groups that Dynamo guards by its value, recompiles `AdamW.step` (`[2/1]`), after which torch
makes it dynamic. tlscope gives that recompile the fix of kind `tensor_lr`: create AdamW with
`lr=torch.tensor(0.001)` (checked on torch 2.13: no recompile)."""

from __future__ import annotations

import torch


def main() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(32, 32) for _ in range(6)])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

    @torch.compile(backend="eager")
    def step() -> None:
        opt.step()

    for _ in range(4):
        model(torch.randn(4, 32)).sum().backward()
        step()
        sched.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
