"""`--source-url`: a logged user line as a link to its source (issue 23: "would like to know code
hash, so can generate links to files").

`<url>/<path>#L<line>`, with `url` a repository URL at a commit
(`https://github.com/o/r/blob/<sha>`) or a server of a local source tree, and `path` the logged
file's path: `$CWD/` removed (torch's stacks name the working folder so), else `--source-root`
removed when the file is under it. The URL is checked once where it is given
(`serve/config.check_source_url`: http(s) with a host, no credentials); a path that stays
absolute, holds `..` or an empty part, or is outside the root, gets no link, so a log's file name
never reaches outside the URL's tree (docs/SECURITY.md). The explorer's Graph view applies the
same rule (explorer/graphrows.js `sourceHref`), which tests/test_source_url.py checks against this.
"""

from __future__ import annotations

from urllib.parse import quote


def source_href(base: str, root: str, file: str | None, line: int | None) -> str | None:
    """The link to `file`'s line under `base`, or None (no URL, no file, or a path it refuses)."""
    if not base or not file or not base.lower().startswith(("http://", "https://")):
        return None
    path = file
    if path.startswith("$CWD/"):
        path = path[5:]
    elif root and path.startswith(root if root.endswith("/") else f"{root}/"):
        path = path[len(root) :].lstrip("/")
    if path.startswith("/") or any(part in ("..", "") for part in path.split("/")):
        return None
    # encodeURIComponent's set, as graphrows.js: the same link from either.
    encoded = "/".join(quote(part, safe="!*'()") for part in path.split("/"))
    return f"{base.rstrip('/')}/{encoded}" + (f"#L{line}" if line is not None else "")
