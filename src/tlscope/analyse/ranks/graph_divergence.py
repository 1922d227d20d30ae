"""Compile ids whose Dynamo graphs differ between ranks: the same id, other code.

Ranks that compile the same compile ids can still have traced different graphs for them: a
branch on the rank or on data took another path, or an input had other sizes (an uneven batch).
The compile-id comparison cannot see it, and `tlscope diff --ranks A B` shows it only for the
two ranks one already suspects; at 1,000 ranks the question is which ranks, and where.

Each rank's Dynamo graph of a compile id is reduced to a print of its structure where the rank
is parsed (`structure_digest`: what each node computes, from what, its dtype and sizes; not the
constants, which carry each rank's own number, nor devices, each rank's own GPU, nor strides
or comments). The job's fold groups the ranks of a compile id by their prints and says, for
the largest group against the next, the first difference by structure (analyse/graph_diff.py,
the very comparison `diff --ranks` shows), reading the two graphs from the job's payloads.
Where every rank's Dynamo graph of an id agrees, their Inductor post-grad graphs are compared the
same way (kind `post_grad`): a pass that ran on some ranks only, or took another path there,
makes them run other code from one graph. A rank that logged no post-grad graph (its FX graph
cache hit) is not compared. Where the post-grad graphs agree too, Inductor's output code is
compared (kind `output_code`, since 1.37): a codegen setting changed on some ranks, or an
autotuning choice that went another way there, makes other kernels of one graph, with other
rounding. The code is compared as printed, each rank's own device index and cache paths masked
(`code_lines`): constants and block sizes are what differs.

A compile id is a frame's number in the order frames were first compiled, so a rank that
compiled one more frame early numbers every later frame differently: the same id then names
another function on that rank. So the graphs are compared by function, not by number
(`alignment_keys`: analyse/ranks/frames.py, which says the functions some ranks compiled alone).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from tlscope.analyse.excerpt import around, differs_at
from tlscope.analyse.ranks.frames import Numbering
from tlscope.analyse.ranks.words import NAMED, who
from tlscope.analyse.ranks.words import count as _count

if TYPE_CHECKING:
    from tlscope.analyse.graph_diff import NodeChange
    from tlscope.format.compiles import CompileEntry, Dynamic, SourceLocation

#: An assignment line of a graph's code: `name: "f32[8][1]cpu" = torch.sin(l_x_);  l_x_ = None`.
#: Possessive names and blanks that stay on their line: a log's line of a million spaces is read
#: once, not once per prefix (a lazy `[\w, ]*?` before `\s*=` was quadratic in it).
_LINE = re.compile(r'^[ \t]+[A-Za-z_][\w, ]*+(?:[ \t]*:[ \t]*"(?P<type>[^"\n]*)")?[ \t]*=(?!=)(?P<value>[^\n]*)$', re.M)
#: A literal of a node's call (a string, a number): each rank's own constants are not structure.
_LITERAL = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|(?<![\w.])-?\d++(?:\.\d++)?(?:e-?\d++)?(?![\w.])")
#: How a graph sentence names the command that shows the rest: JOB stands for the job's folder,
#: which ranks.json cannot know (it moves); a text view that does names it (`said_sentences`).
GRAPH_DIFF = "tlscope diff JOB --ranks "
#: Compile ids whose difference is worded (two graphs read each); the rest are listed.
WORDED = 20

#: The graphs each rank's print is made of, where the rank is parsed: Dynamo's, and Inductor's
#: post-grad graph (what its passes made of it: a pass that runs on some ranks only, or takes
#: another path on them, changes what the ranks run, collectives included, from one Dynamo graph).
PRINTED = ("dynamo_output_graph", "inductor_post_grad_graph")

#: Reads a payload of the job (`payloads/<md5>.txt`) as text; None when it cannot.
PayloadText = Callable[[str], "str | None"]
#: Inductor's output code of a compile: compared between ranks where their graphs agree.
CODE = "inductor_output_code"
#: The device index of each rank's own GPU, as graphs, guards and code print it (`cuda:1`,
#: `index=1`, `device=1`, `_DeviceGuard(1)`, `set_device(1)`, `get_raw_stream(1)` and the
#: `stream1` named after it): what differs between two ranks of one job without meaning anything.
#: Each a literal (skipped, with `in`, where the text lacks it) and the pattern that masks what
#: follows it: one scan per literal present, a fifth of one alternation of look-behinds' time.
#: Each pattern starts with its literal (no `\b` before it): `re` then finds it by its prefix,
#: 30x faster than trying the pattern at every position (1.8 ms against 0.06 ms on 90 KB).
_DEVICES = (
    ("cuda:", r"(cuda:)\d+"),
    ("xpu:", r"(xpu:)\d+"),
    ("index=", r"(index=)\d+"),
    ("device=", r"(device=)\d+"),
    ("_DeviceGuard(", r"(_DeviceGuard\()\d+"),
    ("set_device(", r"(set_device\()\d+"),
    ("get_raw_stream(", r"(get_raw_stream\()\d+"),
    ("stream", r"(stream)\d+\b"),
)
#: ... and a kernel's file in the rank's own cache folder (named by its source, which names the
#: device): what differs between ranks' output code without the code differing.
_CODE_MASKS = [
    (literal, re.compile(pattern), r"\1…")
    for literal, pattern in (
        ("# kernel path: ", r"(# kernel path: )[^\n]*"),
        ("/tmp/torchinductor_", r"(/tmp/torchinductor_)[^\s'\"]*"),
        ("$TORCHINDUCTOR_CACHE_DIR", r"(\$TORCHINDUCTOR_CACHE_DIR)[^\s'\"]*"),
        *_DEVICES,
    )
]
#: ... and, for `rank_masked`, a value of the process environment fx_graph_runnable sets
#: (`os.environ['RANK'] = '1'`).
_RANK_MASKS = [
    ("os.environ[", re.compile(r"(\bos\.environ\['[^'\n]*'\] = )'[^'\n]*'"), r"\1'…'"),
    *((literal, re.compile(pattern), r"\1…") for literal, pattern in _DEVICES),
]
#: How wide a changed line of code a sentence shows, and how much of it before the change.
CODE_WIDTH = 72
CODE_BEFORE = 24
#: How far past the first difference two codes are aligned (difflib), and how many lines of the
#: first changed stretch of each side are paired to find the two that changed least.
WINDOW = 200
PAIRED = 12


class GraphPrint(msgspec.Struct, frozen=True, kw_only=True):
    """A compile id's Dynamo graphs on one rank, as the ranks' comparison sees them."""

    #: `name (file:line)` of the compiled function, `?` when the log does not say.
    function: str
    #: The structure of its Dynamo graphs (`structure_digest`), in order, joined.
    digest: str
    #: The last Dynamo graph's payload (`payloads/<md5>.txt`): the one a difference is read from.
    payload: str | None = None
    #: The structure of its Inductor post-grad graphs, joined; "" when it logged none (a compile
    #: whose FX graph cache hit logs none) or one was not read: then not compared.
    post_grad: str = ""
    #: The last post-grad graph's payload.
    post_grad_payload: str | None = None
    #: Its Inductor output code's payloads, in order, separated by spaces; "" when it logged none:
    #: then not compared. Compared by bytes as ranks are added, by masked text (`code_lines`)
    #: where the bytes differ, when the job's payloads are read. Since 1.37.
    code_payloads: str = ""


class GraphGroup(msgspec.Struct, kw_only=True):
    """Ranks whose Dynamo graphs of one compile id have the same structure."""

    ranks: list[int]
    #: The compiled function, `name (file:line)`.
    function: str
    #: The lowest rank's Dynamo graph (`payloads/<md5>.txt`), for a viewer to open.
    payload: str | None = None
    #: The lowest rank's compile id for the graph: the mismatch's `id`, or another when ranks
    #: number the function differently (`frames`). Since 1.31.
    id: str = ""


class GraphMismatch(msgspec.Struct, kw_only=True):
    """A compile id whose Dynamo graphs differ between ranks."""

    #: The compile id the most ranks give it (each group's own is `groups[].id`).
    id: str
    #: `graph`, or (since 1.32) `post_grad`: the ranks' Dynamo graphs agree, their Inductor
    #: post-grad graphs do not (the groups are of the ranks that logged one, their `payload` the
    #: post-grad graph), or (since 1.37) `output_code`: the graphs agree, Inductor's output code
    #: does not (the groups' `payload` the first output code that differs). Before 1.31,
    #: `function` said an id that names other functions on some ranks; the graphs are compared
    #: by function since (`Divergence.frames` says those).
    kind: str
    #: The ranks grouped by graph, the largest group first (lower ranks first on a tie).
    groups: list[GraphGroup]
    #: In one sentence, with the first difference between the first two groups.
    sentence: str


def function_label(where: SourceLocation | None) -> str:
    """`step (train.py:18)`: a compiled function as the ranks' comparison names it (the file's
    base name: every rank's copy of the program may sit elsewhere)."""
    if where is None:
        return "?"
    file = (where.file or "?").rsplit("/", 1)[-1]
    return f"{where.name or '?'} ({file}:{where.line if where.line is not None else '?'})"


