"""failures: compilations that fail with a user frame (fail_user_frame_filename/lineno), the caller
catching the error: a fullgraph=True function that hits a graph break (Unsupported, raised instead
of breaking), and a function whose tensor shapes do not match (TorchRuntimeError, raised while
tracing the user's line). A third function then compiles fine, so the log also holds a success."""

from __future__ import annotations

import contextlib
import io

import torch
import torch._dynamo


def must_be_whole(x: torch.Tensor) -> torch.Tensor:
    y = x.sin()
    print("no graph breaks allowed", y.shape)
    return y.cos()


def mismatched(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w  # (4, 3) @ (4, 3): the shapes do not match


def fine(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) + 1


def main() -> None:
    torch.manual_seed(0)
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            torch.compile(must_be_whole, fullgraph=True)(torch.randn(4))
        except torch._dynamo.exc.Unsupported:
            pass
    try:
        torch.compile(mismatched)(torch.randn(4, 3), torch.randn(4, 3))
    except Exception:  # noqa: BLE001 (the failure itself is the point; its type varies by version)
        pass
    torch.compile(fine)(torch.randn(5))


if __name__ == "__main__":
    main()
