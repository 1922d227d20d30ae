"""Resolved stack frames are shared between equal frames of different log lines.

Every compilation logs its whole stack and the report keeps each compile id's stack until the
end; sharing keeps one object per distinct frame, but only while the frame resolves the same.
"""

from __future__ import annotations

import gc
import weakref

from tlscope.analyse.tlparse.stack import StackTrie, resolve_stack
from tlscope.model.events import Frame
from tlscope.model.record import GlogPrefix, Record


def _record(strings: dict[int, str]) -> Record:
    prefix = GlogPrefix("I", 1, 1, 0, 0, 0, 0, 1, "torch/_dynamo/x.py", 1)
    return Record(1, prefix, "dynamo_start", {}, None, None, None, False, None, None, strings)


def _frames() -> list[Frame]:
    # Fresh objects each time, as each log line decodes its own.
    return [Frame(filename=0, line=10, name="f", loc="x = g()"), Frame(filename="b.py", line=2, name="g")]


def test_equal_frames_of_two_lines_are_one_object() -> None:
    first = resolve_stack(_frames(), _record({0: "a.py"}))
    second = resolve_stack(_frames(), _record({0: "a.py"}))
    assert [f.filename for f in first] == ["a.py", "b.py"]
    assert all(a is b for a, b in zip(first, second, strict=True))


def test_a_frame_that_resolves_to_another_file_is_not_shared() -> None:
    # The same interned id names another file under a later string table.
    first = resolve_stack(_frames(), _record({0: "a.py"}))
    other = resolve_stack(_frames(), _record({0: "c.py"}))
    assert other[0] is not first[0] and other[0].filename == "c.py"
    assert other[1] is first[1]


def test_shared_frames_do_not_outlive_their_stacks() -> None:
    stack = resolve_stack(_frames(), _record({0: "gone.py"}))
    trie = StackTrie()
    trie.insert(stack, None)
    frame = weakref.ref(stack[0])
    del stack, trie
    gc.collect()
    assert frame() is None