def compile_label(entry: CompileEntry) -> str:
    """`function_label` of a compile, named as every sentence names it (`Sequential.forward` for a
    module torch's wrapper `inner` compiled, format 1.46 `module`)."""
    return function_label(entry.said_function())


def dynamic_inputs(dynamic: Dynamic | None) -> dict[str, str]:
    """`function\nplaceholder` (`step (train.py:18)\nL_x_`) -> how the rank made that graph input
    dynamic on its own (compiles.json `dynamic`): what says why one rank's graph has a symbol
    where another's has a size."""
    from tlscope.analyse.fold.graphs import placeholder_name

    found: dict[str, str] = {}
    for source in dynamic.sources if dynamic is not None else []:
        if source.by == "profile":
            how = "from its PGO profile (torch keeps one a rank)"
        else:
            how = f"by recompiling ({', '.join(source.changed[:2])})" if source.changed else "by recompiling"
        found[f"{function_label(source.function)}\n{placeholder_name(source.source)}"] = how
    return found


def structure_digest(text: str) -> str | None:
    """The print of a Dynamo graph's structure; None when the text is no readable graph.

    Its inputs (name, dtype and sizes) and each assignment line (dtype and sizes, and the call
    with its literals blanked), in order: equal for two ranks that traced the same code on inputs
    of the same sizes, whatever their constants (`x + rank`), devices or strides.
    """
    # Here, not at the top: a rank's parse has the graph reader loaded already, and a job's
    # summary read from its ranks.json never comes here.
    from tlscope.analyse.fold.graphs import graph_shape

    nodes, inputs = graph_shape(text)  # (None, []) past MAX_GRAPH_BYTES
    if nodes is None:
        return None
    digest = hashlib.md5(usedforsecurity=False)
    for graph_input in inputs:
        digest.update(f"{graph_input.name} {_sizes(graph_input.type)}\n".encode())
    for line in _LINE.finditer(text, text.find("def forward(")):
        call = _LITERAL.sub("#", line["value"].split(";", 1)[0]).strip()
        digest.update(f"{_sizes(line['type'])} {call}\n".encode())
    return digest.hexdigest()[:16]


