"""Why a size or an int is dynamic when the user's code never said so, and how to make it dynamic
from the first compile without changing code (compiles.json `dynamic`, each symbol's `why`).

torch makes an input dynamic on its own in two ways, and the log says which:
- automatic dynamic shapes: a call whose size (or int) differs from what an entry was compiled
  for recompiles with that dimension dynamic; torch logs an `automatic_dynamic` chromium instant
  (args `name` the source, `dim_changed` a dimension, `scalar` or `all`, `cached`, `new`);
- a PGO profile (torch/_dynamo/pgo.py): with TORCH_COMPILE_JOB_ID set (or on MAST) torch keeps
  those decisions and reads them at the next run's first compile, logged as the artifact
  `get_local_code_state` (`get_remote_code_state`, `get_extra_remote_code_state`): the profile as
  text, one block per function, `?` for a dynamic size. That run's first compile is already
  dynamic and nothing in its own calls says why.
The run may name sources itself: TORCH_COMPILE_DYNAMIC_SOURCES (torch.compiler.config
`dynamic_sources`, in each metrics record's `compiler_config`); a `:N` suffix names one dimension.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import msgspec

from tlscope.analyse.fold.callvalues import value_key
from tlscope.analyse.fold.guards import input_name
from tlscope.analyse.fold.refs import payload_ref
from tlscope.format.compiles import CompileEntry, Dynamic, DynamicSource, PgoProfile, SourceLocation, Symbol
from tlscope.format.json_boundary import JsonError, decode
from tlscope.model.record import Record

#: Chromium instants and spans this fold reads (by `name`).
AUTOMATIC = "automatic_dynamic"
#: `automatic_dynamic`'s `reason` when a stride, not a size, changed (torch/_dynamo/pgo.py logs
#: "size change", "stride change", "scalar change", "dimensionality change" or "other").
_STRIDE_CHANGE = "stride change"
#: A view input's base, as Dynamo's sources name it (`L['x']._base`).
_BASE = "._base"
#: The artifacts of a profile read at the start, and where from.
PROFILE_READS = {
    "get_local_code_state": "local",
    "get_remote_code_state": "remote",
    "get_extra_remote_code_state": "extra remote",
}
#: The spans that log the profile's key (`cache_key`, the job id) when it is read.
#: The artifacts of a profile written (after each compile that changed what the run learned).
PROFILE_WRITES = {
    "put_local_code_state": "local",
    "put_remote_code_state": "remote",
    "put_extra_remote_code_state": "extra remote",
}
PROFILE_ARTIFACTS = frozenset({*PROFILE_READS, *PROFILE_WRITES})
_PGO_SPANS = frozenset(f"pgo.{name}" for name in PROFILE_ARTIFACTS)
CHROMIUM_NAMES = frozenset({AUTOMATIC, *_PGO_SPANS})
#: `symbols[].why`, strongest first (torch's order: a marked dimension, one marked "if it can be"
#: (maybe_mark_dynamic), a strict torch.export's `dynamic_shapes` (its compile takes the sizes it
#: was not told are static dynamic, and only a Dim keeps one so), then the configured sources, a
#: compile that takes every size dynamic (`dynamic=True`), then what the frame learned in this run
#: or from the profile).
MARKED, CONFIGURED, AUTOMATIC_WHY, PROFILE = "marked", "configured", "automatic", "profile"
MAYBE_MARKED, ALL_DYNAMIC, DYNAMIC_SHAPES = "maybe_marked", "all_dynamic", "dynamic_shapes"
#: What the guards of a compile say of an input marked with maybe_mark_dynamic: the dimensions
#: the compile took dynamic, `getattr(L['x'], '_dynamo_weak_dynamic_indices', set()).issubset({0})`.
#: Searched for only in a guards text that holds `_WEAK` (most have none).
_WEAK = "'_dynamo_weak_dynamic_indices', set()).issubset({"
_WEAK_GUARD = (
    r"getattr\((?P<source>[^,\n]{1,1000}), '_dynamo_weak_dynamic_indices', set\(\)\)"
    r"\.issubset\(\{(?P<dims>[0-9, ]{0,300})\}\)"
)
#: A compile under `torch.compile(dynamic=True)` (or the setting itself): every size starts
#: dynamic. As a metrics record's `dynamo_config` (JSON text) says it.
_NOT_STATIC = '"assume_static_by_default": false'

#: Sources Dynamo names itself (a value a graph break left on the stack, `L['___stack0']`): a
#: setting naming them would reach every resumed function's, and changes with the code.
INTERNAL_PREFIXES = ("L['___", "G['___")
#: The patterns below are compiled when first used (re's cache), not when every parse imports
#: this module: most logs have no profile and no automatic_dynamic event.
#: A profile's function line: `hash(6b2b3e2c)/path/to/file.py:21:shaped:`.
_FUNCTION = r"^(?:hash\([0-9a-f]*\))?(?P<file>.*):(?P<line>\d+):(?P<name>[^:]*):$"
#: A profile's source line: `  L['x']: tensor size=[?, 8] stride=[S(1), 1]`.
_ENTRY = r"^  (?P<source>\S.*?): (?P<state>.*)$"
_SIZES = r"^tensor size=\[(?P<sizes>[^\]]*)\]"
#: A dynamic size as torch prints it in `automatic_dynamic`'s `cached`.
_AUTO = r"<?AutoDynamic\.token(?:: \d+>)?"
#: Profiles and sources kept at most (a profile of a big model lists every input of every frame).
MAX_SOURCES = 500
#: A source name longer than this is no input's (log text), and a value is cut at VALUE_CHARS.
MAX_SOURCE_CHARS = 1000
VALUE_CHARS = 120


#: The later recompiles kept for a value that stayed static (each a compile id; the recompile
#: limit, 8 by default, ends most such runs long before).
MAX_RECOMPILES = 100


class _Learned(msgspec.Struct):
    """One source made dynamic, as the fold meets it: its dimensions (None: all of it)."""

    source: str
    by: str
    compile_id: str | None
    frame: str | None
    function: SourceLocation | None = None
    dims: list[int] | None = None
    changed: list[str] = []
    #: The later recompiles of its frame its value explained: it stayed static.
    recompiled: list[str] = []


class DynamicFold:
    """What made inputs dynamic, from the events above; `attach_why` and `result` read it."""

    def __init__(self) -> None:
        #: Per (frame, source): what automatic dynamic shapes made dynamic, first compile id first.
        self.automatic: dict[tuple[str | None, str], _Learned] = {}
        #: The same, by (frame, `value_key` of the source): as a recompile's failure names it.
        self._by_value: dict[tuple[str | None, str], _Learned] = {}
        #: Per (file name, first line, function name) of the profile: its dynamic sources.
        self.profile: dict[tuple[str, int, str], list[_Learned]] = {}
        self.profile_read: PgoProfile | None = None
        self.profile_written: PgoProfile | None = None
        #: TORCH_COMPILE_DYNAMIC_SOURCES as the run's first metrics record logged it (None: not logged).
        self.configured: str | None = None
        self._configs: dict[str, str | None] = {}
        #: Whether the run's torch has TORCH_COMPILE_DYNAMIC_SOURCES (its compile config lists
        #: `dynamic_sources`): an older torch's log is never told to set it.
        self.knows_sources = False
        #: Each frame's function (its first compile's), as `attach_why` meets them.
        self._functions: dict[str, SourceLocation] = {}
        #: (frame, source, dimension) the code specialised in some compile (`left_out`).
        self._specialised: set[tuple[str | None, str, int | None]] = set()
        #: Per (frame, source, dimension): a compile of the frame made it a symbol (it was dynamic).
        self._symbolic: set[tuple[str | None, str, int | None]] = set()
        #: Per tensor input source, the frames whose compiles have it (`shared_with`).
        self._inputs: dict[str, dict[str, None]] = {}
        #: The profile's key (the job id) as the last `pgo.get_*` span logged it.
        self._key: str | None = None
        #: Per (compile id, source): the dimensions its guards say maybe_mark_dynamic marked.
        self.weak: dict[tuple[str, str], set[int]] = {}
        #: The compile ids whose metrics record logged `assume_static_by_default` off.
        self.all_dynamic: set[str] = set()

    def chromium(self, name: str, args: object, cid: str | None) -> None:
        """A chromium event named in CHROMIUM_NAMES (its decoded `args`)."""
        if not isinstance(args, dict):
            return
        if name == AUTOMATIC:
            self._automatic(args, cid)
        elif isinstance(key := args.get("cache_key"), str):
            self._key = key
            for profile in (self.profile_read, self.profile_written):
                if profile is not None and profile.key is None:
                    profile.key = key

    def _automatic(self, args: dict[str, object], cid: str | None) -> None:
        source, dim = args.get("name"), args.get("dim_changed")
        if args.get("reason") == _STRIDE_CHANGE or (isinstance(source, str) and _BASE in source):
            # A stride made dynamic (TORCH_COMPILE_DYNAMIC_SOURCES names sizes), or the base of a
            # view input whose size changed with the view's layout: the recompile names the view's
            # stride, and marking the base's size would not have avoided it.
            return
        if not isinstance(source, str) or len(source) > MAX_SOURCE_CHARS or len(self.automatic) >= MAX_SOURCES:
            return
        frame = _frame_text(cid)
        learned = self.automatic.get((frame, source))
        if learned is None:
            learned = self.automatic[(frame, source)] = self._by_value[(frame, value_key(source))] = _Learned(
                source=source, by=AUTOMATIC_WHY, compile_id=cid, frame=frame, dims=[]
            )
        if type(dim) is int and learned.dims is not None:
            if dim not in learned.dims:
                learned.dims.append(dim)
                learned.changed.append(f"{cid} dim {dim}: {_value(args.get('cached'))} -> {_value(args.get('new'))}")
        elif dim in ("scalar", "all") and learned.dims is not None:
            learned.dims = None  # the whole value: an int, or a tensor whose number of dims changed
            what = "value" if dim == "scalar" else "number of dimensions"
            learned.changed.append(f"{cid} {what}: {_value(args.get('cached'))} -> {_value(args.get('new'))}")

    def artifact(self, record: Record, name: str, raw_line: int | None, cid: str | None) -> None:
        """A `get_*_code_state` artifact, the profile this run read (its first, as torch reads one),
        or a `put_*_code_state` one, the profile it wrote (its last: what the next run reads)."""
        if name in PROFILE_WRITES:
            self.profile_written = PgoProfile(
                artifact=name,
                where=PROFILE_WRITES[name],
                compile_id=cid,
                key=self._key,
                functions=len(_read_profile(record.payload_text, cid)),
                event=payload_ref(record, name, raw_line),
            )
            return
        if self.profile_read is not None:
            return
        functions = _read_profile(record.payload_text, cid)
        self.profile = functions
        self.profile_read = PgoProfile(
            artifact=name,
            where=PROFILE_READS[name],
            compile_id=cid,
            key=self._key,
            functions=len(functions),
            event=payload_ref(record, name, raw_line),
        )

    def guards(self, text: str | None, cid: str) -> None:
        """A compile's guards (`dynamo_cpp_guards_str` or `dynamo_guards`): the inputs marked
        with maybe_mark_dynamic, and which of their dimensions the compile took dynamic."""
        if not text or _WEAK not in text:
            return
        for found in re.finditer(_WEAK_GUARD, text):
            if len(self.weak) >= MAX_SOURCES:
                return
            dims = {int(d) for d in found["dims"].replace(" ", "").split(",") if d}
            self.weak.setdefault((cid, found["source"].strip()), set()).update(dims)

    def metrics(self, compiler_config: str | None, dynamo_config: str | None = None, cid: str | None = None) -> None:
        """A metrics record's `compiler_config` (a JSON object as text): its `dynamic_sources`, and
        whether the run's torch has that setting at all (`knows_sources`); and of its
        `dynamo_config`, whether compile `cid` took every size dynamic (`dynamic=True`)."""
        if cid is not None and dynamo_config and _NOT_STATIC in dynamo_config and len(self.all_dynamic) < MAX_SOURCES:
            self.all_dynamic.add(cid)
        if compiler_config is None or self.configured is not None:
            return
        if compiler_config not in self._configs:
            found, known = _dynamic_sources(compiler_config)
            self._configs[compiler_config] = found
            self.knows_sources = self.knows_sources or known
        found = self._configs[compiler_config]
        if found:
            self.configured = found

    def attach_why(self, entries: Sequence[CompileEntry], symbols: Iterable[Symbol], exporting: bool = False) -> None:
        """Each symbol of a size or an int its `why`, from the compiles of its frame (`entries`);
        `exporting`: the log holds torch.export calls, whose non-strict tracing makes its input
        sizes' symbols outside any compile."""
        by_id = {e.id: e for e in entries}
        for entry in entries:
            frame = _frame_text(entry.id) or ""
            if entry.function is not None:
                self._functions.setdefault(frame, entry.function)
            self._still_recompiled(entry, frame)
            for t in entry.inputs:
                frames = self._inputs.setdefault(t.source, {})
                if len(frames) < MAX_SOURCES:
                    frames[frame] = None
        configured = _entries(self.configured)
        for symbol in symbols:
            if symbol.kind != "backed" or symbol.input_source is None or symbol.what not in ("size", "value"):
                continue
            symbol.why = self._why(symbol, by_id.get(symbol.compile_id or ""), configured, exporting)
            if len(self._symbolic) < MAX_SOURCES:
                self._symbolic.add((_frame_text(symbol.compile_id), symbol.input_source, symbol.dim))
            if symbol.specializations and len(self._specialised) < MAX_SOURCES:
                self._specialised.add((_frame_text(symbol.compile_id), symbol.input_source, symbol.dim))

    def _why(
        self, symbol: Symbol, entry: CompileEntry | None, configured: list[tuple[str, int | None]], exporting: bool
    ) -> str | None:
        source, dim = symbol.input_source, symbol.dim
        assert source is not None
        if entry is not None and dim is not None:
            for t in entry.inputs:
                if t.source == source and dim in t.marked_dynamic:
                    return MARKED
        cid = symbol.compile_id or ""
        if dim is not None and dim in self.weak.get((cid, source), ()):
            return MAYBE_MARKED
        capture = entry.capture if entry is not None else None
        outside = entry is not None and entry.status == "outside"
        if capture == "export" or (outside and exporting):
            return DYNAMIC_SHAPES
        if any(_matches(pattern, at, source, dim) for pattern, at in configured):
            return CONFIGURED
        # A capture the stacks did not name may be an export's: its setting says nothing then.
        if cid in self.all_dynamic and capture != "fullgraph":
            return ALL_DYNAMIC
        learned = self.automatic.get((_frame_text(symbol.compile_id), source))
        if learned is not None and _covers(learned.dims, dim) and _not_after(learned.compile_id, symbol.compile_id):
            return AUTOMATIC_WHY
        if entry is not None and entry.function is not None:
            for found in self.profile.get(_function_key(entry.function), ()):
                if found.source == source and _covers(found.dims, dim):
                    return PROFILE
        return None

    def _still_recompiled(self, entry: CompileEntry, frame: str) -> None:
        """A recompile explained by a whole value automatic dynamic had marked earlier in the frame:
        the value stayed static (a global, which Dynamo keeps guarding by its value)."""
        failure = entry.recompile.shown_failure() if entry.recompile is not None else None
        if failure is None or failure.kind not in ("value", "global") or failure.subject is None:
            return
        learned = self._by_value.get((frame, value_key(failure.subject)))  # `self.step`, `L['self'].step`
        if learned is None or learned.dims is not None or _not_after(entry.id, learned.compile_id):
            return
        if len(learned.recompiled) < MAX_RECOMPILES:
            learned.recompiled.append(entry.id)

    def result(self) -> Dynamic | None:
        """compiles.json `dynamic` (after `attach_why` met every compile); None when nothing was
        made dynamic on torch's own, nothing was configured and no profile was read."""
        learned = [self._compiled_dynamic(found) for found in self.automatic.values()]
        for functions in self.profile.values():
            learned.extend(functions)
        kept = [found for found in learned if found.dims is None or found.dims]
        sources = [_source(found, self._functions, self._shared(found, kept)) for found in kept]
        if not sources and self.configured is None and self.profile_read is None:
            return None
        for found, source in zip(kept, sources, strict=True):
            source.left_out = self._left_out(found)
        configured = _entries(self.configured)
        wanted = [s for s in sources if s.left_out is None and not _configured(s, configured)]
        value = _recommend(wanted) if self.knows_sources else None
        return Dynamic(
            sources=sources,
            recommended=value,
            configured=self.configured,
            profile=self.profile_read,
            profile_written=self.profile_written,
            sentence=_sentence(sources, value, self.configured, self.profile_read, self.profile_written),
        )

    def _compiled_dynamic(self, found: _Learned) -> _Learned:
        """`found` with only the dimensions a compile of its frame made a symbol of: torch also marks
        a dimension whose new size is 0 or 1 (a batch of 4, then 1), which every compile specialises,
        so asking for it dynamic changes nothing."""
        if found.dims is None or len(self._symbolic) >= MAX_SOURCES:
            return found  # a whole value; or too many symbols kept to say
        kept = [
            (d, said)
            for d, said in zip(found.dims, found.changed, strict=False)
            if (found.frame, found.source, d) in self._symbolic
        ]
        return msgspec.structs.replace(found, dims=[d for d, _ in kept], changed=[said for _, said in kept])

    def _left_out(self, found: _Learned) -> str | None:
        """Why a source's entries are not recommended: Dynamo's own name for a value (`internal`),
        or a dimension the code specialised in a compile of its frame (`specialised`: each dynamic
        graph is specialised again, and the symbol's `fix` says what to change)."""
        if found.source.startswith(INTERNAL_PREFIXES):
            return "internal"
        dims: list[int | None] = list(found.dims) if found.dims is not None else [None]
        if any((found.frame, found.source, d) in self._specialised for d in dims) or any(
            f == found.frame and s == found.source for f, s, _ in self._specialised if found.dims is None
        ):
            return "specialised"
        return None

    def _shared(self, found: _Learned, learned: Sequence[_Learned]) -> list[SourceLocation]:
        """The functions, other than those that learned `found.source`, with an input of that source."""
        mine = [k for k in learned if k.source == found.source]
        frames = {k.frame for k in mine}
        # A profile's source has no frame: its function, named as the profile names it.
        functions = {_function_key(k.function) for k in mine if k.function is not None}
        return [
            fn
            for f in self._inputs.get(found.source, {})
            if f not in frames and (fn := self._functions.get(f)) is not None and _function_key(fn) not in functions
        ]


