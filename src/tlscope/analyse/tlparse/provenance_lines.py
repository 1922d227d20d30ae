"""Provenance line mappings (-i): node mappings -> line numbers in graphs and code (reference §7).

Pure functions over texts; the results must equal tlparse's exactly (its tests pin them),
including list order, so the search rules below are tlparse's, quirks and all.
"""

from __future__ import annotations

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
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _valid(line: str, symbol: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(symbol)


def node_lines(text: str) -> dict[str, int]:
    """Graph node name -> 1-based line (`name = ...` or `name: type = ...`); later wins."""
    result: dict[str, int] = {}
    for i, line in enumerate(rust_lines(text)):
        trimmed = line.strip()
        if not _valid(trimmed, "#"):
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


def python_kernel_lines(code: str, kernels: list[str]) -> dict[str, list[int]]:
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