def code_lines(text: str) -> list[str]:
    """A compile's output code as the ranks' comparison sees it, line by line: each rank's own
    device index and cache paths masked (the lines stay where they were)."""
    return _masked(text, _CODE_MASKS).split("\n")


def rank_masked(text: str) -> str:
    """`text` (a graph, guards, code) with what is each rank's own masked: its device index
    (`cuda:…`) and its process's environment (fx_graph_runnable's `os.environ[...] = …` lines:
    `RANK`, `LOCAL_RANK`, the launcher's files). How `tlscope diff --ranks` reads two ranks'
    payloads, whose GPUs and environments differ by design."""
    return _masked(text, _RANK_MASKS)


def _masked(text: str, masks: list[tuple[str, re.Pattern[str], str]]) -> str:
    """`text` with each mask applied (its pattern's match replaced, its first group kept) where
    the text holds the mask's literal."""
    for literal, pattern, replacement in masks:
        if literal in text:
            text = pattern.sub(replacement, text)
    return text


def code_digest(text: str) -> str:
    """The print of an output code as the ranks compare it: its masked text's (`code_lines`) MD5."""
    return hashlib.md5("\n".join(code_lines(text)).encode(), usedforsecurity=False).hexdigest()[:16]


def _sizes(annotation: str | None) -> str:
    """`f32[8, 32]` of `f32[8, 32][32, 1]cuda:1`; a `Sym(s0)` or other annotation as printed."""
    from tlscope.analyse.fold.graphs import dtype_and_sizes

    if annotation is None:
        return ""
    return dtype_and_sizes(annotation) or annotation


