"""frozen_layer: fine-tuning that freezes a compiled module's first layer after a step
(`requires_grad_(False)` on its parameters), then swaps that layer's weight for a float64 one.
Each recompiles: Dynamo guards every parameter's requires_grad and dtype, names the parameter by
its source inside the message (`tensor 'self._modules['a']._parameters['bias']' requires_grad
mismatch`) and goes on after it (`Guard failed on a parameter, consider using
torch._dynamo.config.force_parameter_static_shapes = False`). tlscope says each as the code
names the parameter (`requires_grad of self.a.bias changed: True -> False`)."""

from __future__ import annotations

import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x).relu())


def main() -> None:
    torch.manual_seed(0)
    net = Net()
    compiled = torch.compile(net, backend="eager")
    x = torch.randn(4, 8)
    compiled(x).sum().backward()
    for p in net.a.parameters():
        p.requires_grad_(False)  # freeze the first layer: a recompile
    compiled(x).sum().backward()
    net.a.weight.data = torch.randn(8, 8, dtype=torch.float64)  # another dtype: a recompile
    try:
        compiled(x)
    except RuntimeError as error:  # float64 weight, float32 input: eager fails too
        print(f"failed as expected: {type(error).__name__}")


if __name__ == "__main__":
    main()
