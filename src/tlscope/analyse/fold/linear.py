"""Linear-time searches for the analysis patterns whose plain `re` search is quadratic.

Python's `re` backtracks: a search retries its pattern from every start, and a pattern such as
`[A-Za-z_]\\w*...(?:,|$)` rescans the rest of a word from each of its letters. On log text that
is harmless for real traces and a hang for a hostile one (`def forward(` repeated 40,000 times
took 159 s; a 20,000-letter argument 41 s; a 40,000-space frame line 6 s). Each function here
gives exactly what the named `re` call gives (tests/test_linear_regex.py compares them on random
text) while looking at each character a bounded number of times: it restricts the search to
where a match can lie, or it skips the starts whose outcome an earlier start already decided.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_WORD_RUN = re.compile(r"\w+")
_IDENT_START = re.compile(r"[A-Za-z_]")
_CLASS_RUN = re.compile(r"[\w\[\]'.()]+")
_SIZE_TAIL = re.compile(r"\.(?:size|stride)\(\)\[\d+\]")
_SYMBOL = re.compile(r"\bs\d+\b")


def search_ending_by(pattern: re.Pattern[str], text: str, close: str) -> re.Match[str] | None:
    """`pattern.search(text)` for a pattern without `$` or lookahead whose every match ends
    with `close` (`___check_obj_id\\((?P<s>[^,]+),`).

    No match lies past the last `close`, so the search stops there: every start before it then
    finds its closing at once instead of scanning to the end of the text and failing.
    """
    end = text.rfind(close)
    return None if end == -1 else pattern.search(text, 0, end + len(close))


def forward_signature(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """`pattern.search(text)` for `def forward\\((?P<args>.*?)\\)\\s*(?:->[^:]*)?:` (DOTALL).

    Whether a `)` closes the signature does not depend on where the signature started, so if
    the first `def forward(` finds no closing, no later one does: one attempt, not one per
    occurrence. The attempt stops at the last `:` (every match ends with one).
    """
    start = text.find("def forward(")
    return None if start == -1 else pattern.match(text, start, text.rfind(":") + 1)


def word_led_matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern that starts `[A-Za-z_]\\w*` and cannot continue
    with a word character (`[A-Za-z_]\\w*\\s*(?::\\s*"[^"]*")?\\s*(?:,|$)`).

    Every start inside one run of word characters reads the run to its end and then meets the
    same text, so the first start of a run decides for all of them: one attempt per run.
    """
    resume = 0
    for run in _WORD_RUN.finditer(text):
        if run.end() <= resume:
            continue
        first = _IDENT_START.search(text, max(run.start(), resume), run.end())
        if first is None:
            continue
        hit = pattern.match(text, first.start())
        if hit is not None:
            resume = hit.end()
            yield hit


def comment_start(line: str) -> int | None:
    """`re.search(r"\\s{2,}#|\\s+#\\s", line).start()`, or None, in linear time.

    A match is the whitespace run just before a `#` (two or more characters, or one when
    whitespace follows the `#`); the leftmost qualifying `#` gives the leftmost start.
    """
    hash_at = line.find("#")
    while hash_at != -1:
        start = hash_at
        while start > 0 and line[start - 1].isspace():
            start -= 1
        spaces = hash_at - start
        if spaces >= 2 or (spaces == 1 and hash_at + 1 < len(line) and line[hash_at + 1].isspace()):
            return start
        hash_at = line.find("#", hash_at + 1)
    return None


def size_or_symbol(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """`pattern.search(text)` for `(?P<s>[\\w\\[\\]'.()]*\\.(?:size|stride)\\(\\)\\[\\d+\\]|\\bs\\d+\\b)`.

    Every match lies inside one run of the class's characters. In a run holding a
    `.size()[N]` / `.stride()[N]` tail the first alternative matches at the run's start, up to
    the run's last tail; in a run without one it matches nowhere, and only a symbol (`s12`) can.
    So each run is looked at once, instead of rescanned from each of its characters.
    """
    symbol = _SYMBOL.search(text)
    for run in _CLASS_RUN.finditer(text):
        if symbol is not None and symbol.start() < run.start():
            break
        last_tail = None
        for last_tail in _SIZE_TAIL.finditer(text, run.start(), run.end()):  # noqa: B007
            pass
        if last_tail is not None:
            return pattern.match(text, run.start(), last_tail.end())
    return None if symbol is None else pattern.match(text, symbol.start())


def actual_at_end(pattern: re.Pattern[str], text: str, lead: str) -> re.Match[str] | None:
    """`pattern.search(text)` for a one-line `text` and a pattern that starts with the literal
    `lead` and ends `(?P<e>.+?),? actual (?P<act>.+)$` (the device and dispatch-key rules).

    From wherever its `.+?` starts, the pattern succeeds as soon as one ` actual ` with a
    character after it follows: so attempts are made only at the `lead`s before the last such
    ` actual `, and the first that gets as far as the `.+?` decides.
    """
    if "\n" in text:  # `$` and `.` see lines: not the one-line case this is exact for
        return pattern.search(text)
    last = text.rfind(" actual ", 0, len(text) - 1)
    start = text.find(lead)
    while start != -1 and start < last:
        hit = pattern.match(text, start)
        if hit is not None:
            return hit
        start = text.find(lead, start + 1)
    return None