def _frame_text(cid: str | None) -> str | None:
    """A compile id's frame (`[0/1]` -> `[0`), as the fold's compile ids are grouped."""
    return cid.rsplit("/", 1)[0] if cid is not None else None


def _value(value: object) -> str:
    """A cached or new value as torch logged it, a dynamic size as `?` (its profile's notation),
    cut to VALUE_CHARS (log text: a value may be any size)."""
    text = re.sub(_AUTO, "?", str(value)[: 4 * VALUE_CHARS])
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _read_profile(text: str, cid: str | None) -> dict[tuple[str, int, str], list[_Learned]]:
    """The rendered profile's functions and their dynamic sources (pgo.py `render_code_state`)."""
    functions: dict[tuple[str, int, str], list[_Learned]] = {}
    current: list[_Learned] | None = None
    function: SourceLocation | None = None
    kept = 0
    for line in text.splitlines():
        if len(line) > MAX_SOURCE_CHARS:
            continue
        if (head := re.match(_FUNCTION, line)) is not None:
            if len(functions) >= MAX_SOURCES:
                break
            function = SourceLocation(file=head["file"], line=int(head["line"]), name=head["name"])
            current = functions.setdefault(_function_key(function), [])
        elif current is not None and (entry := re.match(_ENTRY, line)) is not None and kept < MAX_SOURCES:
            dims = _dynamic_dims(entry["state"])
            if dims is None or dims:
                kept += 1
                current.append(
                    _Learned(
                        source=entry["source"], by=PROFILE, compile_id=cid, frame=None, function=function, dims=dims
                    )
                )
    return functions


