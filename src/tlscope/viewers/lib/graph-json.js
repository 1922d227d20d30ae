// Generated from docs/schema/ by src/tlscope/viewers/schema-types.mjs (npm run dts): do not edit.
// The types of graphs/<md5>.json (docs/FORMAT.md section 18), from docs/schema/graph.schema.json.

/**
 * Top-level object of graphs/<md5>.json.
 * @typedef {object} GraphFile
 * @property {string} [format]
 * @property {number} format_version
 * @property {number} format_minor
 * @property {string} payload
 * @property {StoredGraph | null} graph
 * @property {string | null} [failure]
 */

/**
 * @typedef {object} StoredGraph
 * @property {string} name
 * @property {StoredInput[]} inputs
 * @property {StoredNode[]} nodes
 * @property {string[]} outputs
 * @property {FxSource[]} sources
 * @property {Record<string, StoredGraph>} [subgraphs]
 */

/**
 * One argument of the graph's `forward` (after `self`).
 * @typedef {object} StoredInput
 * @property {string} name
 * @property {TensorMeta | null} [meta]
 * @property {string | null} [module]
 */

/**
 * An annotation such as `"f32[s0, 4][4, 1]cpu"` or `"Sym(s77)"`, split into its parts.
 * @typedef {object} TensorMeta
 * @property {string} text
 * @property {string} [dtype]
 * @property {string[] | null} [shape]
 * @property {string[] | null} [stride]
 * @property {string} [device]
 * @property {string} [sym]
 */

/**
 * One assignment line of the graph's `forward`.
 * @typedef {object} StoredNode
 * @property {string} name
 * @property {string[]} names
 * @property {string} op
 * @property {string} target
 * @property {string[]} args
 * @property {string[]} users
 * @property {TensorMeta | null} [meta]
 * @property {number | null} [source]
 * @property {string | null} [module]
 * @property {number} [line]
 */

/**
 * The user line a node came from, from the `# File: path:line in fn, code: ...` comment.
 * @typedef {object} FxSource
 * @property {string} file
 * @property {number} line
 * @property {string} function
 * @property {string} code
 */

export {};