class _Seen(msgspec.Struct):
    """A graph print's group so far: its lowest rank's compile id, payload and inputs made
    dynamic on their own (`dynamic_inputs`: a group's symbol is explained by the rank whose graph
    is read), and every rank with it."""

    rank: int
    id: str
    payload: str | None
    dynamic: dict[str, str]
    ranks: list[int]


class GraphFold:
    """Every rank's graph prints, kept a rank at a time: a compile id named by function
    (`alignment_keys`) -> (function, digest) -> its group so far."""

    def __init__(self) -> None:
        self.prints: dict[str, dict[tuple[str, str], _Seen]] = {}
        #: ... and the same of the post-grad graphs, of the ranks that logged one.
        self.post: dict[str, dict[tuple[str, str], _Seen]] = {}
        #: ... and of the output code, of the ranks that logged one.
        self.code: dict[str, dict[tuple[str, str], _Seen]] = {}

    def add(
        self, rank: int, graphs: dict[str, GraphPrint], dynamic: dict[str, str], names: dict[str, str] | None = None
    ) -> None:
        for cid, found in graphs.items():
            name = names.get(cid, cid) if names else cid
            _join(self.prints.setdefault(name, {}), (found.function, found.digest), rank, cid, found.payload, dynamic)
            if found.post_grad:
                post = self.post.setdefault(name, {})
                _join(post, (found.function, found.post_grad), rank, cid, found.post_grad_payload, {})
            if found.code_payloads:
                code = self.code.setdefault(name, {})
                _join(code, (found.function, found.code_payloads), rank, cid, found.code_payloads, {})

    def mismatches(
        self, at: dict[str, int], read: PayloadText | None, numbering: Numbering | None = None
    ) -> list[GraphMismatch]:
        """The compile ids whose ranks' graphs differ, in compile order (`at`: compile id -> its
        place), each said under the id the most ranks give it (`numbering`; without it, the
        first group's); the first WORDED say where."""
        found: list[GraphMismatch] = []
        made = [(name, "graph", _groups(groups)) for name, groups in self.prints.items() if len(groups) > 1]
        # Where the Dynamo graphs agree, the post-grad graphs of the ranks that logged one.
        made += [
            (name, "post_grad", _groups(post))
            for name, post in self.post.items()
            if len(post) > 1 and len(self.prints.get(name, {})) == 1
        ]
        digest = _code_digests(read) if read is not None else None
        made += self._code_groups(digest) if digest is not None else []
        made.sort(key=lambda m: min(at.get(group.id, len(at)) for group, _ in m[2]))
        for name, kind, mine in made:
            listed = [group for group, _ in mine]
            cid = numbering.usual(name) if numbering is not None and name in numbering.ids else listed[0].id
            also = numbering.others(name) if numbering is not None and name in numbering.ids else ""
            worded = read if len(found) < WORDED else None
            if kind == "output_code" and digest is not None:
                sentence = _code_sentence(cid, also, listed, worded, digest)
            else:
                sentence = _sentence(cid, also, listed, worded, [dynamic for _, dynamic in mine], kind)
            found.append(GraphMismatch(id=cid, kind=kind, groups=listed, sentence=sentence))
        return found

    def _code_groups(
        self, digest: Callable[[str], str]
    ) -> list[tuple[str, str, list[tuple[GraphGroup, dict[str, str]]]]]:
        """Where the graphs agree, post-grad ones too, the output code of the ranks that logged
        one: grouped by bytes as the ranks were added, merged here by masked text (`digest`: a
        GPU rank's code differs from another's by its device only)."""
        found = []
        for name, code in self.code.items():
            if len(code) > 1 and len(self.prints.get(name, {})) == 1 and len(self.post.get(name, {})) <= 1:
                merged: dict[tuple[str, str], _Seen] = {}
                for (function, payloads), seen in code.items():
                    _merge(merged, (function, "+".join(map(digest, payloads.split()))), seen)
                if len(merged) > 1:
                    found.append((name, "output_code", _groups(merged)))
        return found


def _code_digests(read: PayloadText) -> Callable[[str], str]:
    """An output code's print (`code_digest`) by its payload, each read once; an unread one's
    name (compared by its bytes)."""
    digests: dict[str, str] = {}

    def digest(payload: str) -> str:
        if payload not in digests:
            text = read(payload)
            digests[payload] = code_digest(text) if text is not None else payload
        return digests[payload]

    return digest


