"""kv_object: a decode step compiled with its KV cache, a Python object whose list of keys the
compiled code appends to (`cache.keys.append(k)`, as a hand-written cache does), twelve steps,
eager backend. Dynamo guards the list's length and never makes it dynamic, so every step
recompiles `attend` until the recompile limit (8 compiles, then eager). tlscope gives each
recompile the fix of kind `change_code` at the append line: kept out of the compiled code (the
keys concatenated before the call), `attend` compiles twice on torch 2.13."""

from __future__ import annotations

import torch


class Cache:
    def __init__(self) -> None:
        self.keys: list[torch.Tensor] = []


@torch.compile(backend="eager")
def attend(q: torch.Tensor, k: torch.Tensor, cache: Cache) -> torch.Tensor:
    cache.keys.append(k)  # the compiled code grows the list: its length is guarded
    keys = torch.cat(cache.keys, dim=0)
    return (q @ keys.T).softmax(-1)


def main() -> None:
    torch.manual_seed(0)
    cache = Cache()
    for _ in range(12):
        attend(torch.randn(1, 8), torch.randn(1, 8), cache)


if __name__ == "__main__":
    main()
