"""Structure-aware mutations of real traces: the inputs of the fuzz harness (bench/fuzz.py).

A mutated input starts as a window of a REAL trace (the repo's corpus, tlparse's public traces):
its records (an envelope line and its payload lines) are decoded, one to three mutations are
applied where the format has structure (an envelope's fields, a JSON payload's values, the
string table, compile ids, ranks, names that become file names, payload MD5s), and the result is
written back as a log, optionally gzip-compressed and then damaged. Every mutation kind is named,
so a campaign can count inputs per kind and a crash can be traced to what provoked it.

Everything is a pure function of (seed, index): `make_case(pool, seed, index)` gives the same
files and the same command line every time, so a failing input is replayed from its index.

This module is harness code, not tlscope's: it shares nothing with tlscope's reader (its own
small line splitter below), so a reader bug cannot hide itself from the fuzzer.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A glog prefix as PyTorch writes it (harness-side copy, independent of tlscope's).
_PREFIX = re.compile(rb"^([VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^\]\n]{0,4096}\] )")
#: Stand-ins spliced into re-encoded JSON (raw text that json.dumps cannot produce).
_SPLICE = "\u0000fuzz-splice-{}\u0000"

#: Longest window of records taken from a trace (keeps each run short; bombs add their own bulk).
MAX_WINDOW = 60

# -- traces as records -------------------------------------------------------------------------


@dataclass
class Rec:
    """One record of a log: an envelope (decoded when it is JSON) and its payload lines."""

    prefix: bytes
    envelope: Any
    raw: bytes
    payload: list[bytes] | None = None
    #: The envelope was changed: re-encode it (else `raw` is written as it was).
    dirty: bool = False
    #: Keep has_payload equal to the payload's MD5 after a payload change (most mutations do,
    #: so the record gets past the reader's checks and reaches the writers).
    fix_md5: bool = True
    splices: dict[str, bytes] = field(default_factory=dict)

    @property
    def key(self) -> str | None:
        if not isinstance(self.envelope, dict):
            return None
        context = {"rank", "frame_id", "frame_compile_id", "attempt", "has_payload", "stack"}
        context |= {"compiled_autograd_id", "severity", "timestamp", "pathname", "thread"}
        keys = [k for k in self.envelope if k not in context]
        return keys[0] if keys else None

    def splice(self, raw: bytes) -> str:
        """A placeholder string that `encode` replaces with `raw` (any bytes, not JSON-checked)."""
        marker = _SPLICE.format(len(self.splices))
        self.splices[marker] = raw
        self.dirty = True
        return marker

    def copy(self) -> Rec:
        envelope = json.loads(json.dumps(self.envelope)) if self.envelope is not None else None
        payload = None if self.payload is None else list(self.payload)
        return Rec(self.prefix, envelope, self.raw, payload, self.dirty, self.fix_md5, dict(self.splices))

    def encode(self) -> bytes:
        if self.payload is not None and self.fix_md5 and isinstance(self.envelope, dict):
            md5 = hashlib.md5(b"\n".join(self.payload)).hexdigest()
            if self.envelope.get("has_payload") != md5:
                self.envelope["has_payload"] = md5
                self.dirty = True
        line = self.raw
        if self.dirty and self.envelope is not None:
            text = json.dumps(self.envelope, ensure_ascii=False).encode("utf-8", "surrogatepass")
            for marker, raw in self.splices.items():
                text = text.replace(json.dumps(marker, ensure_ascii=False).encode(), raw)
            line = self.prefix + text
        if self.payload is None:
            return line + b"\n"
        return line + b"\n" + b"".join(b"\t" + p + b"\n" for p in self.payload)


def parse_log(data: bytes) -> list[Rec]:
    """Records of a log: an envelope line with its tab-indented payload lines; other lines as they are."""
    records: list[Rec] = []
    for line in data.split(b"\n"):
        if line[:1] == b"\t" and records and records[-1].payload is not None:
            records[-1].payload.append(line[1:])
            continue
        if not line:
            continue
        match = _PREFIX.match(line)
        envelope = None
        if match is not None:
            try:
                envelope = json.loads(line[match.end() :])
            except (ValueError, RecursionError):
                envelope = None
        prefix = match.group(1) if match else b""
        has_payload = isinstance(envelope, dict) and "has_payload" in envelope
        records.append(Rec(prefix, envelope, line, [] if has_payload else None))
    return records


def encode_log(records: Iterable[Rec]) -> bytes:
    return b"".join(r.encode() for r in records)


def read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


# -- the pool of real traces -------------------------------------------------------------------


@dataclass
class Source:
    """One real log (or a job's rank logs): where it came from and its bytes, decoded on demand."""

    name: str
    files: list[tuple[str, bytes]]
    _parsed: dict[int, list[Rec]] = field(default_factory=dict, repr=False)

    def records(self, i: int = 0) -> list[Rec]:
        """The records of file `i` (parsed once; callers copy what they change: see `window`)."""
        if i not in self._parsed:
            self._parsed[i] = parse_log(self.files[i][1])
        return self._parsed[i]


@dataclass
class Pool:
    """The real traces mutations start from, and real records by event key to transplant."""

    singles: list[Source]
    jobs: list[Source]
    by_key: dict[str, list[Rec]]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.singles] + [j.name for j in self.jobs]