def _merge(groups: dict[tuple[str, str], _Seen], key: tuple[str, str], seen: _Seen) -> None:
    """A group `seen` into the group of `key`, which its lowest rank speaks for."""
    known = groups.get(key)
    if known is None:
        groups[key] = _Seen(seen.rank, seen.id, seen.payload, seen.dynamic, list(seen.ranks))
        return
    known.ranks.extend(seen.ranks)
    if seen.rank < known.rank:
        known.rank, known.id, known.payload = seen.rank, seen.id, seen.payload


def _join(
    groups: dict[tuple[str, str], _Seen],
    key: tuple[str, str],
    rank: int,
    cid: str,
    payload: str | None,
    dynamic: dict[str, str],
) -> None:
    """Rank `rank`'s print `key` into its group, which its lowest rank speaks for."""
    known = groups.get(key)
    if known is None:
        groups[key] = _Seen(rank, cid, payload, dynamic, [rank])
        return
    known.ranks.append(rank)
    if rank < known.rank:
        groups[key] = _Seen(rank, cid, payload, dynamic, known.ranks)


def _groups(groups: dict[tuple[str, str], _Seen]) -> list[tuple[GraphGroup, dict[str, str]]]:
    """One compile id's groups, the largest first (lower ranks first on a tie)."""
    made = [
        (GraphGroup(ranks=sorted(seen.ranks), function=function, payload=seen.payload, id=seen.id), seen.dynamic)
        for (function, _), seen in groups.items()
    ]
    made.sort(key=lambda g: (-len(g[0].ranks), g[0].ranks[0]))
    return made


def _sentence(
    cid: str,
    also: str,
    groups: list[GraphGroup],
    read: PayloadText | None,
    why: list[dict[str, str]],
    kind: str = "graph",
) -> str:
    """`cid`: the id said; `also`: the other ranks' ids for it (`Numbering.others`), or ""."""
    first, second = groups[0], groups[1]
    count = "" if len(groups) == 2 else f" {len(groups)}"
    what = f"ranks traced{count} different graphs"
    if kind == "post_grad":
        what = f"ranks traced one graph, but Inductor's passes made{count} different post-grad graphs of it"
    head = f"{cid} {first.function}{also}: {what}"
    where = _difference(groups[:NAMED], read, why) if read is not None else None
    pair = f"{GRAPH_DIFF}{first.ranks[0]} {second.ranks[0]}"
    if where is None:
        return f"{head} ({'; '.join(who(g.ranks) for g in groups[:NAMED])}{_more(groups)}); {pair} shows how"
    return f"{head}: {where}{_more(groups)}; {pair} shows the rest"


def _code_sentence(
    cid: str, also: str, groups: list[GraphGroup], read: PayloadText | None, digest: Callable[[str], str]
) -> str:
    """`[0/0] step (x.py:3): ranks traced one graph, but Inductor generated different code for
    it: output code 1, line 34 reads "…" on rank 0, "…" on rank 1; tlscope diff … shows the rest`.
    Each group's `payload` (its output code's payloads, joined) becomes the one a viewer opens:
    the first that differs (when the difference is not read, the first of another name)."""
    first, second = groups[0], groups[1]
    versions = "" if len(groups) == 2 else f" ({len(groups)} versions)"
    what = f"ranks traced one graph, but Inductor generated different code for it{versions}"
    head = f"{cid} {first.function}{also}: {what}"
    names = [(g.payload or "").split() for g in groups]
    sides = (who(first.ranks), who(second.ranks))
    # Unread, the first payloads whose names (their MD5s) differ: other bytes, if maybe one code.
    at = next((n for n, (x, y) in enumerate(zip(names[0], names[1], strict=False)) if x != y), 0)
    at, where = _code_difference(names[0], names[1], read, sides, digest) if read is not None else (at, None)
    for group, mine in zip(groups, names, strict=True):
        group.payload = mine[min(at, len(mine) - 1)] if mine else None
    pair = f"{GRAPH_DIFF}{first.ranks[0]} {second.ranks[0]}"
    if where is None:
        return f"{head} ({'; '.join(who(g.ranks) for g in groups[:NAMED])}{_more(groups)}); {pair} shows how"
    return f"{head}: {where}{_more(groups)}; {pair} shows the rest"


