"""short_prompt: a compiled next-token model called on a sequence that starts one token long and
grows a token a step (generation without a KV cache). The first call compiles for length 1, which
Dynamo always specialises, so the second call (length 2) recompiles whatever marked the input, and
makes the length dynamic. The recompile's fix (kind `mark_unbacked`) marks the length unbacked at
the first call (checked on torch 2.13: one compile for the same six steps; with
`torch._dynamo.maybe_mark_dynamic` two, as without it)."""

from __future__ import annotations

import torch
from torch import nn


class NextToken(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.head = nn.Linear(16, 32)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens).mean(1))  # the next token's logits, from every token so far


def main() -> None:
    torch.manual_seed(0)
    model = torch.compile(NextToken(), backend="eager")
    tokens = torch.zeros(1, 1, dtype=torch.long)
    with torch.no_grad():
        for _ in range(6):
            logits = model(tokens)
            tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)


if __name__ == "__main__":
    main()
