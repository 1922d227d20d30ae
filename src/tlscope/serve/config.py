"""`tlscope serve`'s settings: a TOML file (docs/SERVER.md, "Config file"), then flags over it.

Every table is checked on load (unknown keys are an error: a typo such as `allow_origin` would
otherwise silently leave the server without the grant it was meant to have).
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import Literal
from urllib.parse import quote, urlsplit

import msgspec

from tlscope.format.errors import TlscopeError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

GiB = 1024**3
MiB = 1024**2


class ConfigError(TlscopeError):
    """The config file or a flag is unusable: one line for the user (exit status 2, a usage error)."""

    exit_status = 2


class StoreConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One remote store, named in the config: `[stores.NAME]`."""

    #: Where the store's traces live: `s3://bucket/prefix/`, `gs://bucket/prefix/` or `https://host/path/`.
    #: Only URLs under it are ever fetched.
    url: str
    #: S3-compatible endpoint (MinIO, Ceph, R2, moto...), or a GCS JSON-API endpoint (an emulator);
    #: None for AWS or Google Cloud Storage itself.
    endpoint_url: str | None = None
    #: Read without credentials (public buckets).
    anon: bool = False
    #: Extra fsspec storage options (s3:// and gs:// only), e.g. `{profile = "team"}`.
    options: dict[str, str | int | float | bool] = msgspec.field(default_factory=dict)
    #: https:// stores: networks (CIDR) allowed although private, loopback or link-local.
    allow_networks: list[str] = msgspec.field(default_factory=list)
    #: Requests to this store at once (more wait their turn, at most `timeout`, then 504).
    max_concurrency: int = 8
    #: Seconds to wait for a connection or for the next bytes of a response.
    timeout: float = 30.0
    #: Largest object fetched (bytes); bigger ones are refused with 413.
    max_object_bytes: int = 4 * GiB


class ServeConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Everything `tlscope serve` can be told; flags override the file's values."""

    host: str = "127.0.0.1"
    port: int = 8000
    #: Origins granted CORS, exactly `scheme://host[:port]`; "*" only when written so.
    allow_origins: list[str] = msgspec.field(default_factory=list)
    #: Host header names accepted besides loopback names (a shared deployment's DNS name).
    allowed_hosts: list[str] = msgspec.field(default_factory=list)
    #: A bearer token every request must carry (None: no token).
    token: str | None = None
    #: Where raw logs are parsed to (default: the user's cache folder).
    cache_dir: str | None = None
    #: Bound of the cache folder; least recently used traces are removed past it.
    cache_max_bytes: int = 20 * GiB
    #: Traces served from the start: paths or store URLs.
    traces: list[str] = msgspec.field(default_factory=list)
    #: Viewer folders hosted besides the built-in explorer and installed ones.
    viewers: list[str] = msgspec.field(default_factory=list)
    stores: dict[str, StoreConfig] = msgspec.field(default_factory=dict)
    #: Largest page of the events API.
    max_page: int = 1000
    #: Longest text search (characters).
    max_query: int = 256
    #: Seconds a request may wait for a trace to be parsed or fetched before 503.
    request_timeout: float = 600.0
    #: gzip text as it is sent: "auto" (to clients not on this machine: over loopback the bytes
    #: cost nothing and compressing them a CPU core), "always" or "never".
    compress: Literal["auto", "always", "never"] = "auto"
    #: Where the Graph view links a node's user line (issue 23): an http(s) URL of the source root
    #: or of a repository at a commit (`https://github.com/o/r/blob/<sha>`); None: no links.
    source_url: str | None = None
    #: The local path prefix of the logged files, removed before joining them to `source_url`.
    source_root: str | None = None


def load(path: Path | None) -> ServeConfig:
    """The config in `path` (None: every default). Raises ConfigError naming the path and the problem."""
    if path is None:
        return ServeConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        config = msgspec.convert(data, ServeConfig)
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror or err}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, msgspec.ValidationError) as err:
        raise ConfigError(f"{path}: {err}") from None
    try:
        return check(config)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def check(config: ServeConfig) -> ServeConfig:
    """Normalise the origins and validate stores; raise ConfigError on anything unusable."""
    origins = [normalise_origin(o) for o in config.allow_origins]
    for name, store in config.stores.items():
        _check_store(name, store)
    if not 0 <= config.port <= 65535:
        raise ConfigError(f"port {config.port} is not in 0..65535")
    if config.max_page < 1 or config.max_query < 1 or config.cache_max_bytes < 0:
        raise ConfigError("max_page and max_query must be positive, cache_max_bytes not negative")
    if config.source_url is not None:
        check_source_url(config.source_url)
    return msgspec.structs.replace(config, allow_origins=origins)


def check_source_url(url: str) -> str:
    """`--source-url`: an absolute http(s) URL with a host and no credentials, else ConfigError
    (a `javascript:` or `file:` URL would run or read something in the viewer's origin)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise ConfigError(f"--source-url {url!r} must be an http(s) URL with a host (and no credentials)")
    if any(ord(c) < 0x21 or c in '"<>\\^`{|}' for c in url):
        raise ConfigError(f"--source-url {url!r} has characters a URL may not hold")
    return url


def viewer_query(config: ServeConfig) -> str:
    """What the viewers' links add to `?trace=`: `--source-url` and `--source-root` (graph.js reads them)."""
    out = ""
    if config.source_url:
        out += f"&source_url={quote(config.source_url, safe='')}"
        if config.source_root:
            out += f"&source_root={quote(config.source_root, safe='')}"
    return out


def normalise_origin(origin: str) -> str:
    """`scheme://host[:port]` as browsers send it in Origin (lower case, default port dropped), or '*'."""
    if origin == "*":
        return origin
    parts = urlsplit(origin)
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"origin {origin!r} has a bad port") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        raise ConfigError(f"origin {origin!r} must be scheme://host[:port] (http or https, no path)")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ConfigError(f"origin {origin!r} must be scheme://host[:port] only")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[parts.scheme]
    return f"{parts.scheme}://{host}" + ("" if port in (None, default) else f":{port}")


def _check_store(name: str, store: StoreConfig) -> None:
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"store name {name!r}: letters, digits, '-' and '_' only")
    scheme = urlsplit(store.url).scheme
    if scheme not in ("s3", "gs", "gcs", "https", "http"):
        raise ConfigError(f"store {name}: url {store.url!r} must be s3://, gs://, https:// (or http://)")
    if store.max_concurrency < 1 or store.timeout <= 0 or store.max_object_bytes < 1:
        raise ConfigError(f"store {name}: max_concurrency, timeout and max_object_bytes must be positive")
    for net in store.allow_networks:
        try:
            ipaddress.ip_network(net, strict=False)
        except ValueError:
            raise ConfigError(f"store {name}: {net!r} is not a network (CIDR)") from None


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/tlscope/serve, or ~/.cache/tlscope/serve."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tlscope" / "serve"