def _code_difference(
    a: list[str], b: list[str], read: PayloadText, sides: tuple[str, str], digest: Callable[[str], str]
) -> tuple[int, str | None]:
    """The first output code of `a` (payloads) whose masked text differs from `b`'s (`digest`),
    and its first changed line in words (`sides` names the two groups); (0, None) when none is
    read."""
    for at, (x, y) in enumerate(zip(a, b, strict=False)):
        texts = (read(x), read(y)) if digest(x) != digest(y) else (None, None)
        if texts[0] is None or texts[1] is None:
            continue
        said = _first_change(code_lines(texts[0]), code_lines(texts[1]), sides)
        if said is not None:
            return at, f"output code {at + 1}, {said}"
    if len(a) != len(b):
        return 0, f"{sides[0]} logged {len(a)} output codes, {sides[1]} {len(b)}"
    return 0, None


def _first_change(a: list[str], b: list[str], sides: tuple[str, str]) -> str | None:
    """Where two masked codes first differ, in words: the two lines of the first changed stretch
    that changed least (`line 41 reads "…(16L))" on rank 0, line 42 "…(1L))" on rank 1, after a
    line only rank 1 has ("#pragma GCC ivdep")`), or the lines one side has more; None when equal.
    The stretch is found by difflib within WINDOW lines of the first difference (the common head
    and tail cut first), its lines paired within PAIRED of its start: bounded on any code."""
    # Here, not at the top: only the job's fold words a code difference, never a rank's parse.
    from difflib import SequenceMatcher

    head = next((n for n, (p, q) in enumerate(zip(a, b, strict=False)) if p != q), min(len(a), len(b)))
    end_a, end_b = len(a), len(b)
    while end_a > head and end_b > head and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    if end_a == head and end_b == head:
        return None
    ops = SequenceMatcher(
        None, a[head : min(end_a, head + WINDOW)], b[head : min(end_b, head + WINDOW)], autojunk=False
    )
    tag, i1, i2, j1, j2 = next(op for op in ops.get_opcodes() if op[0] != "equal")
    i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
    if tag != "replace":
        side, lines, at = (sides[1], b[j1:j2], j1) if tag == "insert" else (sides[0], a[i1:i2], i1)
        return f"{side} {_has(side)} {_count(len(lines), 'more line')} at line {at + 1}: {_shown(lines[0], 0)}"
    pairs = [(i, j) for i in range(i1, min(i2, i1 + PAIRED)) for j in range(j1, min(j2, j1 + PAIRED))]
    i, j = max(pairs, key=lambda ij: (SequenceMatcher(None, a[ij[0]], b[ij[1]]).ratio(), -ij[0], -ij[1]))
    cut = differs_at(a[i], b[j])
    other = f"line {j + 1} " if j != i else ""
    said = f"line {i + 1} reads {_shown(a[i], cut)} on {sides[0]}, {other}{_shown(b[j], cut)} on {sides[1]}"
    if i > i1 or j > j1:  # lines before the pair that only one side has
        side, first, n = (sides[1], b[j1], j - j1) if j - j1 >= i - i1 else (sides[0], a[i1], i - i1)
        said += f", after {_count(n, 'line')} only {side} {_has(side)} ({_shown(first, 0)}{', …' if n > 1 else ''})"
    return said


def _has(side: str) -> str:
    """The verb of `side`, as `who` names it: `rank 1 has`, `ranks 5, 6 have`."""
    return "have" if side.startswith("ranks ") else "has"


def _shown(line: str, cut: int) -> str:
    """A changed line of code, quoted, from a little before where it changed (`cut`), its indent dropped."""
    text = line.lstrip()
    return f'"{around(text, max(0, cut - (len(line) - len(text))), CODE_WIDTH, CODE_BEFORE)}"' if text else "nothing"


def _more(groups: list[GraphGroup]) -> str:
    return f", … ({len(groups) - NAMED} more groups)" if len(groups) > NAMED else ""


