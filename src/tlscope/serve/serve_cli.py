"""The command-line side shared by `tlscope serve` and `tlscope run`: the server flags, merging
them over the config file, starting (one line on failure) and serving (the address printed, the
browser opened, Ctrl-C)."""

from __future__ import annotations

import argparse
import sys
import threading
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import msgspec

from tlscope.lifetime import Terminated, exit_status, stop_handled
from tlscope.serve.app import Server
from tlscope.serve.config import ServeConfig, check, load
from tlscope.serve.security import is_loopback_bind
from tlscope.serve.server import base_url, bind, build, run
from tlscope.write.run_options import user_code_patterns


def add_server_flags(parser: argparse.ArgumentParser) -> None:
    """The flags `serve` and `run` share."""
    parser.add_argument("--port", type=int, help="port to listen on (default 8000; 0: any free port)")
    parser.add_argument("--host", help="address to bind (default 127.0.0.1, this machine only)")
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let pages from ORIGIN (scheme://host[:port], exactly) read traces; repeatable; '*' for any",
    )
    parser.add_argument("--config", type=Path, metavar="FILE", help="TOML settings file (flags override it)")
    parser.add_argument("--token", help="require this bearer token on every request (also: config `token`)")
    parser.add_argument("--viewer", action="append", default=[], metavar="PATH", help="host the viewer in PATH")
    parser.add_argument("--cache-dir", type=Path, help="where raw logs are parsed to")
    parser.add_argument(
        "--compress",
        choices=["auto", "always", "never"],
        help="gzip text as it is sent (default auto: not to clients on this machine)",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument(
        "--source-url",
        metavar="URL",
        help="the Graph view links user lines to URL/<file>#L<line>: an http(s) source root or a repository "
        "at a commit, e.g. https://github.com/o/r/blob/<sha> (also: config `source_url`)",
    )
    parser.add_argument(
        "--source-root",
        metavar="PATH",
        help="the logged files' local path prefix, removed before joining to --source-url",
    )
    parser.add_argument(
        "--latest", action="store_true", help="a folder of several logs serves its newest log only (default: each)"
    )


def config_from(args: argparse.Namespace) -> ServeConfig:
    """The config file's settings with the flags over them. Raises ConfigError."""
    config = load(args.config)
    changes: dict[str, object] = {}
    for flag, name in (("port", "port"), ("host", "host"), ("token", "token"), ("compress", "compress")):
        if getattr(args, flag) is not None:
            changes[name] = getattr(args, flag)
    if args.allow_origin:
        changes["allow_origins"] = [*config.allow_origins, *args.allow_origin]
    if args.cache_dir is not None:
        changes["cache_dir"] = str(args.cache_dir)
    for flag in ("source_url", "source_root"):
        if getattr(args, flag, None) is not None:
            changes[flag] = getattr(args, flag)
    return check(msgspec.structs.replace(config, **changes))


def warnings_for(config: ServeConfig) -> list[str]:
    out = []
    if "*" in config.allow_origins:
        out.append("--allow-origin '*': any web page you visit can read every trace this server serves")
    if not is_loopback_bind(config.host) and config.token is None:
        out.append(f"bound to {config.host} without a token: anyone who can reach it can read every trace")
    return out


def start(args: argparse.Namespace, sources: Sequence[str]) -> tuple[Server, object]:
    """Build the server and bind its socket (TlscopeError or OSError: reported by tlscope.cli)."""
    config = config_from(args)
    warnings = warnings_for(config)
    latest = bool(getattr(args, "latest", False))
    # Only `serve` parses logs with --user-code (`run` serves the folder it parsed itself).
    mine = user_code_patterns(getattr(args, "user_code", None))
    server = build(
        config, sources, viewer_paths=args.viewer, progress=True, warn=warnings, latest=latest, user_code=mine
    )
    sock = bind(config.host, config.port)
    for warning in warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    return server, sock


def serve(server: Server, sock: object, *, browser: bool) -> int:
    """Print where, open the browser, serve until Ctrl-C; 0, or 130 (143 on SIGTERM) when stopped."""
    try:
        _announce(server, sock, browser=browser)
        run(server, sock)  # type: ignore[arg-type]  # _announce checked it is a socket
    except (KeyboardInterrupt, Terminated) as stop:
        # The usual end of a server (Ctrl-C, or SIGTERM from a supervisor), at any moment after
        # it started: its own line and status, not the parse command's "the output was left as
        # it was" (serve writes no output).
        stop_handled()
        print("tlscope serve: stopped", file=sys.stderr)
        return exit_status(stop)
    return 0


def _announce(server: Server, sock: object, *, browser: bool) -> None:
    """Print the address and each trace's link (stdout); open the browser."""
    import socket

    assert isinstance(sock, socket.socket)
    url = base_url(sock)
    traces = list(server.traces.by_id.values())
    # The address is the command's output (stdout, flushed at once): scripts and templates' tests
    # read it from there; progress and warnings go to stderr.
    print(f"tlscope serve: {url}/ ({len(traces)} trace(s); Ctrl-C to stop)")
    for trace in traces:
        print(f"  {trace.id}: {url}{trace.describe(server.default_viewer, server.viewer_query)['viewer_url']}")
    if server.config.token is not None:
        print(f"  sign in: {url}/login?token=<token>")
    sys.stdout.flush()
    if browser:
        target = url + (
            traces[0].describe(server.default_viewer, server.viewer_query)["viewer_url"] if len(traces) == 1 else "/"
        )
        if server.config.token is not None:
            target = f"{url}/login?token={quote(server.config.token)}&next={quote(target[len(url) :])}"
        threading.Timer(0.5, webbrowser.open, (target,)).start()
