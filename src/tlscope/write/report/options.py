"""What the HTML report is asked for: one type, built by the parse command, passed whole."""

from __future__ import annotations

import msgspec


class ReportOptions(msgspec.Struct, kw_only=True, frozen=True):
    """The report's options (picklable: multi-rank workers get them)."""

    #: -p: inductor_output_code as plain .txt instead of highlighted .html.
    plain_text: bool = False
    #: -e: draft-export report instead of the compile report.
    export: bool = False
    #: -i: provenance tracking pages.
    inductor_provenance: bool = False
    #: --custom-header-html: the user's markup at the top of index.html (not escaped, by design).
    custom_header_html: str = ""
    #: A rank of a multi-rank run: its folder gets collectives_parity.json, which index.html links.
    multi_rank: bool = False
    #: --source-url (checked: http(s) with a host) and --source-root: the report's user lines link
    #: to `<url>/<path>#L<line>` (write/source_link.py), and its explorer link carries them.
    source_url: str = ""
    source_root: str = ""
    #: Processes that highlight inductor output code (None: up to 4; 1: in-process, as in a
    #: multi-rank worker, whose pool already uses the cores).
    highlight_workers: int | None = None