def _dynamic_dims(state: str) -> list[int] | None:
    """The dimensions a profile's entry makes dynamic: None for all of it ("fully dynamic scalar
    or tensor"), [] for none (`scalar 2`, a static size)."""
    if state.startswith("fully dynamic"):
        return None
    sizes = re.match(_SIZES, state)
    if sizes is None:
        return []
    return [i for i, size in enumerate(sizes["sizes"].split(",")) if size.strip() == "?"]


def _function_key(function: SourceLocation) -> tuple[str, int, str]:
    """A function as the profile and the compile entries both name it: its file's base name (the
    profile's path is the one of the run that wrote it), first line and name."""
    return ((function.file or "").rsplit("/", 1)[-1], function.line or 0, function.name or "")


def _dynamic_sources(config: str) -> tuple[str | None, bool]:
    """The config's `dynamic_sources` when set, and whether it has the key at all."""
    try:
        value = decode(config)
    except JsonError:
        return None, False
    found = value.get("dynamic_sources") if isinstance(value, dict) else None
    known = isinstance(value, dict) and "dynamic_sources" in value
    return (found if isinstance(found, str) and found.strip() else None), known


def _entries(value: str | None) -> list[tuple[str, int | None]]:
    """TORCH_COMPILE_DYNAMIC_SOURCES's entries as torch reads them: (pattern, dimension or None)."""
    found: list[tuple[str, int | None]] = []
    for entry in (value or "").replace(" ", "").split(","):
        if not entry:
            continue
        head, _, dim = entry.rpartition(":")
        found.append((head, int(dim)) if head and dim.isdigit() else (entry, None))
    return found


