"""module_counter: a module that counts its calls in an int attribute (`self.step += 1`) and uses
it in forward. Dynamo specialises a module's int attributes, so every call recompiles forward
until the recompile limit (4 here, 8 by default) runs it in eager: the reasons say only
`self.step == N`. tlscope names the setting that makes such an attribute dynamic
(`torch._dynamo.config.allow_unspec_int_on_nn_module = True`) and, at the limit, what filled it."""

from __future__ import annotations

import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.step = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.step += 1  # an int attribute: specialised, so each new value compiles again
        return self.linear(x) * self.step


def main() -> None:
    torch.manual_seed(0)
    torch._dynamo.config.recompile_limit = 4
    model = torch.compile(Scaled())
    x = torch.randn(2, 8)
    with torch.no_grad():
        for _ in range(6):
            model(x)


if __name__ == "__main__":
    main()