_RANK_FILE = re.compile(r"dedicated_log_torch_trace_rank_(\d+)")


def load_pool(roots: Iterable[Path], *, max_bytes: int = 4 << 20) -> Pool:
    """Every log under `roots` (single logs; folders with several rank logs also as jobs).

    Logs bigger than `max_bytes` decompressed are left out: a window of them is no different
    from a window of a smaller one, and they would make every campaign's start-up slow.
    """
    singles: list[Source] = []
    jobs: list[Source] = []
    for root in roots:
        if not root.is_dir():
            continue
        folders: dict[Path, list[tuple[str, bytes]]] = {}
        for path in sorted(root.rglob("*")):
            if not path.is_file() or not re.search(r"\.(log|txt)(\.gz)?$", path.name):
                continue
            data = read_bytes(path)
            if len(data) > max_bytes or not _PREFIX.match(data[:4096]):
                continue
            rel = f"{root.name}/{path.relative_to(root).as_posix()}"
            singles.append(Source(rel, [(path.name.removesuffix(".gz"), data)]))
            if _RANK_FILE.match(path.name):
                folders.setdefault(path.parent, []).append((path.name.removesuffix(".gz"), data))
        for folder, files in sorted(folders.items()):
            if len(files) > 1:
                jobs.append(Source(f"{root.name}/{folder.relative_to(root).as_posix()}/", sorted(files)))
    by_key: dict[str, list[Rec]] = {}
    for source in singles:
        for rec in source.records():
            if rec.key is not None and len(by_key.setdefault(rec.key, [])) < 8:
                by_key[rec.key].append(rec)
    return Pool(singles, jobs, by_key)


def window(records: list[Rec], rng: random.Random, size: int = MAX_WINDOW) -> list[Rec]:
    """A run of records from a random place, after the string-table lines that precede it.

    The `str` lines stay: frames later in the log refer to their indices, and a window
    without them would only test missing-string handling.
    """
    if len(records) <= size:
        return [r.copy() for r in records]
    start = rng.randrange(0, len(records) - size + 1)
    strings = [r for r in records[:start] if r.key == "str"][-200:]
    return [r.copy() for r in strings + records[start : start + size]]


# -- mutations ---------------------------------------------------------------------------------

Mutator = Callable[[list[Rec], random.Random, Pool], None]


def _envelopes(records: list[Rec]) -> list[Rec]:
    return [r for r in records if isinstance(r.envelope, dict)]


def _pick(records: list[Rec], rng: random.Random, keys: Iterable[str] = ()) -> Rec | None:
    wanted = set(keys)
    choices = [r for r in _envelopes(records) if not wanted or r.key in wanted]
    return rng.choice(choices) if choices else None


def _transplant(records: list[Rec], rng: random.Random, pool: Pool, key: str) -> Rec | None:
    """A real record with event `key` from the pool, inserted at a random place (None if none)."""
    candidates = pool.by_key.get(key)
    if not candidates:
        return None
    rec = rng.choice(candidates).copy()
    neighbour = _pick(records, rng)
    if neighbour is not None:
        rec.prefix = neighbour.prefix  # same process as the window, so its string table applies
        rec.dirty = True
        for context in ("rank", "frame_id", "frame_compile_id", "attempt"):
            if context in neighbour.envelope:
                rec.envelope[context] = neighbour.envelope[context]
    records.insert(rng.randrange(0, len(records) + 1), rec)
    return rec


