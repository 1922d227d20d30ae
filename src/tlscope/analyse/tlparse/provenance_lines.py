"""Provenance line mappings (-i): node mappings -> line numbers in graphs and code (reference §7).

Pure functions over texts; the results must equal tlparse's exactly (its tests pin them),
including list order, so the search rules below are tlparse's, quirks and all.
"""

from __future__ import annotations

import bisect
import itertools
from typing import Any

from tlscope.format.json_boundary import JsonError, decode

LineMap = dict[int, list[int]]


def rust_lines(text: str) -> list[str]:
    """Rust `str::lines`: split on \\n, drop one trailing \\r, no final empty line."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    if "\r" not in text:  # most text: no line to strip, no turn of a loop per line
        return parts
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _valid(line: str, symbol: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(symbol)


def node_lines(text: str) -> dict[str, int]:
    """Graph node name -> 1-based line (`name = ...` or `name: type = ...`); later wins."""
    result: dict[str, int] = {}
    for i, line in enumerate(rust_lines(text)):
        trimmed = line.strip()
        if not trimmed or trimmed.startswith("#"):  # `_valid(trimmed, "#")`, without a call a line
            continue
        name = trimmed.split("=", 1)[0].split(":", 1)[0].strip()
        if name:
            result[name] = i + 1
    return result


def _drop_leading_empty(text: str) -> list[str]:
    lines = rust_lines(text)
    start = 0
    while start < len(lines) and lines[start] == "":
        start += 1
    # Joined and split again in tlparse: a trailing empty line then disappears.
    return rust_lines("\n".join(lines[start:]))


class _Searched:
    """Lines searched as one text: the lines holding a string are found by `str.find` over the
    text, not by testing each line in turn (a compilation's ~25 kernels against its ~1,500 lines of
    output code were 1.4 ms a compilation, 4 % of the big trace's parse). A string holding no
    newline is in a line exactly when it is found in the text at an offset within that line."""

    def __init__(self, lines: list[str]) -> None:
        self.count = len(lines)
        self.text = "\n".join(lines)
        #: Where each line starts in `text` (strictly increasing: each line adds its newline).
        self.starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))

    def first(self, needle: str, line: int) -> int | None:
        """The first line from `line` on holding `needle`."""
        if line >= self.count or "\n" in needle:
            return None
        at = self.text.find(needle, self.starts[line])
        return None if at == -1 else bisect.bisect_right(self.starts, at) - 1

    def holding(self, needle: str, line: int) -> list[int]:
        """Every line from `line` on holding `needle`, in order."""
        found: list[int] = []
        while (hit := self.first(needle, line)) is not None:
            found.append(hit)
            line = hit + 1
        return found


def python_kernel_lines(code: str, kernels: list[str]) -> dict[str, list[int]]:
    lines = _drop_leading_empty(code)
    searched = _Searched(lines)
    # The first line with all three (`def call(args):`), and the `# AOT ID:` line, else 0.
    start = next((i for i in searched.holding("(args)", 0) if "def" in lines[i] and "call" in lines[i]), 0)
    base = searched.first("# AOT ID:", 0) or 0
    result: dict[str, list[int]] = {}
    for kernel in kernels:
        pure = kernel.split(":", 1)[0]
        if ":" in kernel:  # the line after the kernel's first one (from `start`) that names it
            first = searched.first(kernel, start)
            after = searched.first(pure, first + 1) if first is not None else None
            if after is not None:
                result[kernel] = [after + 1 - base]
                continue
        found = searched.holding(pure, start)
        if found:
            result[kernel] = [i + 1 - base for i in found]
    return result


def cpp_kernel_lines(code: str, kernels: list[str]) -> dict[str, list[int]]:
    lines = _drop_leading_empty(code)
    start = next((i for i, t in enumerate(lines) if "::run_impl(" in t), 0)
    result: dict[str, list[int]] = {}
    for kernel in kernels:
        pure = kernel.split(":", 1)[0]
        found = False
        if ":" in kernel:
            for i in range(start, len(lines)):
                line = lines[i]
                if _valid(line, "def") and _valid(line, "static inline void") and kernel in line:
                    after = next((j for j in range(i + 1, len(lines)) if pure in lines[j]), None)
                    if after is not None:
                        result.setdefault(kernel, []).append(after + 1)
                        found = True
                        break
        if not found:
            for i in range(start, len(lines)):
                if pure in lines[i]:
                    result.setdefault(kernel, []).append(i + 1)
    return result


def _node_map(source: Any, source_lines: dict[str, int], target_lines: dict[str, int]) -> LineMap:
    result: LineMap = {}
    if not isinstance(source, dict):
        return result
    for node in sorted(source):
        line = source_lines.get(node)
        if line is None:
            continue
        targets = [target_lines[t] for t in _strs(source[node]) if t in target_lines]
        if targets:
            result[line] = targets
    return result


def _kernel_to_post(mapping: Any, kernel_lines: dict[str, list[int]], post: dict[str, int]) -> LineMap:
    result: LineMap = {}
    if not isinstance(mapping, dict):
        return result
    for kernel in sorted(mapping):
        for line in kernel_lines.get(kernel, []):
            targets = [post[n] for n in _strs(mapping[kernel]) if n in post]
            if targets:
                result[line] = targets
    return result


def _post_to_kernel(mapping: Any, post: dict[str, int], kernel_lines: dict[str, list[int]]) -> LineMap:
    result: LineMap = {}
    if not isinstance(mapping, dict):
        return result
    for node in sorted(mapping):
        line = post.get(node)
        if line is None:
            continue
        targets = [n for k in _strs(mapping[node]) for n in kernel_lines.get(k, [])]
        if targets:
            result[line] = targets
    return result


def _strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def line_mappings(node_mappings: str, pre: str, post: str, py_code: str, cpp_code: str) -> dict[str, Any]:
    """tlparse's lineMappings object; `{}` when the node mappings are not JSON."""
    try:
        mappings = decode(node_mappings)
    except JsonError:
        return {}
    if not isinstance(mappings, dict):
        mappings = {}
    cpp_to_post = mappings.get("cppCodeToPost")
    kernels = sorted(cpp_to_post) if isinstance(cpp_to_post, dict) else []
    pre_lines, post_lines = node_lines(pre), node_lines(post)
    py_kernels = python_kernel_lines(py_code, kernels)
    cpp_kernels = cpp_kernel_lines(cpp_code, kernels)
    maps = {
        "preToPost": _node_map(mappings.get("preToPost"), pre_lines, post_lines),
        "postToPre": _node_map(mappings.get("postToPre"), post_lines, pre_lines),
        "pyCodeToPost": _kernel_to_post(cpp_to_post, py_kernels, post_lines),
        "postToPyCode": _post_to_kernel(mappings.get("postToCppCode"), post_lines, py_kernels),
        "cppCodeToPost": _kernel_to_post(cpp_to_post, cpp_kernels, post_lines),
        "postToCppCode": _post_to_kernel(mappings.get("postToCppCode"), post_lines, cpp_kernels),
    }
    return {name: {str(k): v for k, v in m.items()} for name, m in maps.items()}