def _matches(pattern: str, at: int | None, source: str, dim: int | None) -> bool:
    """Whether an entry names `source` (dimension `dim`), as torch's `is_dynamic_source` decides."""
    if at is not None and dim is not None and at != dim:
        return False
    if pattern == source:
        return True
    try:
        return re.match(pattern, source) is not None
    except re.error:
        return False


def _covers(dims: list[int] | None, dim: int | None) -> bool:
    return dims is None or dim is None or dim in dims


def _not_after(learned: str | None, symbol: str | None) -> bool:
    """Whether the compile that made a source dynamic is this symbol's or an earlier one of its frame."""
    if learned is None or symbol is None:
        return True
    return _attempt(learned) <= _attempt(symbol)


def _attempt(cid: str) -> tuple[int, ...]:
    tail = cid.rsplit("/", 1)[-1].rstrip("]")
    return tuple(int(part) for part in re.findall(r"\d+", tail)) or (0,)


def _source(found: _Learned, functions: dict[str, SourceLocation], shared: list[SourceLocation]) -> DynamicSource:
    entries = [found.source] if found.dims is None else [f"{found.source}:{d}" for d in sorted(found.dims)]
    return DynamicSource(
        shared_with=shared,
        source=found.source,
        input=input_name(found.source),
        dims=sorted(found.dims) if found.dims is not None else None,
        by=found.by,
        compile_id=found.compile_id,
        function=found.function or (functions.get(found.frame) if found.frame is not None else None),
        changed=found.changed,
        entries=entries,
        recompiled=found.recompiled or msgspec.UNSET,
    )


