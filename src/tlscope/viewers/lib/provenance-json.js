// Generated from docs/schema/ by src/tlscope/viewers/schema-types.mjs (npm run dts): do not edit.
// The types of provenance.json (docs/FORMAT.md section 19), from docs/schema/provenance.schema.json.

/**
 * @typedef {object} ProvenanceFile
 * @property {string} [format]
 * @property {number} format_version
 * @property {number} format_minor
 * @property {ProvenanceEntry[]} compilations
 */

/**
 * One Inductor compilation that logged `inductor_provenance_tracking_node_mappings`.
 * @typedef {object} ProvenanceEntry
 * @property {string} id
 * @property {string} dir
 * @property {number} n
 * @property {string | null} pre
 * @property {string | null} post
 * @property {string | null} code
 * @property {string | null} node_mappings
 * @property {string} code_language
 * @property {Record<string, number[]>} pre_to_post
 * @property {Record<string, number[]>} post_to_pre
 * @property {Record<string, number[]>} code_to_post
 * @property {Record<string, number[]>} post_to_code
 */

export {};
