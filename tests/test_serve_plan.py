"""serve/files.py `plan_response`: the one rule for file answers, local or from a store, table-driven.

Local files (serve/files.py) and a remote store's (serve/remote.py) both answer through it; before,
each had its own copy and they drifted (If-Range with spaces, which files are immutable, where the
trace pages' CSP was added).
"""

from __future__ import annotations

from typing import Any

import pytest

from tlscope.serve.files import IMMUTABLE, REVALIDATE, is_payload_name, plan_response

TAG = '"abc"'
GZ = '"abc-gz"'
CSP = "default-src 'none'"


def plan(headers: dict[str, str], *, name: str = "raw.jsonl", size: int = 5000, method: str = "GET", **kw: Any) -> Any:
    return plan_response(name=name, size=size, etag=TAG, immutable=False, headers=headers, method=method, **kw)


CASES: list[tuple[str, dict[str, str], dict[str, Any], tuple[int, int, int, bool, bool]]] = [
    # (what, request headers, options, (status, start, stop, gzip, body))
    ("plain GET", {}, {}, (200, 0, 5000, False, True)),
    ("HEAD has no body", {}, {"method": "HEAD"}, (200, 0, 5000, False, False)),
    ("gzip for text of 1 KiB or more", {"accept-encoding": "gzip, br"}, {}, (200, 0, 5000, True, True)),
    ("no gzip under 1 KiB", {"accept-encoding": "gzip"}, {"size": 1023}, (200, 0, 1023, False, True)),
    ("no gzip for binary", {"accept-encoding": "gzip"}, {"name": "graph.png"}, (200, 0, 5000, False, True)),
    ("gzip for timeline.bin", {"accept-encoding": "gzip"}, {"name": "timeline.bin"}, (200, 0, 5000, True, True)),
    ("no gzip when the caller says so", {"accept-encoding": "gzip"}, {"compress": False}, (200, 0, 5000, False, True)),
    ("gzip;q=0 is a refusal", {"accept-encoding": "gzip;q=0"}, {}, (200, 0, 5000, False, True)),
    ("If-None-Match -> 304", {"if-none-match": TAG}, {}, (304, 0, 0, False, False)),
    ("weak If-None-Match matches too", {"if-none-match": f"W/{TAG}"}, {}, (304, 0, 0, False, False)),
    ("the gzip tag -> 304", {"if-none-match": f'"x", {GZ}'}, {}, (304, 0, 0, False, False)),
    ("* -> 304", {"if-none-match": "*"}, {}, (304, 0, 0, False, False)),
    ("a range", {"range": "bytes=10-19"}, {}, (206, 10, 20, False, True)),
    ("a range is never gzipped", {"range": "bytes=10-", "accept-encoding": "gzip"}, {}, (206, 10, 5000, False, True)),
    ("the last bytes", {"range": "bytes=-100"}, {}, (206, 4900, 5000, False, True)),
    ("past the end -> 416", {"range": "bytes=5000-"}, {}, (416, 0, 0, False, False)),
    ("several ranges: the whole file", {"range": "bytes=0-1,5-6"}, {}, (200, 0, 5000, False, True)),
    ("backwards: the whole file", {"range": "bytes=9-3"}, {}, (200, 0, 5000, False, True)),
    ("If-Range naming the tag", {"range": "bytes=0-9", "if-range": TAG}, {}, (206, 0, 10, False, True)),
    ("If-Range with spaces around it", {"range": "bytes=0-9", "if-range": f"  {TAG} "}, {}, (206, 0, 10, False, True)),
    (
        "If-Range of another tag: the whole file",
        {"range": "bytes=0-9", "if-range": '"old"'},
        {},
        (200, 0, 5000, False, True),
    ),
    (
        "If-Range as a date: the whole file",
        {"range": "bytes=0-9", "if-range": "Tue, 1 Jan 2030 00:00:00 GMT"},
        {},
        (200, 0, 5000, False, True),
    ),
]


