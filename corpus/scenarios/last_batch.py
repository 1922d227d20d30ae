"""last_batch: a compiled module trained on a dataset whose size is not a multiple of the batch
size, the most common recompile there is: the last, smaller batch changes the input's size on
dim 0 and recompiles the model (automatic dynamic shapes makes it dynamic then). torch.compile
compiled the module's wrapper, so Dynamo names the input `args[0]`; the user's line passes
`batch`."""

from __future__ import annotations

import torch
from torch import nn


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    compiled = torch.compile(model)
    data = torch.randn(100, 16)
    for start in range(0, 100, 32):  # batches of 32, 32, 32, then 4
        batch = data[start : start + 32]
        loss = compiled(batch).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