def _pick_or_transplant(records: list[Rec], rng: random.Random, pool: Pool, keys: list[str]) -> Rec | None:
    found = _pick(records, rng, keys)
    if found is not None and rng.random() < 0.5:
        return found
    return _transplant(records, rng, pool, rng.choice(keys)) or found


def _nested(rng: random.Random, depth: int) -> bytes:
    shape = rng.choice(["list", "dict", "mixed", "open"])
    if shape == "list":
        return b"[" * depth + b"]" * depth
    if shape == "dict":
        return b'{"a":' * depth + b"1" + b"}" * depth
    if shape == "mixed":
        return b'[{"k":' * (depth // 2) + b"[]" + b"}]" * (depth // 2)
    return b"[" * depth  # never closed: invalid JSON, deep before the error


_DEPTHS = [100, 128, 129, 200, 999, 1000, 1500, 5000, 100_000]


def nest_envelope(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Deep nesting in an envelope: the event's value, a field inside it, or the `stack`."""
    rec = _pick(records, rng)
    if rec is None or rec.key is None:
        return
    raw = _nested(rng, rng.choice(_DEPTHS))
    where = rng.choice(["event", "field", "stack"])
    if where == "event":
        rec.envelope[rec.key] = rec.splice(raw)
    elif where == "field" and isinstance(rec.envelope[rec.key], dict):
        rec.envelope[rec.key][rng.choice(["ts", "name", "args", "fuzz"])] = rec.splice(raw)
    else:
        rec.envelope["stack"] = rec.splice(raw)


_JSON_PAYLOAD_KEYS = ["chromium_event", "artifact", "dynamo_guards", "compilation_metrics", "exported_program"]


def nest_payload(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Deep nesting in a JSON payload (chromium event, json artifact, torch_version, guards)."""
    rec = _pick_or_transplant(records, rng, pool, [*_JSON_PAYLOAD_KEYS, "torch_version"])
    if rec is None:
        return
    raw = _nested(rng, rng.choice(_DEPTHS))
    payload = _json_payload(rec)
    if isinstance(payload, dict) and payload and rng.random() < 0.7:
        key = rng.choice(sorted(payload))
        text = json.dumps({**payload, key: _SPLICE.format("p")}).encode()
        rec.payload = [text.replace(json.dumps(_SPLICE.format("p")).encode(), raw)]
    else:
        rec.payload = [raw]


def _json_payload(rec: Rec) -> Any:
    if not rec.payload:
        return None
    try:
        return json.loads(b"\n".join(rec.payload))
    except (ValueError, RecursionError):
        return None


_HUGE = [
    b"1" + b"0" * 400,
    b"-" + b"9" * 330,
    b"1e400",
    b"-1e400",
    b"1e308",
    b"2.5e-400",
    b"18446744073709551616",
    b"4294967296",
    b"-9223372036854775809",
    b"123456789012345678901234567890",
    b"1" * 5000,
]


def _number_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, path)]
    while stack and len(found) < 200:
        node, where = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, (*where, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(node))
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            found.append(where)
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


def huge_number(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Integers and floats at and beyond i64, u64, u32 and float range, in envelopes or JSON payloads."""
    raw = rng.choice(_HUGE)
    rec = _pick_or_transplant(records, rng, pool, ["chromium_event", "artifact", "compilation_metrics"])
    if rec is None:
        return
    payload = _json_payload(rec)
    if payload is not None and rng.random() < 0.6:
        paths = _number_paths(payload)
        if paths:
            _set(payload, rng.choice(paths), _SPLICE.format("n"))
        elif isinstance(payload, dict):
            payload["ts"] = _SPLICE.format("n")
        text = json.dumps(payload).encode().replace(json.dumps(_SPLICE.format("n")).encode(), raw)
        rec.payload = [text]
        return
    paths = _number_paths(rec.envelope)
    if paths:
        _set(rec.envelope, rng.choice(paths), rec.splice(raw))


_LONG_TEXT = ["é", "数", "😀", "a", "\u200b", "ß/"]


def _long_name(rng: random.Random) -> str:
    kind = rng.choice(["unicode", "eval", "path", "control", "dots"])
    n = rng.choice([50, 85, 86, 100, 128, 200, 255, 256, 1000, 5000])
    if kind == "unicode":
        return rng.choice(_LONG_TEXT) * n
    if kind == "eval":
        return "<eval_with_key>." + "".join(rng.choice("0123456789") for _ in range(n))
    if kind == "path":
        return "/".join(rng.choice(["..", ".", "a", "é" * 20, ""]) for _ in range(n // 10 + 1))
    if kind == "control":
        return "".join(rng.choice(["\u0000", "\n", "\t", "\x7f", "x", ":", "*", "\\"]) for _ in range(n))
    return "." * min(n, 300)


_NAMED = {
    "artifact": "name",
    "graph_dump": "name",
    "dump_file": "name",
    "optimize_ddp_split_child": "name",
    "inductor_output_code": "filename",
    "link": "name",
}


def long_name(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Names that become file names: long (in bytes more than characters), odd, path-like."""
    rec = _pick_or_transplant(records, rng, pool, list(_NAMED))
    if rec is None or rec.key not in _NAMED or not isinstance(rec.envelope.get(rec.key), dict):
        return
    rec.envelope[rec.key][_NAMED[rec.key]] = _long_name(rng)
    rec.dirty = True


_BAD_BYTES = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80" * 3]


def bad_utf8(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Invalid UTF-8 in an envelope string, a payload line, a prefix path or a raw line."""
    bad = rng.choice(_BAD_BYTES)
    rec = _pick(records, rng)
    if rec is None:
        return
    where = rng.choice(["string", "payload", "prefix", "line"])
    if where == "string" and rec.key is not None:
        rec.envelope[rec.key + "_x"] = rec.splice(b'"x' + bad + b'y"')
    elif where == "payload" and rec.payload:
        i = rng.randrange(len(rec.payload))
        rec.payload[i] = rec.payload[i][: len(rec.payload[i]) // 2] + bad + rec.payload[i][len(rec.payload[i]) // 2 :]
    elif where == "prefix" and rec.prefix:
        rec.prefix = rec.prefix.replace(b".py:", bad + b".py:", 1)
        rec.dirty = True
    else:
        rec.raw = rec.raw[: len(rec.raw) // 2] + bad + rec.raw[len(rec.raw) // 2 :]
        rec.dirty = False


_ODD_VALUES: list[Any] = [None, [], {}, "0", "x", True, -1, 1.5, 2**32, 2**63, 2**64, -(2**63) - 1, 10**30]


def type_confusion(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """A field of an envelope's event (or the event itself) gets another JSON type."""
    rec = _pick(records, rng)
    if rec is None or rec.key is None:
        return
    event = rec.envelope[rec.key]
    if isinstance(event, dict) and event and rng.random() < 0.8:
        event[rng.choice(sorted(event))] = rng.choice(_ODD_VALUES)
    else:
        rec.envelope[rec.key] = rng.choice(_ODD_VALUES)
    rec.dirty = True


_CID_FIELDS = ["frame_id", "frame_compile_id", "attempt", "compiled_autograd_id"]


def compile_id(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Compile-id fields at their edges: negative, u32 + 1, u64, huge, strings, floats, missing."""
    for rec in rng.sample(_envelopes(records), min(3, len(_envelopes(records)))):
        field_name = rng.choice(_CID_FIELDS)
        if rng.random() < 0.15:
            rec.envelope.pop(field_name, None)
        else:
            value = rng.choice([*_ODD_VALUES, 2**32 - 1, 0])
            rec.envelope[field_name] = value
            if value == 10**30 and rng.random() < 0.5:
                rec.envelope[field_name] = rec.splice(b"1" + b"0" * 400)
        rec.dirty = True


def _str_record(records: list[Rec], index: Any, text: Any) -> Rec:
    base = next((r for r in records if r.prefix), None)
    prefix = base.prefix if base is not None else b"V1121 19:30:32.270000 1 torch/_logging/structured.py:19] "
    return Rec(prefix, {"str": [text, index]}, b"", None, dirty=True)


def _seed_nspid(rng: random.Random) -> str:
    n = rng.choice([1000, 20_000, 100_000, 400_000])
    return "a" * n + "-seed-nspid" + "b" * rng.choice([0, 1, n])


def string_table(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """String-table edge cases: odd indices, duplicates, odd values, huge file names, missing entries."""
    kind = rng.choice(["index", "duplicate", "value", "seed-nspid", "missing"])
    index: Any = rng.choice([0, 1, 10**6, 10**6 + 1, 10**7, 2**32, 2**64, -1, "3", 1.5, None])
    text: Any = "/tmp/x.py"
    if kind == "duplicate":
        index = 0
        text = rng.choice(["/other.py", "é" * 300])
    elif kind == "value":
        index = rng.randrange(0, 50)
        text = rng.choice([None, 5, ["a"], {"a": 1}, "x" * 100_000])
    elif kind == "seed-nspid":
        _seed_nspid_frames(records, rng, pool)
        return
    entry = _str_record(records, index, text)
    records.insert(0 if kind != "duplicate" else len(records) // 2, entry)
    if kind == "missing":
        _frames_of(records, rng, pool, 777_777)


def _frames_of(records: list[Rec], rng: random.Random, pool: Pool, index: int) -> None:
    """A real dynamo_start whose stack's frames name string-table entry `index`."""
    start = _transplant(records, rng, pool, "dynamo_start")
    if start is not None and isinstance(start.envelope.get("dynamo_start"), dict):
        frame = {"line": 1, "name": "f", "filename": index}
        start.envelope["dynamo_start"]["stack"] = [frame] * rng.choice([1, 3])


def _seed_nspid_frames(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """A long file name with `-seed-nspid` and no `/` in the string table, and frames naming it."""
    records.insert(0, _str_record(records, 900_001, _seed_nspid(rng)))
    _frames_of(records, rng, pool, 900_001)


def big_rank(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Ranks beyond u32, negative, non-integer; or a second rank in the log (muxed)."""
    value: Any = rng.choice([2**32 - 1, 2**32, 2**64, 10**30, -1, "1", 1.5, True, None])
    envelopes = _envelopes(records)
    if not envelopes:
        return
    for rec in rng.sample(envelopes, max(1, len(envelopes) // rng.choice([1, 2, 10]))):
        rec.envelope["rank"] = value
        rec.dirty = True


def payload_md5(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """has_payload wrong, not a string, set with no payload following, or a payload without it."""
    rec = _pick(records, rng)
    if rec is None:
        return
    choice = rng.choice(["wrong", "type", "none-follows", "unannounced"])
    if choice == "wrong":
        rec.envelope["has_payload"] = "0" * 32
        rec.fix_md5 = False
    elif choice == "type":
        rec.envelope["has_payload"] = rng.choice([5, None, [], "x"])
        rec.fix_md5 = False
    elif choice == "none-follows":
        rec.envelope["has_payload"] = "d41d8cd98f00b204e9800998ecf8427e"
        rec.payload, rec.fix_md5 = None, False
    else:
        rec.envelope.pop("has_payload", None)
        rec.payload, rec.fix_md5 = [b"orphan"], False
    rec.dirty = True


def regex_bomb(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Text on which a backtracking regex takes the square of its length (or worse)."""
    n = rng.choice([20_000, 80_000, 200_000])  # characters (a bomb of 16-character atoms: bytes)
    kind = rng.choice(["block-comment", "tag", "entity", "c10d", "glog", "seed-nspid", *_ANALYSIS_BOMBS])
    if kind in _ANALYSIS_BOMBS:
        records.insert(rng.randrange(0, len(records) + 1), _analysis_bomb(records, kind, n))
        return
    if kind == "glog":
        line = b"V1121 19:30:32.270000 1 " * (n // 24)
        records.insert(rng.randrange(0, len(records) + 1), Rec(b"", None, line))
        return
    if kind == "seed-nspid":
        _seed_nspid_frames(records, rng, pool)
        return
    rec = _pick_or_transplant(records, rng, pool, ["inductor_output_code"])
    if rec is None:
        return
    text = {
        "block-comment": b"/*a" * (n // 3),
        "tag": b"<a" * (n // 2),
        "entity": b"&abcdefgh" * (n // 9),
        "c10d": b"torch.ops._c10d_functional." + b"a" * n,
    }[kind]
    rec.payload = [*(rec.payload or [])[:20], text]


#: Artifacts whose payload compiles.json's analysis searches (graph code, graph-break reasons,
#: recompile reasons), each with text its first regexes took the square of the length on (or,
#: `reason-cid-digits`, a compile id of more digits than int() reads).
_ANALYSIS_BOMBS = [
    "forward-signature",
    "forward-args",
    "frame-spaces",
    "guard-comment",
    "guard-subject",
    "reason-cid-digits",
]


def _analysis_bomb(records: list[Rec], kind: str, n: int) -> Rec:
    name, payload = {
        "forward-signature": ("before_pre_grad_graph", "def forward(" * (n // 12)),
        "forward-args": ("before_pre_grad_graph", "def forward(" + "a" * n + "!):"),
        "frame-spaces": ("dynamo_graph_break_reason", 'User code traceback:\n  File "a", line 1, in f' + " " * n + "x"),
        "reason-cid-digits": ("recompile_reasons", json.dumps(["9" * (n // 4) + "/0: x == 1"])),
        "guard-comment": ("recompile_reasons", json.dumps(["0/0: a" + " " * n + "b"])),
        "guard-subject": ("recompile_reasons", json.dumps(["0/0: " + "a" * n, "0/0: " + "___check_obj_id(" * n])),
    }[kind]
    rec = _str_record(records, 0, "")
    encoding = "json" if name == "recompile_reasons" else "string"
    cid = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    rec.envelope = {"artifact": {"name": name, "encoding": encoding}, **cid}
    rec.payload = [line.encode() for line in payload.split("\n")]
    return rec


def line_ops(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Whole-line edits: delete, duplicate, swap, blank lines, CRLF, orphan payload, a long line."""
    if not records:
        return
    op = rng.choice(["delete", "duplicate", "swap", "blank", "crlf", "orphan", "long"])
    i = rng.randrange(len(records))
    if op == "delete":
        del records[i]
    elif op == "duplicate":
        records.insert(i, records[i].copy())
    elif op == "swap":
        j = rng.randrange(len(records))
        records[i], records[j] = records[j], records[i]
    elif op == "blank":
        records.insert(i, Rec(b"", None, b""))
    elif op == "crlf":
        for rec in records:
            rec.raw, rec.dirty = rec.encode().rstrip(b"\n").replace(b"\n", b"\r\n") + b"\r", False
            rec.payload = None
    elif op == "orphan":
        records.insert(i, Rec(b"", None, b"\tpayload line with no envelope"))
    else:
        records.insert(i, Rec(b"", None, records[i].prefix + b'{"str": ["' + b"x" * (3 << 20) + b'", 1]}'))


def glog_prefix(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """Prefix edge cases: a huge process id or line number, impossible dates, junk before it."""
    rec = _pick(records, rng)
    if rec is None or not rec.prefix:
        return
    kind = rng.choice(["pid", "lineno", "date", "junk", "path"])
    prefix = rec.prefix
    if kind == "pid":
        prefix = re.sub(rb"(\.\d{6} +)\d+", lambda m: m.group(1) + rng.choice([b"9" * 20, b"1" * 5000, b"0"]), prefix)
    elif kind == "lineno":
        prefix = re.sub(rb":\d+\] $", lambda m: b":" + rng.choice([b"9" * 30, b"1" * 5000]) + b"] ", prefix)
    elif kind == "date":
        prefix = prefix[:1] + rng.choice([b"1332", b"0230", b"0000"]) + prefix[5:]
    elif kind == "junk":
        prefix = rng.choice([b"[rank0]:", b"\x00", b"]]] "]) + prefix
    else:
        prefix = re.sub(rb" [^ ]+:(\d+)\] $", lambda m: b" " + b"p" * 10_000 + b":" + m.group(1) + b"] ", prefix)
    rec.prefix, rec.dirty = prefix, True


def transplant(records: list[Rec], rng: random.Random, pool: Pool) -> None:
    """A real record of a random kind from another trace, inserted (events this window lacks)."""
    if pool.by_key:
        _transplant(records, rng, pool, rng.choice(sorted(pool.by_key)))


#: Record-level mutations by kind (the names campaigns count).
RECORD_MUTATIONS: dict[str, Mutator] = {
    "nest_envelope": nest_envelope,
    "nest_payload": nest_payload,
    "huge_number": huge_number,
    "long_name": long_name,
    "bad_utf8": bad_utf8,
    "type_confusion": type_confusion,
    "compile_id": compile_id,
    "string_table": string_table,
    "big_rank": big_rank,
    "payload_md5": payload_md5,
    "regex_bomb": regex_bomb,
    "line_ops": line_ops,
    "glog_prefix": glog_prefix,
    "transplant": transplant,
}

# -- whole-file mutations ------------------------------------------------------------------------


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(0, max(1, len(data)))]


def non_log(rng: random.Random) -> bytes:
    kind = rng.choice(["empty", "elf", "random", "text", "json", "payload-only", "nul"])
    if kind == "empty":
        return b""
    if kind == "elf":
        return b"\x7fELF\x02\x01\x01" + rng.randbytes(4000)
    if kind == "random":
        return rng.randbytes(rng.choice([1, 100, 10_000]))
    if kind == "text":
        return b"hello\nthis is not a trace\n" * 50
    if kind == "json":
        return b'{"dynamo_start": {"stack": []}}\n' * 20
    if kind == "payload-only":
        return b"\tdef f():\n\t    pass\n" * 20
    return b"\x00" * 5000


def compress(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Gzip the log, then (usually) damage it: cut off, bad CRC, damaged stream, junk after it."""
    packed = gzip.compress(data, mtime=0)
    kind = rng.choice(["gzip", "gzip_cut", "gzip_crc", "gzip_damage", "gzip_trailing", "gzip_members"])
    if kind == "gzip_cut":
        packed = packed[: rng.randrange(1, max(2, len(packed)))]
    elif kind == "gzip_crc" and len(packed) > 8:
        crc = bytes(b ^ 0xFF for b in packed[-8:-4])
        packed = packed[:-8] + crc + packed[-4:]
    elif kind == "gzip_damage" and len(packed) > 30:
        body = bytearray(packed)
        for _ in range(rng.choice([1, 5, 50])):
            body[rng.randrange(10, len(body) - 8)] = rng.randrange(256)
        packed = bytes(body)
    elif kind == "gzip_trailing":
        packed += rng.choice([b"\x00" * 100, b"junk", b"\x1f\x8b\x08"])
    elif kind == "gzip_members":
        packed += zlib.compress(data)[: len(data) // 3] if rng.random() < 0.5 else gzip.compress(data[:100], mtime=0)
    return packed, kind


# -- cases -------------------------------------------------------------------------------------


@dataclass
class Case:
    """One fuzz input: the files to put under `in/`, the command line, what made it."""

    index: int
    target: str
    argv: list[str]
    files: dict[str, bytes]
    kinds: list[str]
    source: str
    #: Create OUT first (with a sentinel file) and pass --overwrite: a failure must leave it as it was.
    existing_out: bool = False
    #: The path the command may write (relative to the run's folder).
    out: str = "out"

    @property
    def mode(self) -> str:
        plumbing = ("-o", "--no-browser", "-j", "--overwrite", "--map", "--user", "--host")
        flags = [a for a in self.argv if a.startswith("-") and a not in plumbing]
        return " ".join(flags) or "default"


#: How often each target is picked: single-log parses are where most code is.
TARGETS = {"parse": 0.55, "ranks": 0.17, "split": 0.14, "redact": 0.14}
_PARSE_FLAGS = ["-p", "-e", "-i", "--strict", "--strict-compile-id", "-v"]


def _mutated(records: list[Rec], rng: random.Random, pool: Pool, kinds: list[str]) -> bytes:
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.choice(sorted(RECORD_MUTATIONS))
        RECORD_MUTATIONS[kind](records, rng, pool)
        kinds.append(kind)
    data = encode_log(records)
    if rng.random() < 0.08:
        data = truncate(data, rng)
        kinds.append("truncate")
    return data


def _one_log(rng: random.Random, pool: Pool, kinds: list[str]) -> tuple[bytes, str]:
    """A single mutated log (or, sometimes, empty or non-log bytes)."""
    if rng.random() < 0.04:
        kinds.append("non_log")
        return non_log(rng), "non-log"
    source = rng.choice(pool.singles)
    return _mutated(window(source.records(), rng), rng, pool, kinds), source.name


def _maybe_gzip(name: str, data: bytes, rng: random.Random, kinds: list[str]) -> tuple[str, bytes]:
    if rng.random() < 0.2:
        packed, kind = compress(data, rng)
        kinds.append(kind)
        return name + ".gz", packed
    return name, data


def _flags(rng: random.Random) -> list[str]:
    return [f for f in _PARSE_FLAGS if rng.random() < 0.15]


def _parse_case(index: int, rng: random.Random, pool: Pool) -> Case:
    kinds: list[str] = []
    data, source = _one_log(rng, pool, kinds)
    name, data = _maybe_gzip(rng.choice(["dedicated_log_torch_trace_x.log", "trace.log", "t.txt"]), data, rng, kinds)
    existing = rng.random() < 0.15
    path = "in/" if rng.random() < 0.2 else f"in/{name}"
    argv = [path, "-o", "out", "--no-browser", *_flags(rng), *(["--overwrite"] if existing else [])]
    return Case(index, "parse", argv, {name: data}, kinds, source, existing_out=existing)


def _ranks_case(index: int, rng: random.Random, pool: Pool) -> Case:
    kinds: list[str] = []
    job = rng.choice(pool.jobs)
    files: dict[str, bytes] = {}
    victim = rng.randrange(len(job.files))
    for i, (name, _) in enumerate(job.files):
        records = window(job.records(i), rng, 30)
        body = _mutated(records, rng, pool, kinds) if i == victim else encode_log(records)
        fname, body = _maybe_gzip(name, body, rng, kinds) if i == victim else (name, body)
        files[fname] = body
    if rng.random() < 0.1:
        files[f"dedicated_log_torch_trace_rank_{rng.choice([2**32, 2**32 - 1, 10**12])}_x.log"] = job.files[0][1]
        kinds.append("big_rank_name")
    auto = rng.random() < 0.3
    argv = ["in/", "-o", "out", "--no-browser", "-j", "2", *_flags(rng), *([] if auto else ["--all-ranks-html"])]
    return Case(index, "ranks", argv, files, kinds, job.name)


def _split_case(index: int, rng: random.Random, pool: Pool) -> Case:
    kinds: list[str] = []
    data, source = _one_log(rng, pool, kinds)
    name, data = _maybe_gzip("muxed.log", data, rng, kinds)
    return Case(index, "split", ["split", f"in/{name}", "-o", "out"], {name: data}, kinds, source)


def _redact_case(index: int, rng: random.Random, pool: Pool) -> Case:
    kinds: list[str] = []
    data, source = _one_log(rng, pool, kinds)
    name, data = _maybe_gzip("trace.log", data, rng, kinds)
    out = rng.choice(["out.log", "out.log.gz"])
    maps = ["--map", "/tmp=/T", "--map", "/home=/H", "--user", "root=U", "--host", "localhost2=H"]
    argv = ["redact", f"in/{name}", "-o", out, *maps, *(["--auto"] if rng.random() < 0.3 else [])]
    return Case(index, "redact", argv, {name: data}, kinds, source, out=out)


_MAKERS = {"parse": _parse_case, "ranks": _ranks_case, "split": _split_case, "redact": _redact_case}


def make_case(pool: Pool, seed: int, index: int, targets: Iterable[str] = TARGETS) -> Case:
    """The `index`-th input of campaign `seed` (the same every time for the same pool)."""
    rng = random.Random(f"tlscope-fuzz:{seed}:{index}")
    allowed = [t for t in TARGETS if t in set(targets) and (t != "ranks" or pool.jobs)]
    target = rng.choices(allowed, weights=[TARGETS[t] for t in allowed])[0]
    return _MAKERS[target](index, rng, pool)