def _configured(source: DynamicSource, configured: list[tuple[str, int | None]]) -> bool:
    dims: list[int | None] = list(source.dims) if source.dims is not None else [None]
    return all(any(_matches(p, at, source.source, d) for p, at in configured) for d in dims)


def _recommend(sources: Sequence[DynamicSource]) -> str | None:
    """TORCH_COMPILE_DYNAMIC_SOURCES's value for `sources`, each entry once: the variable is read
    for every compiled function, so a source dynamic as a whole in one function is whole."""
    whole = {s.source for s in sources if s.dims is None}
    entries: dict[str, None] = {}
    for source in sources:
        for entry in [source.source] if source.source in whole else source.entries:
            entries[entry] = None
    return ",".join(entries) or None


def _stayed_static(source: DynamicSource) -> str:
    """A value torch marked dynamic that still recompiled its function (format 1.46 `recompiled`)."""
    ids = source.recompiled if isinstance(source.recompiled, list) else []
    more = f", {len(ids) - 3} more" if len(ids) > 3 else ""
    return (
        f"torch marked {source.input} dynamic when a call changed it ({', '.join(source.changed[:1])}), but "
        f"its value still recompiled its function ({', '.join(ids[:3])}{more}): Dynamo kept guarding it by "
        "its value (as it does a global, or a module's int attribute)."
    )


