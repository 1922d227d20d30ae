"""The OpenAPI 3.1 document served at /openapi.json: every route of the server (tests compare the
two), with the parameters and answers docs/SERVER.md describes."""

from __future__ import annotations

from typing import Any

_ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
_SUMMARY = {
    "type": ["object", "null"],
    "properties": {
        "torch_version": {"type": ["string", "null"]},
        "events": {"type": "integer"},
        "compile_ids": {"type": "integer"},
        "ranks": {"type": "array", "items": {"type": "integer"}},
        "problems": {"type": "integer"},
        "multi_rank": {"type": "boolean", "description": "A job's folder (rank_N/ parts), not one log's"},
    },
}
_TRACE = {
    "type": "object",
    "required": ["id", "url", "viewer_url", "source", "kind", "state", "summary"],
    "properties": {
        "id": {"type": "string"},
        "url": {"type": "string", "description": "Base URL of the trace's files: /traces/<id>/"},
        "viewer_url": {"type": "string", "description": "The trace in the default viewer"},
        "source": {"type": "string", "description": "The path or store URL it comes from"},
        "kind": {"enum": ["folder", "log", "remote-folder", "remote-log"]},
        "state": {"enum": ["ready", "pending", "parsing", "failed"]},
        "progress": {
            "type": ["object", "null"],
            "additionalProperties": {"type": "integer"},
            "description": "bytes/total, ranks_done/ranks_total/last_rank, or downloaded/total while preparing",
        },
        "error": {"type": ["string", "null"]},
        "summary": _SUMMARY,
    },
}
_EVENTS = {
    "type": "object",
    "required": ["total", "offset", "events"],
    "properties": {
        "total": {"type": "integer", "description": "Events matching the filter"},
        "offset": {"type": "integer"},
        "events": {"type": "array", "items": {"type": "object"}, "description": "raw.jsonl lines, byte for byte"},
    },
}
_VIEWER = {
    "type": "object",
    "required": ["name", "url", "source", "default"],
    "properties": {
        "name": {"type": "string"},
        "url": {"type": "string"},
        "source": {"type": "string"},
        "default": {"type": "boolean"},
    },
}
_STORE = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "url": {"type": "string"}, "kind": {"type": "string"}},
}


def _ok(schema: dict[str, Any] | None = None, media: str = "application/json", text: str = "OK") -> dict[str, Any]:
    content = {media: {"schema": schema}} if schema is not None else {media: {}}
    return {"description": text, "content": content}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(c): {"description": "error", "content": {"application/json": {"schema": _ERROR}}} for c in codes}