@pytest.mark.parametrize(("what", "headers", "options", "expected"), CASES, ids=[c[0] for c in CASES])
def test_plan(
    what: str, headers: dict[str, str], options: dict[str, Any], expected: tuple[int, int, int, bool, bool]
) -> None:
    found = plan(headers, **options)
    status, start, stop, gzip, body = expected
    assert (found.status, found.gzip, found.body) == (status, gzip, body), what
    if status in (200, 206):
        assert (found.start, found.stop) == (start, stop)
        assert found.headers["etag"] == (GZ if gzip else TAG)
        assert ("content-encoding" in found.headers) == gzip
        assert ("content-length" in found.headers) != gzip  # gzip streams: length unknown
        if not gzip:
            assert found.headers["content-length"] == str(stop - start)
    if status == 206:
        assert found.headers["content-range"] == f"bytes {start}-{stop - 1}/5000"
    if status == 416:
        assert found.headers["content-range"] == "bytes */5000"
    if status == 304:
        assert found.headers["etag"] in (TAG, GZ) and "content-type" not in found.headers
    assert found.headers["vary"] == "Accept-Encoding"


def test_cache_policy_csp_and_extra_headers() -> None:
    assert plan({}).headers["cache-control"] == REVALIDATE
    immutable = plan_response(name="x.txt", size=10, etag=TAG, immutable=True, headers={}, method="GET")
    assert immutable.headers["cache-control"] == IMMUTABLE
    assert plan({}, cache="private").headers["cache-control"] == "private"
    # The trace pages' CSP: on an .html file's every answer (a 304 too), never on data.
    for headers in ({}, {"if-none-match": TAG}, {"range": "bytes=0-1"}):
        assert plan(headers, name="index.html", html_csp=CSP).headers["content-security-policy"] == CSP
    assert "content-security-policy" not in plan({}, html_csp=CSP).headers
    assert plan({"if-none-match": TAG}, extra={"x-a": "1"}).headers["x-a"] == "1"


@pytest.mark.parametrize(
    ("parts", "payload"),
    [
        (("payloads", "0123456789abcdef0123456789abcdef.txt"), True),
        (("rank_0", "payloads", "0123456789abcdef0123456789abcdef.txt"), True),
        (("payloads", "notes.txt"), False),
        (("payloads", "0123456789ABCDEF0123456789ABCDEF.txt"), False),
        (("raw.jsonl",), False),
        (("x", "0123456789abcdef0123456789abcdef.txt"), False),
    ],
)
def test_only_content_addressed_payloads_are_immutable(parts: tuple[str, ...], payload: bool) -> None:
    assert is_payload_name(parts) is payload


@pytest.mark.parametrize(
    ("header", "asked"),
    [
        ("bytes=1-2", "bytes=1-2"),
        (" bytes = 1 - 2 ", "bytes=1-2"),
        ("bytes=-5", "bytes=-5"),
        ("bytes=5-", "bytes=5-"),
        ("bytes=-0", "bytes=-0"),  # never satisfiable: the store's answer tells the size for the 416
        ("bytes=5-1", None),  # ignored by the plan: the whole object is asked
        ("bytes=1-2,3-4", None),
        ("items=1-2", None),
        ("bytes=\u0661-2", None),  # a digit to str.isdigit, not to a store
        ("bytes=99999999999999999999-", None),
        (None, None),
    ],
)
def test_the_range_asked_of_a_store(header: str | None, asked: str | None) -> None:
    """serve/remote.py asks the store for the client's range as it is when the plan would honour
    it or answer 416 for every size, and for the whole object otherwise (the plan ignores the range,
    or it is not plain ASCII to send on)."""
    from tlscope.serve.remote import asked_range

    assert asked_range(header) == asked
    if header is not None and asked is not None:  # (the whole object, when not asked, serves any plan)
        for size in (1, 10, 10**6):  # the plan's decision on what is asked is the one on what was sent
            assert plan({"range": asked}, size=size).status == plan({"range": header}, size=size).status
