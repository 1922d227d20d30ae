"""train_eval: one compiled module called in training mode, after `.eval()`, under
`torch.no_grad()`, then back in training mode under `torch.autocast("cpu")`. Each of those is a
recompile: the module's `training` flag is a guarded value (Dynamo's source names the dropout's
`self._modules['drop'].training`), and grad mode and autocast are torch's global state, whose
guard names every part that differs (`GLOBAL_STATE changed: grad_mode autocast(cpu)_enabled`).
tlscope names them as the code does (`self.drop.training`), says what `.eval()` did, and blames
the autocast call on autocast: the no_grad entry fails it on grad mode too, but the entries
compiled with gradients fail it on autocast alone."""

from __future__ import annotations

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.lin(x)).relu()


def main() -> None:
    torch.manual_seed(0)
    net = torch.compile(Net(), backend="eager")
    x = torch.randn(4, 8)
    net(x)
    net.eval()  # dropout's training flag: a recompile
    net(x)
    with torch.no_grad():  # grad mode: a recompile
        net(x)
    net.train()  # back to the first entry's mode, but under autocast: a recompile
    with torch.autocast("cpu", dtype=torch.bfloat16):
        net(x)


if __name__ == "__main__":
    main()
