"""dict_keys: a compiled function that tests a dict for a key (`if "y" in d:`), an enum member by
identity (`if mode is Mode.B:`), an object for an attribute (`hasattr(cfg, "bias")`) and uses an
int attribute; then the same function compiled by another backend. Each new combination
recompiles: Dynamo guards the key's presence (`not ___dict_contains('y', d)`), the enum member's
id (`___check_obj_id(mode, …), type=<class '__main__.Mode'>`), the attribute's presence
(`not hasattr(cfg, 'bias')`), the int's value and the backend (`BACKEND_MATCH failure`). tlscope
says each in words (guard kinds `dict_key`, `attribute`, `backend`), which class the other object
is, and blames the enum call on the enum: the entry compiled with the key fails it on the key,
but an earlier recompile's reason said the entry before it lacks the key, as the call does."""

from __future__ import annotations

import enum

import torch


class Mode(enum.Enum):
    A = 1
    B = 2


class Config:
    def __init__(self, scale: int) -> None:
        self.scale = scale


@torch.compile(backend="eager")
def step(d: dict[str, torch.Tensor], mode: Mode, cfg: Config) -> torch.Tensor:
    out = d["x"] * 2
    if "y" in d:
        out = out + d["y"]
    if mode is Mode.B:
        out = out - 1
    if hasattr(cfg, "bias"):
        out = out + cfg.bias
    return out * cfg.scale


def main() -> None:
    x = torch.randn(4)
    step({"x": x}, Mode.A, Config(2))
    step({"x": x, "y": x}, Mode.A, Config(2))  # a key the first entry lacks
    step({"x": x}, Mode.B, Config(2))  # another enum member
    step({"x": x}, Mode.A, Config(3))  # another int value (then dynamic)
    biased = Config(3)
    biased.bias = 1.0  # type: ignore[attr-defined]
    step({"x": x}, Mode.A, biased)  # an attribute the entries lack
    torch.compile(step.__wrapped__, backend="aot_eager")({"x": x}, Mode.A, biased)  # another backend


if __name__ == "__main__":
    main()
