"""aot_compile: `torch.compile(..., fullgraph=True).aot_compile(...)`, the ahead-of-time path vLLM
compiles its models with. Dynamo's trace carries a compile id, but everything after it (AOTAutograd,
Inductor's graphs and output code, the guards) and the compile's metrics are logged outside any
compile id, inside a `fullgraph_capture` span. Two calls: a small model that compiles and runs,
and a function whose data-dependent branch fullgraph cannot trace (`Unsupported`)."""

from __future__ import annotations

import torch


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.proj(x)) + x


def branchy(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:  # a branch on tensor data: fullgraph cannot trace it
        return x + 1
    return x - 1


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    with torch.no_grad():
        block = Block()
        # The module's forward with the module as its first argument (an OptimizedModule has no
        # aot_compile, and a bound method's signature does not bind the example arguments).
        compiled = torch.compile(Block.forward, fullgraph=True).aot_compile(((block, x), {}))
        print("block compiled:", tuple(compiled(block, x).shape))
    try:
        torch.compile(branchy, fullgraph=True).aot_compile(((x,), {}))
    except Exception as err:  # torch._dynamo.exc.Unsupported
        print("branchy failed:", type(err).__name__)


if __name__ == "__main__":
    main()
