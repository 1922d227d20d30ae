"""What tlscope prints reaches a terminal with every control character made visible (issue 24).

Logs are untrusted, and their strings (file names, graph-break reasons, guards, event keys,
problem messages) are printed by `summary`, `diff`, `-v`, `split`, `serve`... A string holding
`ESC ] 0 ; title BEL` would retitle the user's terminal, `ESC [ 2 J` clear it, `ESC ] 8` plant
a hyperlink, a `CR` overwrite a line with fake output. So there is one function, `visible`, and
it is applied at the output boundary, not where each string is made:

- `cli.main` wraps `sys.stdout` and `sys.stderr` in `VisibleText` for the whole command, so
  every `print` and `write` of every command passes through `visible`;
- rich (the summary's tables, the parse's progress bar) writes its own escape sequences for
  colour and cursor movement, which must reach the terminal; `console()` makes a rich Console
  that runs `visible` on the text of every segment it renders (before its tables are laid out)
  and writes past the wrapper;
- `redact` writing a log to stdout writes bytes: through the wrapper's `buffer`, the bytes go
  out unchanged to a file or pipe (they are the redacted log) and made visible on a terminal;
- JSON printed for programs (`--json`) escapes C0 controls as JSON must (`\\u001b`), and
  `json_text` escapes DEL and C1 the same way (JSON allows them raw): the wrapper finds nothing
  to change in it, and the JSON decodes to the log's exact strings.

`visible` shows ESC as `\\x1b` and every other C0 control, DEL and C1 control likewise (`\\r`,
`\\x7f`, `\\x9b`); newline and tab are kept, as they are the output's own layout.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any, BinaryIO

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_RAW = re.compile("[\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with each control character but newline and tab written as `\\xNN`."""
    if _CONTROL.search(text) is None:
        return text  # the common case: nothing to change, no copy
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def json_text(value: Any) -> str:
    """`value` as indented JSON text whose every control character is escaped (`\\u007f`...)."""
    import msgspec

    text = msgspec.json.format(msgspec.json.encode(value)).decode()
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class VisibleText(io.TextIOBase):
    """A text stream that writes `visible(text)` to the stream it wraps (see the module doc)."""

    def __init__(self, raw: IO[str]) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.raw, "encoding", "utf-8"))

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)

    @property
    def buffer(self) -> BinaryIO:
        """The bytes beneath: as they are to a file or pipe, made visible to a terminal."""
        raw: BinaryIO = self.raw.buffer  # type: ignore[attr-defined]
        return _VisibleBytes(raw, self.encoding) if self.raw.isatty() else raw  # type: ignore[return-value]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class _VisibleBytes(io.RawIOBase):
    """Bytes written to a terminal: decoded, made visible, encoded again."""

    def __init__(self, raw: BinaryIO, encoding: str) -> None:
        super().__init__()
        self.raw, self.encoding = raw, encoding

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        text = bytes(data).decode(self.encoding, "replace")
        self.raw.write(visible(text).encode(self.encoding, "replace"))
        return len(data)

    def flush(self) -> None:
        self.raw.flush()


def unwrapped(stream: IO[str]) -> IO[str]:
    """The stream beneath a `VisibleText` (or `stream` itself)."""
    return stream.raw if isinstance(stream, VisibleText) else stream


@contextlib.contextmanager
def visible_output() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` wrapped in `VisibleText` while the block runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleText(unwrapped(out)), VisibleText(unwrapped(err))
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        sys.stdout, sys.stderr = out, err


def console(*, stderr: bool = False, **options: Any) -> Any:
    """A rich Console whose rendered text is made visible (its own styling is not): for stdout,
    or stderr with `stderr=True`. `options` are rich's (width, highlight...)."""
    from rich.console import Console
    from rich.segment import Segment
    from rich.text import Text

    class VisibleConsole(Console):
        @property
        def file(self) -> IO[str]:
            return unwrapped(super().file)

        @file.setter
        def file(self, new_file: IO[str]) -> None:
            self._file = new_file

        def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
            # Strings and Text are made visible before they are laid out (a table cell is
            # rendered through here with its column's width, so the longer text is folded,
            # not cropped); the segments after, for whatever else renders log text.
            if isinstance(renderable, str):
                renderable = visible(renderable)
            elif isinstance(renderable, Text) and _CONTROL.search(renderable.plain) is not None:
                renderable = _visible_text(renderable)
            for segment in super().render(renderable, options):
                text, style, control = segment
                yield segment if control or _CONTROL.search(text) is None else Segment(visible(text), style)

    return VisibleConsole(stderr=stderr, markup=False, emoji=False, **options)


def _visible_text(text: Any) -> Any:
    """A rich Text made visible: its plain text, its overall style and layout (the styles of its
    parts are dropped: their offsets no longer hold, and only a hostile string gets here)."""
    from rich.text import Text

    return Text(
        visible(text.plain),
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
        tab_size=text.tab_size,
    )
