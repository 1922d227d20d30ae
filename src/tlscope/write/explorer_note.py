"""The report's pointer to the explorer (issue 20, finding 7: the report never mentioned it).

index.html (a log's report, and a multi-rank job's landing page) says how to open the folder in
the explorer, `tlscope serve` or `tlscope pack`, and, when the page itself is served by `tlscope
serve` (its path is `/traces/<id>/...`), links straight to the explorer on this trace. The link is
made by the page's script, not written into the file: a report opened from disk or from another
server has no explorer beside it, so it shows only the commands. Constant markup, no log data.
"""

from __future__ import annotations

from markupsafe import Markup

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
