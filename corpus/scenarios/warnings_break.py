"""warnings_break: a compiled step that warns, as library code often does: `warnings.warn(...)`,
and a logger's `warning_once` (an lru_cache-wrapped Logger method, as Hugging Face's transformers
adds one), three steps, eager backend. Dynamo skips `warnings.warn` (a C function) and does not
trace a Logger method, so each call breaks the graph. tlscope gives the warning's break the fix of
kind `reorder_logging` (`torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)`:
checked on torch 2.13, 3 compiles become 1, still warning) and the logger's `ignore_logging`
(`torch._dynamo.config.ignore_logging_functions.add(log.warning_once)`: checked, 1 compile)."""

from __future__ import annotations

import functools
import logging
import warnings
from typing import Any

import torch

log = logging.getLogger("corpus.warnings")


@functools.lru_cache(None)
def warning_once(self: logging.Logger, *args: Any, **kwargs: Any) -> None:
    self.warning(*args, **kwargs)


@torch.compile(backend="eager")
def step(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    warnings.warn("this path is deprecated", stacklevel=1)  # skipped by Dynamo: a graph break
    log.warning_once("slow path taken")  # type: ignore[attr-defined]  # a Logger method: a graph break
    return y.sin()


def main() -> None:
    logging.Logger.warning_once = warning_once  # type: ignore[attr-defined]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            step(torch.randn(4))


if __name__ == "__main__":
    main()
