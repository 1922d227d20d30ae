"""Provenance pages (-i): per compile directory key, graphs and code side by side with line links.

Only file paths are remembered during the pass; texts are read back at the end, one key at a
time, so memory stays bounded by the largest compilation.
"""

from __future__ import annotations

from pathlib import Path

from tlscope.analyse.tlparse.directory import DirKey
from tlscope.analyse.tlparse.provenance_lines import line_mappings
from tlscope.write.outdir import OutputDir
from tlscope.write.report.render import render

#: Role -> file-name prefixes in tlparse's preference order.
ROLES: dict[str, tuple[str, ...]] = {
    "pre": ("before_pre_grad_graph", "inductor_pre_grad_graph"),
    "post": ("after_post_grad_graph", "inductor_post_grad_graph"),
    "py": ("inductor_output_code",),
    "cpp": ("inductor_aot_wrapper_code",),
    "nodes": ("inductor_provenance_tracking_node_mappings",),
}


class _Source:
    """Where an output's text is: the path of a file (under OUT, or a job's payloads/ for a rank of
    a job); `pre_line` when it stands for a `<pre>` page."""

    __slots__ = ("path", "pre_line")

    def __init__(self, path: str, pre_line: bool) -> None:
        self.path = path
        self.pre_line = pre_line


class ProvenanceCollector:
    def __init__(self) -> None:
        self._latest: dict[DirKey, dict[str, _Source]] = {}

    def output(self, key: DirKey, filename: str, source: str, *, pre_line: bool = False) -> None:
        """Remember the newest output of each tlparse pattern for this key: `source` is the path
        of the file holding its text."""
        found = self._latest.setdefault(key, {})
        for prefixes in ROLES.values():
            for prefix in prefixes:
                if filename.startswith(prefix):
                    found[prefix] = _Source(source, pre_line)

    def write(self, out: OutputDir, keys: list[DirKey]) -> list[tuple[str, str]]:
        pages = []
        for key in keys:
            name = f"provenance_tracking_{'(unknown)' if key is None else key.dirname}"
            texts = {role: self._text(key, prefixes) for role, prefixes in ROLES.items()}
            code, wrapped = texts["py"]
            mappings = line_mappings(texts["nodes"][0], texts["pre"][0], texts["post"][0], wrapped, texts["cpp"][0])
            html = render(
                "provenance_tracking.html.jinja",
                pre=texts["pre"][0],
                post=texts["post"][0],
                code=code,
                aot_code=texts["cpp"][0],
                mappings=mappings,
            )
            out.path(f"{name}.html").write_text(html, encoding="utf-8", errors="surrogateescape")
            pages.append((f"{name}.html", name))
        return pages

    def _text(self, key: DirKey, prefixes: tuple[str, ...]) -> tuple[str, str]:
        """(text to show, text tlparse computes line numbers on)."""
        found = self._latest.get(key, {})
        for prefix in prefixes:
            source = found.get(prefix)
            if source is not None:
                text = Path(source.path).read_bytes().decode("utf-8", "replace")
                # tlparse reads the highlighted page, whose first line is the <pre> tag.
                return text, (f"<pre>\n{text}\n</pre>\n" if source.pre_line else text)
        return "", ""
