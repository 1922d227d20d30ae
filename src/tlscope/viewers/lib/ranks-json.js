// Generated from docs/schema/ by src/tlscope/viewers/schema-types.mjs (npm run dts): do not edit.
// The types of ranks.json (docs/FORMAT.md section 16), from docs/schema/ranks.schema.json.

/**
 * Top-level object of ranks.json: the job view under the format's header (the landing
writer's `ranks_json` writes it so); what docs/schema/ranks.schema.json describes.
 * @typedef {object} RanksFile
 * @property {RankLine[]} ranks
 * @property {Divergence} divergence
 * @property {Stragglers | null} [stragglers]
 * @property {JobAnswers | null} [first_answers]
 * @property {string} [format]
 * @property {number} format_version
 * @property {number} format_minor
 */

/**
 * One rank at a glance, from its compiles.json.
 * @typedef {object} RankLine
 * @property {number} rank
 * @property {number} [compiles]
 * @property {number} [compile_time_s]
 * @property {number} [graph_breaks]
 * @property {number} [recompiles]
 * @property {number} [failures]
 * @property {number} [cache_hits]
 * @property {number} [cache_misses]
 */

/**
 * How the ranks' compiles differ; `diverges` false when every rank compiled the same ids.
 * @typedef {object} Divergence
 * @property {boolean} diverges
 * @property {RankGroup[]} [groups]
 * @property {PartialId[]} [not_on_every_rank]
 * @property {CollectiveMismatch[]} [collectives]
 * @property {MatrixRowGroup[]} [rows]
 * @property {GraphMismatch[]} [graphs]
 * @property {SettingsMismatch[]} [settings]
 * @property {FrameShift[]} [frames]
 * @property {CacheMismatch[]} [caches]
 * @property {SaidList[]} [said]
 */

/**
 * Ranks whose compile id sequences are identical.
 * @typedef {object} RankGroup
 * @property {number[]} ranks
 * @property {string[]} [only_here]
 * @property {string[]} [missing]
 * @property {string} sentence
 */

/**
 * A compile id that not every rank has, and the ranks that have it. When ranks number
functions differently (`Divergence.frames`), a function not every rank compiled, under its
column of the matrix (`Numbering.columns`, since 1.33).
 * @typedef {object} PartialId
 * @property {string} id
 * @property {number[]} ranks
 */

/**
 * A compile id whose Dynamo graphs call different collectives on different ranks, or (kind
`schedule`) whose Inductor schedules run different ones.
 * @typedef {object} CollectiveMismatch
 * @property {string} id
 * @property {CollectiveGroup[]} groups
 * @property {number} at
 * @property {string} sentence
 * @property {string} [kind]
 */

/**
 * Ranks whose graphs of one compile id call the same collectives.
 * @typedef {object} CollectiveGroup
 * @property {number[]} ranks
 * @property {string[]} [collectives]
 */

/**
 * A row of the job's rank x compile-id matrix: ranks with identical compile id sequences
whose graphs also call the same collectives.
 * @typedef {object} MatrixRowGroup
 * @property {number[]} ranks
 * @property {string[]} [collectives]
 * @property {string} sentence
 * @property {Record<string, string>} [columns]
 */

/**
 * A compile id whose Dynamo graphs differ between ranks.
 * @typedef {object} GraphMismatch
 * @property {string} id
 * @property {string} kind
 * @property {GraphGroup[]} groups
 * @property {string} sentence
 */

/**
 * Ranks whose Dynamo graphs of one compile id have the same structure.
 * @typedef {object} GraphGroup
 * @property {number[]} ranks
 * @property {string} function
 * @property {string | null} [payload]
 * @property {string} [id]
 */

/**
 * A group of ranks whose first compile ran under other settings than the most ranks', or
(with `id`) that ran one compile under other settings than the most ranks that compiled it.
 * @typedef {object} SettingsMismatch
 * @property {string} [id]
 * @property {number[]} ranks
 * @property {number[]} than
 * @property {ConfigChange[]} [changed]
 * @property {number} [more]
 * @property {string} sentence
 */

/**
 * One setting whose value differs between the two runs.
 * @typedef {object} ConfigChange
 * @property {string} section
 * @property {string} key
 * @property {string | null} a
 * @property {string | null} b
 */

/**
 * Ranks whose compiled functions differ from the reference ranks' (the most ranks').
 * @typedef {object} FrameShift
 * @property {number[]} ranks
 * @property {number[]} than
 * @property {FrameRef[]} [extra]
 * @property {FrameRef[]} [missing]
 * @property {number[][]} [renumbered]
 * @property {string} sentence
 */

/**
 * A frame as a sentence names it: its first compile id and its function.
 * @typedef {object} FrameRef
 * @property {string} id
 * @property {string} function
 */

/**
 * A compile whose cache lookups answered differently on different ranks.
 * @typedef {object} CacheMismatch
 * @property {string} id
 * @property {CacheGroup[]} groups
 * @property {string[]} caches
 * @property {boolean | null} [same_keys]
 * @property {string} sentence
 */

/**
 * Ranks whose lookups for one compile answered alike.
 * @typedef {object} CacheGroup
 * @property {number[]} ranks
 * @property {Record<string, Record<string, number>>} lookups
 */

/**
 * One list of the divergence as every view says it: which, and its title.
 * @typedef {object} SaidList
 * @property {string} list
 * @property {string} title
 */

/**
 * The rule, the median it was applied to and the ranks it picked (slowest first).
 * @typedef {object} Stragglers
 * @property {string} rule
 * @property {number} factor
 * @property {number} margin_s
 * @property {number} median_compile_time_s
 * @property {number | null} [median_rank]
 * @property {Straggler[]} [ranks]
 */

/**
 * @typedef {object} Straggler
 * @property {number} rank
 * @property {number} compile_time_s
 * @property {number} over_median_s
 * @property {number | null} ratio
 * @property {string | null} [why]
 */

/**
 * ranks.json's `first_answers`: the lines, in kind order, then the most ranks' first (the
lower ranks first among equals); `more`, the distinct lines left out (SHOWN a kind).
 * @typedef {object} JobAnswers
 * @property {JobAnswer[]} [lines]
 * @property {number} [more]
 */

/**
 * One line of the job's first answers: the rank line (compiles.json's `text`) and the ranks
that said it. Since 1.42.
 * @typedef {object} JobAnswer
 * @property {string} kind
 * @property {string | null} [compile_id]
 * @property {string} text
 * @property {number[]} ranks
 * @property {string} who
 */

export {};
