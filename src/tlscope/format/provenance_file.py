"""provenance.json: every Inductor compilation that logged provenance, its texts and their links.

These Structs are the file's schema (docs/schema/provenance.schema.json is generated from them);
FORMAT.md section "provenance.json" documents each field. Line numbers are 1-based lines of the
payload files named (split on `\\n`), so a viewer shows the payloads as they are and links lines
without searching them.
"""

from __future__ import annotations

import msgspec

#: Line -> linked lines of another text, keys as decimal strings (JSON object keys).
LineLinks = dict[str, list[int]]


class ProvenanceEntry(msgspec.Struct, kw_only=True):
    """One Inductor compilation that logged `inductor_provenance_tracking_node_mappings`."""

    #: The compile id as displayed (`[0/0]`, `[-/-]` for a log without frame ids).
    id: str
    #: Its directory name (`-_0_0_0`), as in manifest.json's `compile_ids`.
    dir: str
    #: 1 for the compile id's first compilation with provenance, 2 for the next (a backward)...
    n: int
    #: Payload names (`payloads/<md5>.txt`): the pre-grad graph, post-grad graph, generated code
    #: and node mappings; null when not logged for this compilation.
    pre: str | None
    post: str | None
    code: str | None
    node_mappings: str | None
    #: `python` (inductor_output_code) or `cpp` (AOTInductor's inductor_aot_wrapper_code); "" without code.
    code_language: str
    pre_to_post: LineLinks
    post_to_pre: LineLinks
    code_to_post: LineLinks
    post_to_code: LineLinks


class ProvenanceFile(msgspec.Struct, kw_only=True):
    format: str = "tlscope"
    format_version: int
    format_minor: int
    #: In log order of their node mappings.
    compilations: list[ProvenanceEntry]
