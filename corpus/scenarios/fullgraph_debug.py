"""fullgraph_debug: a module compiled with fullgraph=True whose forward prints when asked to
debug. The first call debugs: the print is a graph break, which fullgraph turns into a failure
the caller catches (Unsupported). The next call does not, and compiles. The failed compile logs
no guards; it is named `Net.forward`, by the class its recompile's guards give `self`."""

from __future__ import annotations

import contextlib
import io

import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, debug: bool) -> torch.Tensor:
        y = self.fc(x)
        if debug:
            print("y", y.shape)  # a graph break: fullgraph=True raises instead
        return y.relu()


def main() -> None:
    torch.manual_seed(0)
    model = torch.compile(Net(), backend="eager", fullgraph=True)
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            model(torch.randn(2, 4), True)
        except torch._dynamo.exc.Unsupported:
            pass
    model(torch.randn(2, 4), False)


if __name__ == "__main__":
    main()
