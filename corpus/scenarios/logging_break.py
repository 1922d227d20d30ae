"""logging_break: a training step compiled with a `logging` call inside it (`log.info(...)`),
three steps, eager backend. Dynamo does not trace a logging.Logger method: the call breaks the
graph each step and then runs in eager, where Dynamo compiles logging's own functions as frames of
their own (`Logger.info`, `_log`, which fails, `makeRecord`, `LogRecord.__init__`, whose rest
recompiles on the record's `time.time()`): one line, 20 compiles on torch 2.13. tlscope gives the
break the fix of kind `ignore_logging` (the setting torch's hint names, with the user's logger
method: `torch._dynamo.config.ignore_logging_functions.add(log.info)`), checked: 1 compile; and
names the failure in logging's `_log` by the user's line that called it."""

from __future__ import annotations

import logging

import torch

log = logging.getLogger("corpus.train")


@torch.compile(backend="eager")
def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x @ w
    log.info("norm %s", y.norm())  # a Logger method: a graph break, then logging compiled
    return torch.relu(y).sum()


def main() -> None:
    logging.basicConfig(level=logging.INFO)
    torch.manual_seed(0)
    w = torch.randn(16, 16)
    for _ in range(3):
        step(torch.randn(8, 16), w)


if __name__ == "__main__":
    main()
