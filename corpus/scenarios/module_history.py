"""module_history: a module that keeps a Python list of what each call produced, appended inside
its compiled forward (a running log of losses, a hand-made cache). Dynamo guards the list's
length, never making it dynamic: every call recompiles until the recompile limit (8 compiles,
then eager). The recompiles' fix (kind `change_code`) is the line that appends: appending where
the model is called, from what forward returns, compiles once (checked on torch 2.13)."""

from __future__ import annotations

import torch
from torch import nn


class Tracker(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.history: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        self.history.append(y.detach().mean())  # the list grows: its length is guarded
        return y


def main() -> None:
    torch.manual_seed(0)
    model = torch.compile(Tracker(), backend="eager")
    for _ in range(10):
        model(torch.randn(2, 4))


if __name__ == "__main__":
    main()