def _difference(groups: list[GraphGroup], read: PayloadText, why: list[dict[str, str]]) -> str | None:
    """The first difference by structure of each group's graph from the first group's, in words:
    one size said for every group when that is what differs (an uneven batch), else the first
    two groups' difference. None when a graph cannot be read."""
    # Here, not at the top: a rank's parse never words a difference, only the job's fold does.
    from tlscope.analyse.fxgraph import FxGraph, parse_graph
    from tlscope.analyse.graph_diff import diff_graphs

    graphs = []
    for group in groups:
        text = read(group.payload) if group.payload is not None else None
        graph = parse_graph(text) if text is not None else None
        if not isinstance(graph, FxGraph):
            return None
        graphs.append(graph)
    diffs = [diff_graphs("dynamo_output_graph", graphs[0], other).changes for other in graphs[1:]]
    firsts = [_leading(changes) for changes in diffs]
    if not firsts[0]:
        return None
    change = firsts[0][0]
    if all(f and f[0].kind in _SIZED and (f[0].kind, f[0].name) == (change.kind, change.name) for f in firsts):
        sizes = [f"{_sizes(change.a)} on {who(groups[0].ranks)}"]
        sizes += [f"{_sizes(f[0].b)} on {who(g.ranks)}" for f, g in zip(firsts, groups[1:], strict=True)]
        said = f"{_SIZED[change.kind]} {change.name} is {', '.join(sizes)}{_at(change.source)}"
        return said + _why(groups, why, change.name)
    return _words(firsts[0] + diffs[0], groups[0].ranks, groups[1].ranks)


def _leading(changes: list[NodeChange]) -> list[NodeChange]:
    """The change to say first: an input's sizes when one changed (a dynamic graph's symbol
    inputs, `s77: "Sym(s77)"`, and its nodes' sizes follow from it), else the first change."""
    sized = next((c for c in changes if c.kind == "input_shape"), None)
    return [sized] if sized is not None else changes[:1]


def _why(groups: list[GraphGroup], why: list[dict[str, str]], name: str) -> str:
    """`; rank 0 made it dynamic by recompiling ([0/1] dim 0: 8 -> 10)`: for each group whose
    graph input `name` torch made dynamic on its own (its lowest rank's compiles.json says how)."""
    said = [
        f"{who(group.ranks)} made it dynamic {how}"
        for group, known in zip(groups, why, strict=False)
        if (how := known.get(f"{group.function}\n{name}")) is not None
    ]
    return "; " + "; ".join(said) if said else ""


#: Changes of a size, said for every group, and how each names what changed.
_SIZED = {"input_shape": "input", "shape": "node"}


def _words(changes: list[NodeChange], a: list[int], b: list[int]) -> str:
    """The first of `changes` (between a's graph and b's) in words: `ranks 0, 2 call sin(l_x_) at
    _ranks.py:62 (…), ranks 1, 3 cos(l_x_) at _ranks.py:63 (…)`, a node only on one side said with
    the other side's first such node (where the code went another way); an input one side lacks;
    a node's other sizes or arguments."""
    first = changes[0]
    on_a, on_b = who(a), who(b)
    if first.kind in ("added", "removed"):
        gone = next((c for c in changes if c.kind == "removed"), None)
        new = next((c for c in changes if c.kind == "added"), None)
        if gone is not None and new is not None:
            return f"{on_a} {_calls(a)} {_call(gone.a)}{_at(gone.source)}, {on_b} {_call(new.b)}{_at(new.source)}"
        only, side, other = (gone, a, b) if gone is not None else (new, b, a)
        assert only is not None  # `first` is one of them
        verb = "does" if len(other) == 1 else "do"
        return f"{who(side)} {_calls(side)} {_call(only.a or only.b)}{_at(only.source)}, {who(other)} {verb} not"
    if first.kind in ("input_added", "input_removed"):
        has, lacks = (on_b, on_a) if first.kind == "input_added" else (on_a, on_b)
        return f"input {first.name} on {has}, not on {lacks}"
    label = f"{first.name} reads" if first.kind == "args" else f"{first.name} calls"
    return f"{label} {_sizes(first.a)} on {on_a}, {_sizes(first.b)} on {on_b}{_at(first.source)}"


def _calls(ranks: list[int]) -> str:
    return "calls" if len(ranks) == 1 else "call"


def _call(line: str | None) -> str:
    """`sin(l_x_)` of a node's line `sin: f32[8][1]cpu = sin(l_x_)`."""
    return (line or "?").split(" = ", 1)[-1]


def _at(source: str | None) -> str:
    """` at _ranks.py:62 (return x.sin() + rank)` of a change's `file:line  code`."""
    if not source:
        return ""
    place, _, code = source.partition("  ")
    return f" at {place}" + (f" ({' '.join(code.split())})" if code.strip() else "")
