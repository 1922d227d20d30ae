"""marked_dynamic: a dimension the user marked dynamic that the code specialises. `branchy` branches
on its input's first size; called with `torch._dynamo.mark_dynamic(x, 0)`, tracing the branch
specialises the marked dimension to 4 and the compile fails (ConstraintViolationError, caught
here). Marked with `maybe_mark_dynamic` instead, the same call compiles: the dimension is
specialised, as the code needs."""

from __future__ import annotations

import torch
import torch._dynamo


def branchy(x: torch.Tensor) -> torch.Tensor:
    if x.shape[0] == 4:  # the code compares the size with 4: a marked dimension cannot stay dynamic
        return x.sin()
    return x.cos()


def main() -> None:
    torch.manual_seed(0)
    f = torch.compile(branchy)
    x = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(x, 0)
    try:
        f(x)
    except Exception as err:  # torch._dynamo.exc.UserError wrapping ConstraintViolationError
        print("compile failed:", type(err).__name__)
    y = torch.randn(4, 3)
    torch._dynamo.maybe_mark_dynamic(y, 0)
    f(y)


if __name__ == "__main__":
    main()
