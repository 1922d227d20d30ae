"""provenance: a small conv+MLP compiled with inductor provenance tracking on
(torch._inductor.config.trace.provenance_tracking_level = 1), forward and backward."""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.fc = torch.nn.Linear(4 * 6 * 6, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        return self.fc(y.flatten(1)).softmax(-1)


def main() -> None:
    inductor_config.trace.provenance_tracking_level = 1
    torch.manual_seed(0)
    compiled = torch.compile(Net())
    compiled(torch.randn(2, 3, 8, 8)).sum().backward()


if __name__ == "__main__":
    main()
