"""aoti: a module exported with torch.export, then compiled ahead of time by AOT Inductor
(`torch._inductor.aoti_compile_and_package`), the deployment path. Inductor's whole compile is
logged with no compile id: a `compile_fx_aot` chromium span holding the graphs, the C++ wrapper and
kernel code, and the compile's metrics."""

from __future__ import annotations

import os
import tempfile

import torch


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(x)) * 2


def main() -> None:
    torch.manual_seed(0)
    program = torch.export.export(Block(), (torch.randn(4, 8),))
    with tempfile.TemporaryDirectory() as folder:
        package = torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(folder, "block.pt2"))
        loaded = torch._inductor.aoti_load_package(package)
        print("aoti:", tuple(loaded(torch.randn(4, 8)).shape))


if __name__ == "__main__":
    main()
