"""The output code's kernel lines (analyse/tlparse/provenance_lines.py): found by searching the
code as one text, they must be the lines tlparse's rule gives, tested line by line (the rule
written out below as tlparse states it)."""

from __future__ import annotations

import pytest

from tlscope.analyse.tlparse.provenance_lines import _drop_leading_empty, node_lines, python_kernel_lines

CODE = """

# AOT ID: ['0_forward']
from torch import empty
triton_poi_fused_add_0 = async_compile.triton('triton_poi_fused_add_0', '''
def triton_poi_fused_add_0(in_ptr0, out_ptr0):
    pass
''')

cpp_fused_mul_1 = async_compile.cpp_pybinding(['float*'], '''
extern "C" void kernel(float* out_ptr0)
''')

def call(args):
    buf0 = empty((4,))
    # Topologically Sorted Source Nodes: [add], Original ATen: [aten.add]
    stream0 = get_raw_stream(0)
    # triton_poi_fused_add_0:1
    triton_poi_fused_add_0.run(arg0_1, buf0, 4, grid=grid(4), stream=stream0)
    cpp_fused_mul_1(buf0)
    triton_poi_fused_add_0.run(buf0, buf1, 4)
    return (buf1, )
"""

KERNELS = [
    "triton_poi_fused_add_0",
    "cpp_fused_mul_1",
    "triton_poi_fused_add_0:1",  # a debug handle: the line after the first naming it
    "cpp_fused_mul_1:7",
    "stream0:2",  # named once from `start`: the line after has no `stream0`, so every line naming it
    "missing_kernel",
    "missing:3",
    "",  # every line from `start`
    ":5",
    "buf0 = empty",
    "two\nlines",  # no line holds a newline
    "arg0_1, buf0",
]


def reference(code: str, kernels: list[str]) -> dict[str, list[int]]:
    """tlparse's rule, a line at a time (what python_kernel_lines was before it searched the text)."""
    lines = _drop_leading_empty(code)
    start = next((i for i, t in enumerate(lines) if "def" in t and "call" in t and "(args)" in t), 0)
    base = next((i for i, t in enumerate(lines) if "# AOT ID:" in t), 0)
    result: dict[str, list[int]] = {}
    for kernel in kernels:
        pure = kernel.split(":", 1)[0]
        found = False
        if ":" in kernel:
            for i in range(start, len(lines)):
                if kernel in lines[i]:
                    for j in range(i + 1, len(lines)):
                        if pure in lines[j]:
                            result.setdefault(kernel, []).append(j + 1 - base)
                            found = True
                            break
                    break
        if not found:
            for i in range(start, len(lines)):
                if pure in lines[i]:
                    result.setdefault(kernel, []).append(i + 1 - base)
    return result


@pytest.mark.parametrize(
    "code",
    [CODE, CODE.replace("def call(args):", "def kall():"), "", "\n\n", "x", CODE + "\n\n", CODE.replace("\n", "\r\n")],
)
def test_kernel_lines_are_tlparses_line_by_line(code: str) -> None:
    assert python_kernel_lines(code, KERNELS) == reference(code, KERNELS)


def test_kernel_lines_of_real_output_code() -> None:
    found = python_kernel_lines(CODE, KERNELS)
    # 1-based from `# AOT ID:` (the blank lines before it dropped): the lines after
    # `def call(args):` (line 12) naming the kernel, not its definition above it.
    assert found["triton_poi_fused_add_0"] == [16, 17, 19]
    assert found["triton_poi_fused_add_0:1"] == [17]  # the line after the one naming the handle
    assert found["cpp_fused_mul_1:7"] == [18]  # the handle named nowhere: every line naming the kernel
    assert "missing_kernel" not in found and "two\nlines" not in found and found[""] == list(range(12, 21))


def test_node_lines_skip_blank_and_comment_lines() -> None:
    graph = "class GraphModule(torch.nn.Module):\n    def forward(self, x: f32[4]):\n\n        # note: y = 1\n   \n"
    graph += "        add: f32[4] = x + 1\n        mul = add * 2;  \n        return (mul,)\n"
    assert node_lines(graph) == {
        "class GraphModule(torch.nn.Module)": 1,
        "def forward(self, x": 2,
        "add": 6,
        "mul": 7,
        "return (mul,)": 8,
    }
