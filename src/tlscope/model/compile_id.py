"""Compile ids: the `[!ca/frame/fcid_attempt]` display form and the `ca_frame_fcid_attempt` folder form.

PyTorch puts four optional context fields on each envelope (`compiled_autograd_id`, `frame_id`,
`frame_compile_id`, `attempt`). A line with none of them still has a compile id with every part
missing (`[-/-]`, folder `-_-_-_-`): that is what tlparse does and what its users' links expect.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

CONTEXT_FIELDS = ("compiled_autograd_id", "frame_id", "frame_compile_id", "attempt")
_U32_MAX = 2**32 - 1


class CompileId(msgspec.Struct, frozen=True, order=True):
    """One compilation, as PyTorch identifies it. Every part may be missing."""

    compiled_autograd_id: int | None = None
    frame_id: int | None = None
    frame_compile_id: int | None = None
    attempt: int | None = None

    @property
    def display(self) -> str:
        """`[0/0]`, `[0/1_1]`, `[!0/2/0]`, `[-/-]`: attempt 0 is omitted, as in PyTorch and tlparse.

        Computed once per distinct id (every record of a compile asks for it, in several sinks)."""
        text = _DISPLAY.get(self)
        if text is None:
            if len(_DISPLAY) >= _MEMO_MAX:
                _DISPLAY.clear()
            text = _DISPLAY[self] = self._display()
        return text

    def _display(self) -> str:
        parts = []
        if self.compiled_autograd_id is not None:
            parts.append(f"!{self.compiled_autograd_id}/")
        parts.append(f"{_dash(self.frame_id)}/{_dash(self.frame_compile_id)}")
        if self.attempt:
            parts.append(f"_{self.attempt}")
        return "[" + "".join(parts) + "]"

    @property
    def dirname(self) -> str:
        """The folder name tlparse gives this compile id, e.g. `-_0_0_0`; always path-safe.

        Computed once per distinct id, as `display` is (the report and the provenance store ask
        for it per record: ~60 ns looked up, ~460 ns formatted)."""
        text = _DIRNAME.get(self)
        if text is None:
            if len(_DIRNAME) >= _MEMO_MAX:
                _DIRNAME.clear()
            ca, frame, fcid, attempt = self.compiled_autograd_id, self.frame_id, self.frame_compile_id, self.attempt
            text = _DIRNAME[self] = (
                f"{'-' if ca is None else ca}_{'-' if frame is None else frame}_"
                f"{'-' if fcid is None else fcid}_{'-' if attempt is None else attempt}"
            )
        return text

    def normalised(self) -> CompileId:
        """tlparse's directory key: a missing attempt counts as 0 once a frame compile id is set.

        Runtime events (autotuning) carry frame ids but no attempt; they belong to attempt 0.
        """
        if self.frame_compile_id is not None and self.attempt is None:
            normal = _NORMALISED.get(self)
            if normal is None:
                if len(_NORMALISED) >= _MEMO_MAX:
                    _NORMALISED.clear()
                normal = _NORMALISED[self] = msgspec.structs.replace(self, attempt=0)
            return normal
        return self


#: Per distinct compile id, its display form and normalised id (bounded: a log names a few
#: thousand ids at most; a hostile one more, and then the memo starts over).
_MEMO_MAX = 65536
_DISPLAY: dict[CompileId, str] = {}
_DIRNAME: dict[CompileId, str] = {}
_NORMALISED: dict[CompileId, CompileId] = {}


def compile_id_order(cid: CompileId) -> tuple[int, int, int, int]:
    """The order compile ids are listed in (manifest, compiles.json): numerically by compiled-autograd
    id, frame id, frame compile id, attempt, a missing part before any number, so `[-/-]` comes first."""
    ca, frame, fcid, attempt = cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id, cid.attempt
    return (
        -1 if ca is None else ca,
        -1 if frame is None else frame,
        -1 if fcid is None else fcid,
        -1 if attempt is None else attempt,
    )


#: A compile id as PyTorch prints it in text (chromium `args.compile_id`, recompile reasons):
#: `0/1`, `0/1_2`, `!0/1/0`, with or without brackets.
_TEXT = re.compile(r"\[?(?:!(?P<ca>\d+)/)?(?P<frame>\d+)/(?P<fcid>\d+)(?:_(?P<attempt>\d+))?\]?")


def frame_compile_from_text(text: str | None, *, prefix: bool = False) -> CompileId | None:
    """The frame compile (attempt left out) `text` names, or starts with when `prefix`; None if not one.

    A whole text's answer is kept per text: every chromium event names its compile id (twice a
    phase: its begin and its end), and a log has few distinct ones."""
    if prefix or text is None or len(text) > 64:  # only short texts are kept (a log's may be huge)
        return _frame_compile(text, _TEXT.match if prefix else _TEXT.fullmatch)
    if text in _FRAME_TEXTS:
        return _FRAME_TEXTS[text]
    if len(_FRAME_TEXTS) >= _MEMO_MAX:
        _FRAME_TEXTS.clear()
    found = _FRAME_TEXTS[text] = _frame_compile(text, _TEXT.fullmatch)
    return found


#: frame_compile_from_text's answers by whole text, bounded as _DISPLAY is.
_FRAME_TEXTS: dict[str, CompileId | None] = {}


def _frame_compile(text: str | None, match_with: Callable[[str], re.Match[str] | None]) -> CompileId | None:
    match = match_with(text or "")
    if match is None:
        return None
    # Each part is a u32; log text may hold thousands of digits, which int() refuses (ValueError).
    parts = [_u32(match[name]) for name in ("ca", "frame", "fcid")]
    if any(part is None for part in parts[1:]) or (match["ca"] is not None and parts[0] is None):
        return None
    return CompileId(parts[0], parts[1], parts[2], None)


def _u32(digits: str | None) -> int | None:
    if digits is None or len(digits.lstrip("0")) > 10:
        return None
    value = int(digits)
    return value if value <= 0xFFFF_FFFF else None


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


class BadCompileId(ValueError):
    """A context field is present but not a u32 (tlparse then calls the compile id unknown)."""


def compile_id_from_envelope(envelope: dict[str, Any]) -> CompileId:
    """Build the compile id from an envelope's context fields; raise BadCompileId if malformed."""
    # Called for every record, so the common case (each field absent or a plain int in range)
    # is tested inline; anything else takes the general check, which names the bad field.
    get = envelope.get
    ca, frame, fcid, attempt = get("compiled_autograd_id"), get("frame_id"), get("frame_compile_id"), get("attempt")
    if (
        (ca is None or (type(ca) is int and 0 <= ca <= _U32_MAX))
        and (frame is None or (type(frame) is int and 0 <= frame <= _U32_MAX))
        and (fcid is None or (type(fcid) is int and 0 <= fcid <= _U32_MAX))
        and (attempt is None or (type(attempt) is int and 0 <= attempt <= _U32_MAX))
    ):
        return CompileId(ca, frame, fcid, attempt)
    for name, value in zip(CONTEXT_FIELDS, (ca, frame, fcid, attempt), strict=True):
        if value is not None and not _is_u32(value):
            raise BadCompileId(f"{name} is {value!r}, not an integer in 0..2^32-1")
    return CompileId(ca, frame, fcid, attempt)


#: The display form of an event whose compile id is malformed (FORMAT.md section 7): it belongs to
#: no compile id; tlparse, the report and log_size.json call it unknown too.
UNKNOWN_DISPLAY = "unknown"


def display_of_envelope(envelope: dict[str, Any]) -> str:
    """The display form of an envelope's (or raw.jsonl event's) compile id, `unknown` if malformed.

    A runtime event without attempt shows as attempt 0, as its compile id groups (manifest order).
    """
    try:
        return compile_id_from_envelope(envelope).normalised().display
    except BadCompileId:
        return UNKNOWN_DISPLAY


def _is_u32(value: object) -> bool:
    # bool is an int subclass in Python but JSON true/false is not a valid id.
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _U32_MAX
