"""serve: `tlscope serve`'s server (docs/SERVER.md, docs/SECURITY.md "Server").

Starlette + uvicorn. `app` (routes), `server` (assembling and running one), `config` (TOML and
flags), `traces` (what is served and making it ready), `cache` (raw logs parsed once, bounded),
`index` (the events API's index), `files` and `remote` (file responses: validators, ranges,
gzip, streaming), `stores` (fsspec remote stores, SSRF policy), `paths` (confinement),
`security` (host check, CORS, token, CSPs), `viewerdirs` (hosted viewers), `openapi`.
"""