def _sentence(
    sources: Sequence[DynamicSource],
    value: str | None,
    configured: str | None,
    profile: PgoProfile | None,
    written: PgoProfile | None = None,
) -> str:
    parts: list[str] = []
    stayed = [s for s in sources if s.by == AUTOMATIC_WHY and isinstance(s.recompiled, list)]
    automatic = [s for s in sources if s.by == AUTOMATIC_WHY and s not in stayed]
    from_profile = [s for s in sources if s.by == PROFILE]
    if automatic:
        parts.append(
            f"torch made {_count(automatic, 'input')} dynamic when a call changed {_them(automatic)}, "
            f"at the cost of a recompile (automatic dynamic shapes): {sources_said(automatic)}."
        )
        if written is not None:
            key = f", key {written.key}" if written.key else ""
            parts.append(
                f"This run wrote {_them(automatic)} to its PGO profile ({written.artifact}{key}): the next run "
                "with the same TORCH_COMPILE_JOB_ID compiles them dynamic from its first call."
            )
    parts += [_stayed_static(source) for source in stayed]
    if profile is not None:
        key = f" (key {profile.key})" if profile.key else ""
        if from_profile:
            parts.append(
                f"This run read a PGO profile{key} that an earlier run with the same TORCH_COMPILE_JOB_ID "
                f"wrote ({profile.artifact}): {sources_said(from_profile)} were dynamic from their first compile, "
                "whatever this run's calls. A run with another job id, or without the profile, starts static again."
            )
        else:
            parts.append(f"This run read a PGO profile{key} ({profile.artifact}) that makes nothing dynamic.")
    if configured is not None:
        parts.append(f'TORCH_COMPILE_DYNAMIC_SOURCES was set: "{configured}".')
    if value is not None:
        parts.append(
            f"To compile {_them([s for s in sources if s.left_out is None])} dynamic from the first call, "
            "without changing code: "
            f'TORCH_COMPILE_DYNAMIC_SOURCES="{value}" '
            "(it names the inputs of every compiled function; an entry ending in :N names one dimension)."
        )
    for reason, words in LEFT_OUT_WORDS.items():
        left = [s for s in sources if s.left_out == reason]
        if left:
            head = "Left out of it" if value is not None else "TORCH_COMPILE_DYNAMIC_SOURCES would not help"
            parts.append(f"{head}: {sources_said(left, changes=False)}: {words}.")
    shared = {s.source: s for s in sources if s.shared_with and s.left_out is None and value is not None}
    for source in shared.values():
        names = _and([f.name or "?" for f in source.shared_with[:4]])
        parts.append(
            f"{source.source} also names an input of {names}, which stayed static: the variable would make it dynamic "
            "there too (the recompile's mark_dynamic fix marks one tensor)."
        )
    return " ".join(parts)


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _count(sources: Sequence[DynamicSource], noun: str) -> str:
    n = len(sources)
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _them(sources: Sequence[DynamicSource]) -> str:
    return "it" if len(sources) == 1 else "them"


#: `left_out` in words.
LEFT_OUT_WORDS = {
    "specialised": "the code specialises that dimension in a compile, so a dynamic graph is specialised "
    "again (the symbol's fix says what to change)",
    "internal": "Dynamo's own name for a value a graph break left on the stack",
}


def sources_said(sources: Sequence[DynamicSource], changes: bool = True) -> str:
    """Sources in a few words, at most six (`x dim 0, k`), each with what changed when `changes`;
    the dynamic answer's sentence and `tlscope diff` (analyse/dynamic_diff.py) say them alike."""
    # The function is named when the list spans several (two of them may have an `x`).
    named = len({s.function.name if s.function else None for s in sources}) > 1
    more = f" and {len(sources) - 6} more" if len(sources) > 6 else ""
    return ", ".join(_described(s, changes, named) for s in sources[:6]) + more


def _described(source: DynamicSource, changes: bool = True, named: bool = False) -> str:
    of = f" of {source.function.name}" if named and source.function is not None and source.function.name else ""
    if changes and source.changed:
        return f"{source.input}{of} ({'; '.join(source.changed)})"
    dims = f" dim {', '.join(map(str, source.dims))}" if source.dims is not None else ""
    return f"{source.input}{dims}{of}"
