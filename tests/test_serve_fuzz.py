"""The API fuzzed from its own OpenAPI document (schemathesis): no request it generates gets a 5xx.

The server runs in-process on a real port (uvicorn in a thread) with a single-rank and a
multi-rank trace; half the generated trace ids are mapped to real ones so the events API's
query parsing is fuzzed on real indexes, not only 404s. Examples per operation are bounded so CI
pays seconds, not minutes; generation is derandomized so a failure replays.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import LiveServer

schemathesis = pytest.importorskip("schemathesis", reason="the API fuzz needs schemathesis (the test extra)")
from hypothesis import HealthCheck, given, settings  # noqa: E402 - after the skip above

EXAMPLES = 30


@pytest.fixture(scope="module")
def live(viewer_traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer([str(p) for p in viewer_traces.values()], tmp_path_factory.mktemp("fuzz"), max_page=200)
    yield server
    server.close()


@pytest.fixture(scope="module")
def api(live: LiveServer) -> Any:
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    ids = live.trace_ids()

    def map_path_parameters(context: Any, parameters: dict[str, Any] | None) -> dict[str, Any] | None:
        """Half the generated trace ids become real ones, so the fuzz reaches past the 404s."""
        if parameters and "id" in parameters and len(str(parameters["id"])) % 2 == 0:
            parameters["id"] = ids[len(str(parameters["id"])) // 2 % len(ids)]
        return parameters

    schema.hook(map_path_parameters)
    return schema


def test_no_server_error(api: Any) -> None:
    seen: dict[str, int] = {}
    for result in api.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
        def call(case: Any) -> None:
            response = case.call(timeout=60)
            seen[str(response.status_code)] = seen.get(str(response.status_code), 0) + 1
            assert response.status_code < 500, (case.method, case.formatted_path, case.query, response.text[:500])

        call()
    assert {"200", "400", "404"} <= set(seen), seen  # the fuzz reached real answers, not only errors
