"""Inductor provenance for every compilation (issue 23's "godbolt"): which payloads go together,
and the links between their lines (provenance.json, FORMAT.md).

tlparse's `-i` pages (write/report/provenance_pages.py) keep the newest text of each kind per
compile id: one compilation each, the last. Here a compile id's events are folded in log order
and a new compilation starts when a text of a kind it already has comes after its node mappings
(a backward compiled after its forward, under the same compile id), keeping the pre-grad graph,
which only the forward logs. The links are tlparse's rules (analyse/tlparse/provenance_lines.py)
with line numbers made lines of the payloads as written.
"""

from __future__ import annotations

from tlscope.analyse.tlparse.provenance_lines import (
    _drop_leading_empty,
    _kernel_to_post,
    _node_map,
    _post_to_kernel,
    cpp_kernel_lines,
    node_lines,
    python_kernel_lines,
    rust_lines,
)
from tlscope.format.json_boundary import JsonError, decode
from tlscope.format.provenance_file import LineLinks
from tlscope.model import events as ev
from tlscope.model.events import Event

NODE_MAPPINGS = "inductor_provenance_tracking_node_mappings"
#: Role -> the names of the texts that play it, preferred first (tlparse's preference).
ROLES: dict[str, tuple[str, ...]] = {
    "pre": ("before_pre_grad_graph", "inductor_pre_grad_graph"),
    "post": ("after_post_grad_graph", "inductor_post_grad_graph"),
    "python": ("inductor_output_code",),
    "cpp": ("inductor_aot_wrapper_code",),
    "nodes": (NODE_MAPPINGS,),
}
_NAMES = frozenset(name for names in ROLES.values() for name in names)


def text_name(event: Event | None) -> str | None:
    """The provenance text an event logs (one of ROLES' names), None for any other event."""
    if isinstance(event, (ev.Artifact, ev.GraphDump)):
        name = event.name
    elif isinstance(event, (ev.InductorPreGradGraph, ev.InductorPostGradGraph, ev.InductorOutputCode)):
        name = event.KEY
    else:
        return None
    return name if name in _NAMES else None


class Compilation:
    """The texts of one Inductor compilation: name -> payload md5 (the newest of each name)."""

    __slots__ = ("texts",)

    def __init__(self, texts: dict[str, str] | None = None) -> None:
        self.texts: dict[str, str] = texts or {}

    def role(self, role: str) -> str | None:
        """The md5 of the text playing `role`, by tlparse's preference."""
        return next((self.texts[n] for n in ROLES[role] if n in self.texts), None)


class ProvenanceFold:
    """Feeds: (compile id key, text name, md5) in log order. `compilations()`: those with node mappings."""

    def __init__(self) -> None:
        self._by_cid: dict[str, list[Compilation]] = {}
        #: (compile id key, its compilation) in the order their node mappings came.
        self._order: list[tuple[str, Compilation]] = []

    def add(self, cid: str, name: str, md5: str) -> None:
        groups = self._by_cid.setdefault(cid, [Compilation()])
        current = groups[-1]
        if name in current.texts and NODE_MAPPINGS in current.texts:
            pre = {n: current.texts[n] for n in ROLES["pre"] if n in current.texts}
            current = Compilation(pre)
            groups.append(current)
        current.texts[name] = md5
        if name == NODE_MAPPINGS and all(c is not current for _, c in self._order):
            self._order.append((cid, current))

    def compilations(self) -> list[tuple[str, int, Compilation]]:
        """(compile id key, its n-th compilation from 1, the compilation), in node-mapping order."""
        result = []
        for cid, compilation in self._order:
            with_nodes = [c for c in self._by_cid[cid] if NODE_MAPPINGS in c.texts]
            result.append((cid, 1 + next(i for i, c in enumerate(with_nodes) if c is compilation), compilation))
        return result


class Links:
    """The line links of one compilation (each `{line: [lines]}`, 1-based lines of the payloads)."""

    __slots__ = ("code_to_post", "post_to_code", "post_to_pre", "pre_to_post")

    def __init__(self) -> None:
        self.pre_to_post: LineLinks = {}
        self.post_to_pre: LineLinks = {}
        self.code_to_post: LineLinks = {}
        self.post_to_code: LineLinks = {}


def _leading_empty(text: str) -> int:
    lines = rust_lines(text)
    return next((i for i, line in enumerate(lines) if line != ""), len(lines))


def _code_offset(code: str, language: str) -> int:
    """What turns tlparse's code line numbers into lines of the payload: its leading empty lines,
    and for Python the line of `# AOT ID:` (tlparse counts from it)."""
    offset = _leading_empty(code)
    if language == "python":
        lines = _drop_leading_empty(code)
        offset += next((i for i, t in enumerate(lines) if "# AOT ID:" in t), 0)
    return offset


def _keys(links: dict[int, list[int]]) -> LineLinks:
    return {str(k): v for k, v in links.items()}


def links(node_mappings: str, pre: str, post: str, code: str, language: str) -> Links:
    """The links between the texts; none when the node mappings are not a JSON object."""
    result = Links()
    try:
        mappings = decode(node_mappings)
    except JsonError:
        return result
    if not isinstance(mappings, dict):
        return result
    pre_lines, post_lines = node_lines(pre), node_lines(post)
    result.pre_to_post = _keys(_node_map(mappings.get("preToPost"), pre_lines, post_lines))
    result.post_to_pre = _keys(_node_map(mappings.get("postToPre"), post_lines, pre_lines))
    kernel_to_post = mappings.get("cppCodeToPost")
    kernels = sorted(kernel_to_post) if isinstance(kernel_to_post, dict) else []
    if not language or not kernels:
        return result
    found = python_kernel_lines(code, kernels) if language == "python" else cpp_kernel_lines(code, kernels)
    offset = _code_offset(code, language)
    kernel_lines = {k: [line + offset for line in lines] for k, lines in found.items()}
    result.code_to_post = _keys(_kernel_to_post(kernel_to_post, kernel_lines, post_lines))
    result.post_to_code = _keys(_post_to_kernel(mappings.get("postToCppCode"), post_lines, kernel_lines))
    return result
