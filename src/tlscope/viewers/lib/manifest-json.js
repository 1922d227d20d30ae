// Generated from docs/schema/ by src/tlscope/viewers/schema-types.mjs (npm run dts): do not edit.
// The types of manifest.json (docs/FORMAT.md section 2), from docs/schema/manifest.schema.json.

/**
 * Top-level object of manifest.json.
 * @typedef {object} Manifest
 * @property {string} format
 * @property {number} format_version
 * @property {number} format_minor
 * @property {string} tlscope_version
 * @property {string[]} command
 * @property {InputFile[]} inputs
 * @property {string | null} torch_version
 * @property {number[]} ranks
 * @property {number[]} processes
 * @property {ClockInfo} clock
 * @property {Record<string, KeyStats>} events
 * @property {string[]} unknown_event_keys
 * @property {Record<string, KeyStats>} artifacts
 * @property {CompileIdEntry[]} compile_ids
 * @property {number} unknown_compile_id_events
 * @property {PayloadStats} payloads
 * @property {GraphStats | null} [graphs]
 * @property {number} chromium_events
 * @property {number} raw_jsonl_events
 * @property {number | null} string_table_process
 * @property {ProblemSummary} problems
 * @property {ProblemSummary} [notes]
 * @property {string[]} files
 */

/**
 * One log that was read.
 * @typedef {object} InputFile
 * @property {string} path
 * @property {number} size
 * @property {string} sha256
 * @property {boolean} compressed
 * @property {number} lines
 * @property {number | null} rank
 * @property {number | null} name_rank
 */

/**
 * How timestamps were completed: documented in FORMAT.md, written to manifest.json.
 * @typedef {object} ClockInfo
 * @property {number | null} year
 * @property {string} source
 * @property {number | null} utc_offset_minutes
 */

/**
 * @typedef {object} KeyStats
 * @property {number} [count]
 * @property {number} [payload_bytes]
 */

/**
 * One compile id: display form, folder form, first and last event time, event count.
 * @typedef {object} CompileIdEntry
 * @property {string} id
 * @property {string} dir
 * @property {string} first
 * @property {string} last
 * @property {number} events
 */

/**
 * @typedef {object} PayloadStats
 * @property {number} files
 * @property {number} bytes
 * @property {number} occurrences
 * @property {string} [root]
 */

/**
 * @typedef {object} GraphStats
 * @property {number} files
 * @property {number} bytes
 * @property {number} failed
 */

/**
 * @typedef {object} ProblemSummary
 * @property {number} total
 * @property {Record<string, number>} counts
 * @property {ProblemEntry[]} first
 */

/**
 * @typedef {object} ProblemEntry
 * @property {string} kind
 * @property {number} line
 * @property {string} message
 * @property {string | null} [file]
 */

export {};