def _param(name: str, where: str, schema: dict[str, Any], doc: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": where, "required": required or where == "path", "schema": schema, "description": doc}


_ID = _param("id", "path", {"type": "string"}, "Trace id (from /api/traces)")
_FILE = _param("path", "path", {"type": "string"}, "A file of the trace folder, e.g. manifest.json")
_FILE_ANSWERS = {
    "200": _ok(None, "application/octet-stream", "The file (gzip when accepted, by default not to loopback)"),
    "206": {"description": "A byte range of the file (Range)"},
    "304": {"description": "Not modified (If-None-Match)"},
    "416": {"description": "Range not satisfiable"},
    "400": {"description": "A path that would leave the folder"},
    "404": {"description": "No such file"},
}
#: A trace's files may come from a store, or wait for a parse: the store's and the wait's answers too.
_TRACE_FILE_ANSWERS = {
    **_FILE_ANSWERS,
    "403": {"description": "The store's address policy refused the connection"},
    "413": {"description": "The object is over the store's max_object_bytes"},
    "422": {"description": "The trace failed to parse"},
    "502": {"description": "The store failed"},
    "503": {"description": "The trace is still being prepared (Retry-After)"},
    "504": {"description": "The store did not answer, or no request slot freed, within its timeout"},
}


def _events_params() -> list[dict[str, Any]]:
    return [
        _ID,
        _param("kind", "query", {"type": "string"}, "Event key (e.g. compilation_metrics)"),
        _param("compile_id", "query", {"type": "string"}, "Compile id, display form (e.g. [0/1])"),
        _param("rank", "query", {"type": "integer"}, "Rank (the event's rank field, else its rank folder)"),
        _param("q", "query", {"type": "string"}, "Text the raw.jsonl line contains, any case"),
        _param("offset", "query", {"type": "integer", "minimum": 0}, "First matching event to return"),
        _param("limit", "query", {"type": "integer", "minimum": 0}, "Events per page (at most max_page)"),
    ]


def _paths() -> dict[str, Any]:
    get = "get"
    return {
        "/": {get: {"summary": "Home page: traces and viewers", "responses": {"200": _ok(None, "text/html")}}},
        "/login": {get: {
            "summary": "Keep the bearer token in a cookie, then redirect to `next`",
            "parameters": [_param("token", "query", {"type": "string"}, "The token"),
                           _param("next", "query", {"type": "string"}, "A path on this server")],
            "responses": {"303": {"description": "Accepted"}, **_errors(401)},
        }},
        "/openapi.json": {get: {"summary": "This document", "responses": {"200": _ok({"type": "object"})}}},
        "/api/traces": {
            get: {"summary": "Every trace", "responses": {"200": _ok({"type": "array", "items": _TRACE})}},
            "post": {
                "summary": "Serve a trace from a configured store",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["url"], "properties": {"url": {"type": "string"}},
                    "additionalProperties": False}}}},
                "responses": {"201": _ok(_TRACE), **_errors(400, 403, 413)},
            },
        },
        "/api/traces/{id}": {get: {"summary": "One trace", "parameters": [_ID],
                                   "responses": {"200": _ok(_TRACE), **_errors(404)}}},
        "/api/traces/{id}/status": {get: {
            "summary": "One trace, at once; starts its parse or download when not started (progress to poll)",
            "parameters": [_ID],
            "responses": {"200": _ok(_TRACE), **_errors(404)},
        }},
        "/favicon.ico": {get: {"summary": "tlscope's icon (SVG)", "responses": {"200": _ok(None, "image/svg+xml")}}},
        "/api/traces/{id}/events": {get: {
            "summary": "The trace's events, filtered and paged (the JSON twin of raw.jsonl)",
            "parameters": _events_params(),
            "responses": {"200": _ok(_EVENTS), **_errors(400, 403, 404, 413, 422, 502, 503, 504)},
        }},
        "/api/viewers": {get: {"summary": "Hosted viewers",
                               "responses": {"200": _ok({"type": "array", "items": _VIEWER})}}},
        "/api/stores": {get: {"summary": "Configured stores",
                              "responses": {"200": _ok({"type": "array", "items": _STORE})}}},
        "/traces/{id}": {get: {"summary": "Redirect to /traces/{id}/", "parameters": [_ID],
                               "responses": {"308": {"description": "Redirect"}}}},
        "/traces/{id}/{path}": {get: {"summary": "A file of the trace folder", "parameters": [_ID, _FILE],
                                      "responses": _TRACE_FILE_ANSWERS}},
        "/lib/{path}": {get: {"summary": "The JS client", "parameters": [_FILE], "responses": _FILE_ANSWERS}},
        "/viewers/{name}": {get: {"summary": "Redirect to /viewers/{name}/",
                                  "parameters": [_param("name", "path", {"type": "string"}, "Viewer name")],
                                  "responses": {"308": {"description": "Redirect"}}}},
        "/viewers/{name}/{path}": {get: {
            "summary": "A viewer's files, under the viewer Content-Security-Policy",
            "parameters": [_param("name", "path", {"type": "string"}, "Viewer name"), _FILE],
            "responses": _FILE_ANSWERS,
        }},
    }  # fmt: skip


def document(version: str) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "tlscope serve", "version": version, "description": "See docs/SERVER.md."},
        "paths": _paths(),
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
