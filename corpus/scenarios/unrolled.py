"""unrolled: a function whose Python loop of 200 iterations Dynamo unrolls into one graph (600
nodes, every one traced from the loop's one-line body), compiled with Inductor: a slow compile
whose time grows with the iterations (300 iterations: 14.2 s on torch 2.13). tlscope's
`slow_compile` first answer says the line the graph's nodes come from (the Dynamo graph's
`busiest_line`): `600 of its graph's 601 nodes are unrolled.py:18 (...)`. Compiling one
iteration instead (the loop in eager) took 9.9 s for 300, most of it the fixed C++ compile,
and ran the loop 25 times slower: a trade-off for the user, so no fix is given."""

from __future__ import annotations

import torch

STEPS = 200


def body(x: torch.Tensor) -> torch.Tensor:
    for i in range(STEPS):
        x = torch.sin(x) * 1.01 + i
    return x


def main() -> None:
    torch.compile(body)(torch.randn(64))


if __name__ == "__main__":
    main()
