"""provenance.json: Inductor provenance of every compilation that logged it (FORMAT.md).

Fed by the format writer with each record; only provenance texts' payload md5s are remembered
during the pass. At the end each compilation's texts are read back from payloads/, one
compilation at a time, and their line links computed (analyse/provenance.py). No file when no
compilation logged node mappings.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import msgspec

from tlscope.analyse.provenance import Compilation, Links, ProvenanceFold, links, text_name
from tlscope.format import layout
from tlscope.format.manifest import FORMAT_MINOR, FORMAT_VERSION
from tlscope.format.provenance_file import ProvenanceEntry, ProvenanceFile
from tlscope.model.record import Record
from tlscope.write.outdir import OutputDir


class ProvenanceStore:
    def __init__(self, payload_path: Callable[[str], Path]) -> None:
        self._payload_path = payload_path
        self._fold = ProvenanceFold()
        #: Compile id key (its directory name) -> its display form.
        self._display: dict[str, str] = {}
        self._memo = _LinksMemo()

    def feed(self, record: Record) -> None:
        if record.payload_md5 is None or record.compile_id is None:
            return
        name = text_name(record.event)
        if name is None:
            return
        cid = record.compile_id.normalised()
        self._display.setdefault(cid.dirname, cid.display)
        self._fold.add(cid.dirname, name, record.payload_md5)

    def write(self, out: OutputDir) -> None:
        """The file streamed one compilation at a time: the same bytes as encoding the whole
        ProvenanceFile, without holding every compilation's line links at once (a 1 GB log's
        were ~18 MB of RSS at the end of the run)."""
        compilations = self._fold.compilations()
        if not compilations:
            return
        head = msgspec.json.encode(
            ProvenanceFile(format_version=FORMAT_VERSION, format_minor=FORMAT_MINOR, compilations=[])
        )
        assert head.endswith(b"[]}")  # compilations is the last field
        with out.path(layout.PROVENANCE).open("wb") as f:
            f.write(head[:-2])
            for i, (key, n, compilation) in enumerate(compilations):
                if i:
                    f.write(b",")
                f.write(msgspec.json.encode(self._entry(key, n, compilation)))
            f.write(b"]}")

    def _entry(self, key: str, n: int, compilation: Compilation) -> ProvenanceEntry:
        md5s = {role: compilation.role(role) for role in ("pre", "post", "python", "cpp", "nodes")}
        language = "python" if md5s["python"] else "cpp" if md5s["cpp"] else ""
        code = md5s["python"] or md5s["cpp"]
        texts_key = tuple(md5s.values())  # the texts decide the links (and the language)
        found = self._memo.get(texts_key)
        if found is None:
            texts = {role: self._text(md5) for role, md5 in md5s.items()}
            found = links(texts["nodes"], texts["pre"], texts["post"], texts.get(language, ""), language)
            self._memo.put(texts_key, found)
        return ProvenanceEntry(
            id=self._display[key],
            dir=key,
            n=n,
            pre=_name(md5s["pre"]),
            post=_name(md5s["post"]),
            code=_name(code),
            node_mappings=_name(md5s["nodes"]),
            code_language=language,
            pre_to_post=found.pre_to_post,
            post_to_pre=found.post_to_pre,
            code_to_post=found.code_to_post,
            post_to_code=found.post_to_code,
        )

    def _text(self, md5: str | None) -> str:
        if md5 is None:
            return ""
        return self._payload_path(md5).read_bytes().decode("utf-8", "replace")


class _LinksMemo:
    """The line links last computed, by the texts they link (their md5s), bounded.

    A long job logs the same compilations again and again under new compile ids (the 1 GB trace
    scaled from the big one: each of its 48 compilations 29 times), and computing a compilation's
    links (reading its four texts back, parsing its graphs' node lines and its kernels) was
    ~0.08 s of CPU per copy, all at the end of the run. Bounded by compilations and by line
    links kept, so a log of many distinct compilations holds no more than a few at once.
    """

    def __init__(self, entries: int = 64, links_kept: int = 200_000) -> None:
        self._kept: OrderedDict[tuple[str | None, ...], tuple[Links, int]] = OrderedDict()
        self._entries = entries
        self._budget = links_kept
        self._size = 0

    def get(self, key: tuple[str | None, ...]) -> Links | None:
        found = self._kept.get(key)
        if found is None:
            return None
        self._kept.move_to_end(key)
        return found[0]

    def put(self, key: tuple[str | None, ...], found: Links) -> None:
        maps = (found.pre_to_post, found.post_to_pre, found.code_to_post, found.post_to_code)
        size = sum(len(lines) + 1 for links in maps for lines in links.values())
        if size > self._budget // 4:
            return
        self._kept[key] = (found, size)
        self._size += size
        while len(self._kept) > self._entries or self._size > self._budget:
            self._size -= self._kept.popitem(last=False)[1][1]


def _name(md5: str | None) -> str | None:
    return None if md5 is None else f"{layout.PAYLOADS}/{md5}.txt"
