"""compiled_autograd: a small MLP trained for two steps with compiled autograd on
(torch._dynamo.config.compiled_autograd = True), so the backward pass is captured and compiled as
its own graph (compiled_autograd_graph, compile ids with a "!N/" prefix)."""

from __future__ import annotations

import torch
import torch._dynamo.config as dynamo_config


def main() -> None:
    dynamo_config.compiled_autograd = True
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.compile
    def step(x: torch.Tensor) -> torch.Tensor:
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss

    for _ in range(2):
        step(torch.randn(4, 8))
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
