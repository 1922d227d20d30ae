"""compile_failure: a backend that raises on its first call (suppress_errors=True, so the frame
falls back to eager and the failure lands in compilation_metrics), then a frame whose graph break
makes dynamo restart the analysis (restart_reasons)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo

calls = {"n": 0}


def flaky_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    calls["n"] += 1
    if calls["n"] == 1:
        raise RuntimeError("corpus: deliberate backend failure on first compile")
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs)


def failing(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) + 1


def restarting(x: torch.Tensor) -> torch.Tensor:
    y = x.cos()
    torch._dynamo.graph_break()  # breaking mid-frame restarts the analysis
    return y.sin()


def main() -> None:
    torch._dynamo.config.suppress_errors = True
    torch.manual_seed(0)
    torch.compile(failing, backend=flaky_backend)(torch.randn(4))
    torch._dynamo.reset()
    torch.compile(failing, backend=flaky_backend)(torch.randn(4))
    torch.compile(restarting)(torch.randn(4))


if __name__ == "__main__":
    main()
