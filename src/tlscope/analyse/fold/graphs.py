"""Graph sizes from the readable graph code PyTorch logs (Dynamo's, AOTAutograd's, Inductor's).

A graph payload is `print_readable` output:

    class GraphModule(torch.nn.Module):
        def forward(self, L_x_: "f32[4, 8][8, 1]cpu"):
            l_x_ = L_x_
            relu: "f32[4, 8][8, 1]cpu" = torch.relu(l_x_);  l_x_ = None
            return (relu,)

The inputs are the forward's parameters (with their `dtype[sizes][strides]device` annotation);
the nodes are its assignment lines (submodules' included). A symbol such as `s77` in the sizes
marks a dynamic dimension.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from tlscope.analyse.fold.linear import forward_signature, word_led_matches
from tlscope.format.compiles import Collective, GraphInput, LineNodes

#: Event keys whose payload is a readable graph.
GRAPH_KEYS = frozenset(
    {
        "dynamo_output_graph",
        "aot_forward_graph",
        "aot_backward_graph",
        "aot_inference_graph",
        "aot_joint_graph",
        "compiled_autograd_graph",
        "inductor_pre_grad_graph",
        "inductor_post_grad_graph",
        "optimize_ddp_split_graph",
        "optimize_ddp_split_child",
    }
)
#: Artifact names whose payload is a readable graph.
GRAPH_ARTIFACTS = frozenset(
    {
        "before_pre_grad_graph",
        "after_pre_grad_graph",
        "before_joint_graph",
        "after_joint_graph",
        "before_post_grad_graph",
        "inductor_post_grad_graph",
        "compiled_autograd_graph_pre_reordering",
    }
)

_SIGNATURE = re.compile(r"def forward\((?P<args>.*?)\)\s*(?:->[^:]*)?:", re.DOTALL)
_ARG = re.compile(r'(?P<name>[A-Za-z_]\w*)\s*(?::\s*"(?P<type>[^"]*)")?\s*(?:,|$)')
_ASSIGN = re.compile(r'^[ \t]+[A-Za-z_]\w*(?:\s*:\s*"[^"\n]*")?\s*=(?!=)', re.MULTILINE)
_DIMS = re.compile(r"^[a-z0-9]+\[(?P<sizes>[^\]]*)\]")
#: A payload larger than this is not searched for its signature and nodes (sizes stay null).
MAX_GRAPH_BYTES = 64 * 1024 * 1024
#: A Dynamo graph of fewer nodes is not searched for its busiest line (`Graph.busiest_line`): a
#: small graph compiles fast whatever made it.
BIG_GRAPH = 500
#: A comment of print_readable's over the nodes that follow it: where they were traced from
#: (`# File: /a/train.py:4 in body, code: x = torch.sin(x) + i`), or another (`# No stacktrace
#: found for following nodes`), which names no line. Its parts are split by `_located`, in
#: linear time (a pattern for them would backtrack over a hostile line).
_COMMENT = r"(?m)^[ \t]*# ([^\n]*)"  # compiled by `re` when a big graph is first met


@functools.cache
def _collective_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a collective call of a graph's code, a literal argument of a call), compiled when a graph
    first names a collective: most logs have none, and a small log's run should not pay for them.

    The call: `name: "f32[4][1]cpu" = torch.ops._c10d_functional.all_reduce(y, 'sum', '0')`
    (Dynamo's; AOT graphs name the overload, `all_reduce.default`; `c10d_functional` in older
    torch). A literal: a string, a number, a list of numbers.
    """
    call = re.compile(
        r'^[ \t]+\w+(?:\s*:\s*"(?P<type>[^"\n]*)")?\s*=\s*'
        r"torch\.ops\._?c10d_functional\.(?P<op>\w+)(?:\.\w+)?\((?P<args>[^\n]*?)\)(?:;|[ \t]*$)",
        re.MULTILINE,
    )
    return call, re.compile(r"'[^']*'|\[[-\d, ]*\]|(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def graph_collectives(text: str) -> list[Collective]:
    """The collectives a graph's code calls, in order, its waits (`wait_tensor`) left out; none when
    it names no c10d functional op (a substring test, so a graph without collectives costs one scan
    of its text)."""
    if "c10d_functional" not in text or len(text) > MAX_GRAPH_BYTES:
        return []
    call, literal = _collective_patterns()
    return [
        Collective(op=m["op"], tensor=m["type"], args=literal.findall(m["args"]))
        for m in call.finditer(text)
        if m["op"] != "wait_tensor"
    ]


def graph_shape(text: str) -> tuple[int | None, list[GraphInput]]:
    """(assignment lines, forward inputs) of a readable graph; (None, []) if it is not one."""
    if len(text) > MAX_GRAPH_BYTES:
        return None, []
    match = forward_signature(_SIGNATURE, text)
    if match is None:
        return None, []
    inputs = []
    for line in match["args"].splitlines() or [""]:
        code = line.split("#", 1)[0]
        for arg in word_led_matches(_ARG, code):
            if arg["name"] != "self":
                inputs.append(GraphInput(name=arg["name"], type=arg["type"]))
    return len(_ASSIGN.findall(text, match.end())), inputs


def busiest_line(text: str, nodes: int | None) -> LineNodes | None:
    """The source line half or more of a big graph's `nodes` were traced from (print_readable's
    comment over each run of nodes of one stack), or None."""
    if nodes is None or nodes < BIG_GRAPH or len(text) > MAX_GRAPH_BYTES:
        return None
    counts: Counter[tuple[str, int]] = Counter()
    codes: dict[tuple[str, int], str] = {}
    comments = list(re.finditer(_COMMENT, text))
    for this, after in zip(comments, [*comments[1:], None], strict=True):
        located = _located(this[1])
        if located is None:
            continue
        key, code = located
        codes.setdefault(key, code)
        counts[key] += len(_ASSIGN.findall(text, this.end(), after.start() if after is not None else len(text)))
    found = counts.most_common(1)
    if not found or 2 * found[0][1] < nodes:
        return None
    (file, line), count = found[0]
    return LineNodes(file=file, line=line, code=codes[(file, line)], nodes=count)


def _located(comment: str) -> tuple[tuple[str, int], str] | None:
    """((file, line), code) of `File: /a/train.py:4 in body, code: x = f(x)`; None for another comment."""
    if not comment.startswith("File: "):
        return None
    head, found, code = comment[6:].partition(", code: ")
    where = head.rpartition(" in ")[0]  # a function's name has no space; a path may
    file, _, line = where.rpartition(":")
    if not found or not file or not line.isdigit():
        return None
    return (file, int(line)), code.strip()


def dtype_and_sizes(type_text: str | None) -> str | None:
    """`f32[s77, 8]` of an annotation such as `f32[s77, 8][8, 1]cuda:0` (no strides, no device);
    None when it is not a tensor's."""
    match = _DIMS.match(type_text or "")
    return match.group(0) if match is not None else None


def dynamic_dims(type_text: str | None) -> list[int]:
    """Dimensions whose size is a symbol in an annotation such as `f32[s77, 8][8, 1]cpu`."""
    match = _DIMS.match(type_text or "")
    if match is None or not match["sizes"].strip():
        return []
    return [i for i, size in enumerate(match["sizes"].split(",")) if not size.strip().lstrip("-").isdigit()]


@functools.lru_cache(maxsize=4096)
def placeholder_name(source: str) -> str:
    """The graph input Dynamo names after a source: `L['x']` -> `L_x_`, `L['___stack0']` -> `L_stack0_`.

    Dynamo replaces each run of characters other than letters and digits, underscores included,
    by one `_` (a resume function's `___stack0` input is the placeholder `L_stack0_`). Memoised
    (bounded): input_shapes asks it for every input of every compile, each graph input over.
    """
    return _NOT_ALNUM.sub("_", source)


_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
