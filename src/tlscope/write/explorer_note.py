"""The report's pointer to the explorer (issue 20, finding 7: the report never mentioned it).

index.html (a log's report, and a multi-rank job's landing page) says how to open the folder in
the explorer, `tlscope serve` or `tlscope pack`, and, when the page itself is served by `tlscope
serve` (its path is `/traces/<id>/...`), links straight to the explorer on this trace. The link is
made by the page's script, not written into the file: a report opened from disk or from another
server has no explorer beside it, so it shows only the commands. Constant markup, no log data;
with `--source-url` (`explorer_note`), the commands and the link carry it, so the explorer's
user lines link to the same source as the report's.
"""

from __future__ import annotations

import json
import shlex
from urllib.parse import quote

from markupsafe import Markup, escape

#: Shown near the top of index.html; `#open-explorer` is filled in only under `tlscope serve`.
EXPLORER_NOTE = Markup("""<p class="explorer-note">
<strong>Explore every event</strong> of this folder in tlscope's explorer (compile ids with their
status, every recompile on one screen, the graph breaks, each payload):
<code>tlscope serve FOLDER</code> prints its link, <code>tlscope pack FOLDER -o trace.html</code>
writes it into one file to open or share (FOLDER: the folder holding this page).
<a id="open-explorer" hidden>Open this trace in the explorer</a>
</p>
<script>
(function () {
  // Served by tlscope serve: the trace is /traces/<id>/ and the explorer /viewers/explorer/.
  var found = /^(\\/traces\\/[^/]+\\/)/.exec(location.pathname);
  var link = document.getElementById('open-explorer');
  if (!found || !link || (location.protocol !== 'http:' && location.protocol !== 'https:')) return;
  link.href = '/viewers/explorer/?trace=' + encodeURIComponent(found[1]);
  link.hidden = false;
})();
</script>
""")


def explorer_note(source_url: str = "", source_root: str = "") -> Markup:
    """EXPLORER_NOTE, its `tlscope serve`/`pack` commands given `--source-url` (and
    `--source-root`), and its explorer link their query (`source_url=`, `source_root=`, as
    `tlscope serve --source-url` adds them to its viewer links). The URL was checked where it was
    given (http(s), no quote or space); both are escaped for the shell and for HTML, and the
    query is percent-encoded, so neither can end the script or the attribute."""
    if not source_url:
        return EXPLORER_NOTE
    flags = f" --source-url {shlex.quote(source_url)}"
    query = f"&source_url={quote(source_url, safe='')}"
    if source_root:
        flags += f" --source-root {shlex.quote(source_root)}"
        query += f"&source_root={quote(source_root, safe='')}"
    text = str(EXPLORER_NOTE)
    for command in ("tlscope serve FOLDER", "tlscope pack FOLDER -o trace.html"):
        text = text.replace(f"<code>{command}</code>", f"<code>{command}{escape(flags)}</code>", 1)
    link = "link.href = '/viewers/explorer/?trace=' + encodeURIComponent(found[1])"
    text = text.replace(f"{link};", f"{link} + {json.dumps(query)};", 1)
    return Markup(text)
