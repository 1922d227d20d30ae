"""fake_errors: two compiles that fail while Dynamo runs an operator on fake tensors: a matmul
of mismatched shapes in a module (the user's bug, which eager would raise too) and a custom op
registered without a fake kernel. torch's failure says only `RuntimeError when making fake
tensor call` on its first line; the error is in the explanation after it (`... got
RuntimeError('a and b must have same reduction dim, ...')`), which tlscope joins to the
failure's reason."""

from __future__ import annotations

import torch


@torch.library.custom_op("corpus::scale", mutates_args=())
def scale(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k


class Projection(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.relu()
        return h @ self.w  # x has 5 features, w expects 4


@torch.compile(backend="aot_eager")
def scaled(x: torch.Tensor) -> torch.Tensor:
    return scale(x.sin(), 2.0).cos()  # no register_fake: Dynamo cannot trace it


def main() -> None:
    torch.manual_seed(0)
    for call in (
        lambda: torch.compile(Projection(), backend="eager")(torch.randn(2, 5)),
        lambda: scaled(torch.randn(4)),
    ):
        try:
            call()
        except Exception as error:  # the scenario is the failure: torch raised it to the caller
            print(f"failed as expected: {type(error).__name__}")


if __name__ == "__main__":
    main()
