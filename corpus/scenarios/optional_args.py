"""optional_args: a compiled function with optional arguments (`mask=None`, `scale=None`) called
without them, with a mask, then with a scale. Each recompiles: Dynamo guards `mask is None`,
then, for the entry compiled with a mask, that it is a tensor (`expected type of 'mask' to be a
tensor type, ' but found <class 'NoneType'>`). tlscope says each as `None -> not None` (guard kind
`none`) and blames the scale call on the scale: the mask entry fails it on the mask, but an
earlier recompile's reason said the first entry was compiled for `mask` None, as the call."""

from __future__ import annotations

import torch


@torch.compile(backend="eager")
def attend(q: torch.Tensor, mask: torch.Tensor | None = None, scale: float | None = None) -> torch.Tensor:
    s = q * 2
    if mask is not None:
        s = s + mask
    if scale is None:
        scale = 1.0
    return s * scale


def main() -> None:
    q = torch.randn(4)
    attend(q)
    attend(q, mask=torch.zeros(4))  # a mask where the first entry had None
    attend(q, scale=2.0)  # no mask again, but a scale


if __name__ == "__main__":
    main()
