"""raised: the user's own code raises while Dynamo traces it (a KeyError on a dict argument).
Dynamo cannot handle the exception inside the graph: the compile fails with `Unsupported:
Observed exception`, the function runs eagerly and raises the KeyError to the caller, who catches
it. torch names the exception only in the graph break's debug context
(`raised exception KeyError('scale')`). A second function compiles fine."""

from __future__ import annotations

import torch


def scaled(x: torch.Tensor, options: dict[str, float]) -> torch.Tensor:
    return x * options["scale"]


def shifted(x: torch.Tensor) -> torch.Tensor:
    return x + 1


def main() -> None:
    torch.manual_seed(0)
    try:
        torch.compile(scaled)(torch.randn(4), {"shift": 1.0})
    except KeyError:
        pass  # the user's bug, raised by the eager fallback
    torch.compile(shifted)(torch.randn(4))


if __name__ == "__main__":
    main()
