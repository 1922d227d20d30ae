// Generated from docs/schema/ by src/tlscope/viewers/schema-types.mjs (npm run dts): do not edit.
// The types of compiles.json (docs/FORMAT.md section 14), from docs/schema/compiles.schema.json.

/**
 * Top-level object of compiles.json.
 * @typedef {object} CompilesFile
 * @property {string} [format]
 * @property {number} format_version
 * @property {number} format_minor
 * @property {Record<string, string>} statuses
 * @property {string[]} [status_order]
 * @property {CompileEntry[]} compiles
 * @property {DistinctGraphBreak[]} graph_breaks
 * @property {Symbol[]} [symbols]
 * @property {FrameShapes[]} [input_shapes]
 * @property {ExportCall[]} [exports]
 * @property {string | null} [exports_note]
 * @property {AotInductorCompile[]} [aot_inductor]
 * @property {Vllm[]} [vllm]
 * @property {Dynamic | null} [dynamic]
 * @property {Settings | null} [settings]
 * @property {FirstAnswer[]} [first_answers]
 */

/**
 * One compile id: did it work, and what did it produce.
 * @typedef {object} CompileEntry
 * @property {string} id
 * @property {string} dir
 * @property {string} status
 * @property {string} frame_compile
 * @property {string | null} [restarted_as]
 * @property {boolean} [is_recompile]
 * @property {SourceLocation | null} [function]
 * @property {SourceLocation[]} [stack]
 * @property {SourceLocation | null} [user_frame]
 * @property {Timing | null} [time]
 * @property {Phase[]} [phases]
 * @property {GraphBreak[]} [graph_breaks]
 * @property {string[]} [restart_reasons]
 * @property {Recompile | null} [recompile]
 * @property {Failure | null} [failure]
 * @property {CacheOutcome[]} [cache]
 * @property {Metrics | null} [metrics]
 * @property {MetricsRecord[]} [metrics_records]
 * @property {TensorInput[]} [inputs]
 * @property {Graph[]} [graphs]
 * @property {PayloadRef[]} [code]
 * @property {PayloadRef | null} [guards]
 * @property {number} [events]
 * @property {number[][]} [raw_lines]
 * @property {number[]} [log_lines]
 * @property {string | null} [capture]
 * @property {string[][]} [collective_schedules]
 * @property {string} [module]
 * @property {string[]} [unfinished]
 * @property {Fix} [time_fix]
 * @property {number} [backward_s]
 */

/**
 * A place in user code.
 * @typedef {object} SourceLocation
 * @property {string | null} [file]
 * @property {number | null} [line]
 * @property {string | null} [name]
 * @property {string | null} [code]
 */

/**
 * When the frame compile ran and how long it took.
 * @typedef {object} Timing
 * @property {number | null} [start_us]
 * @property {number | null} [end_us]
 * @property {number | null} [duration_s]
 * @property {string | null} [source]
 */

/**
 * Time spent in one phase of the compilation, from the chromium events' begin/end pairs.
 * @typedef {object} Phase
 * @property {string} name
 * @property {number} seconds
 * @property {number} count
 */

/**
 * One `dynamo_graph_break_reason` artifact: where tracing stopped, and why.
 * @typedef {object} GraphBreak
 * @property {string} reason
 * @property {SourceLocation} user_frame
 * @property {PayloadRef} event
 * @property {SourceLocation | null} [stopped_at]
 * @property {SourceLocation[]} [stack]
 * @property {string[]} [hints]
 * @property {string | null} [docs_url]
 * @property {Fix} [fix]
 */

/**
 * An event with a payload, and where to find both.
 * @typedef {object} PayloadRef
 * @property {string} kind
 * @property {string | null} [payload_filename]
 * @property {number | null} [payload_size]
 * @property {number | null} [raw_line]
 * @property {number} log_line
 * @property {string} [name]
 */

/**
 * The one change to the user's code that avoids a recompile (or a specialisation) caused by a
size, or (since 1.44) by a module's int attribute, or (since 1.46) by a global number, or (since
1.47) by a list's length, or (since 1.49) by an optimizer's learning rate; or (since 1.49, a
compile's `time_fix`) that makes a slow compile faster; or (since 1.50, a graph break's `fix`)
that makes a graph break go away.
 * @typedef {object} Fix
 * @property {string} kind
 * @property {string} input
 * @property {string} source
 * @property {number | null} [dim]
 * @property {string} code
 * @property {SourceLocation | null} [where]
 * @property {string} why
 */

/**
 * Why this compile id exists although its frame was compiled before.
 * @typedef {object} Recompile
 * @property {string | null} [reason]
 * @property {GuardFailure[]} [guard_failures]
 * @property {RecommendedFailure | null} [recommended]
 * @property {string | null} [compared_with]
 * @property {InputChange[]} [changes]
 * @property {PayloadRef | null} [event]
 * @property {Fix | null} [fix]
 */

/**
 * One failed guard of an earlier cache entry, from the `recompile_reasons` artifact.
 * @typedef {object} GuardFailure
 * @property {string} cache_entry
 * @property {string} guard
 * @property {string} kind
 * @property {string} explanation
 * @property {string | null} [subject]
 * @property {string | null} [expected]
 * @property {string | null} [actual]
 * @property {SourceLocation | null} [user_frame]
 */

/**
 * Which guard failure explains a recompile best (FORMAT.md "Which failure is the cause").
 * @typedef {object} RecommendedFailure
 * @property {number} index
 * @property {string} why
 */

/**
 * A difference between this compile's inputs and those of the cache entry it replaces.
 * @typedef {object} InputChange
 * @property {string} input
 * @property {string} what
 * @property {string | null} before
 * @property {string | null} after
 * @property {string} [name]
 */

/**
 * Why a compilation failed (compilation_metrics `fail_*` fields).
 * @typedef {object} Failure
 * @property {string} type
 * @property {string} reason
 * @property {SourceLocation | null} [user_frame]
 * @property {PayloadRef | null} [traceback]
 * @property {string[]} [hints]
 * @property {string | null} [docs_url]
 */

/**
 * One cache lookup of this compile (an artifact named `<cache>_cache_<outcome>`).
 * @typedef {object} CacheOutcome
 * @property {string} cache
 * @property {string} outcome
 * @property {string | null} [key]
 * @property {string | null} [reason]
 * @property {PayloadRef} event
 * @property {number | null} [time_saved_s]
 * @property {number | null} [time_taken_s]
 */

/**
 * The numbers of the compile id's last forward `compilation_metrics` record (else its last record).
 * @typedef {object} Metrics
 * @property {number | null} [entire_frame_compile_time_s]
 * @property {number | null} [backend_compile_time_s]
 * @property {number | null} [inductor_compile_time_s]
 * @property {number | null} [code_gen_time_s]
 * @property {number | null} [dynamo_time_before_restart_s]
 * @property {number | null} [guard_count]
 * @property {number | null} [shape_env_guard_count]
 * @property {number | null} [graph_op_count]
 * @property {number | null} [graph_node_count]
 * @property {number | null} [graph_input_count]
 * @property {number | null} [cache_size]
 * @property {number | null} [accumulated_cache_size]
 * @property {boolean | null} [has_guarded_code]
 * @property {number} [records]
 * @property {number[]} [log_lines]
 */

/**
 * One metrics record of a compile id: one compilation PyTorch measured, forward or backward.

A compile id holds several when torch._dynamo.reset() made PyTorch number compiles from
`[0/0]` again, and when AOTAutograd compiled the backward (`bwd_compilation_metrics`).
 * @typedef {object} MetricsRecord
 * @property {string} kind
 * @property {number} log_line
 * @property {string} status
 * @property {number | null} [time_s]
 * @property {Failure | null} [failure]
 * @property {string | null} [co_name]
 * @property {string | null} [co_filename]
 * @property {number | null} [co_firstlineno]
 */

/**
 * A tensor input as Dynamo saw it (describe_tensor joined with describe_source).
 * @typedef {object} TensorInput
 * @property {string} source
 * @property {string | null} [dtype]
 * @property {string | null} [device]
 * @property {Array<number | string> | null} [size]
 * @property {Array<number | string> | null} [stride]
 * @property {boolean | null} [requires_grad]
 * @property {number[]} [dynamic_dims]
 * @property {number[]} [marked_dynamic]
 */

/**
 * A graph of this compile (Dynamo's, AOTAutograd's or Inductor's), with its size.
 * @typedef {object} Graph
 * @property {string} kind
 * @property {string | null} [payload_filename]
 * @property {number | null} [payload_size]
 * @property {number | null} [raw_line]
 * @property {number} log_line
 * @property {string} [name]
 * @property {number | null} [nodes]
 * @property {GraphInput[]} [inputs]
 * @property {Collective[]} [collectives]
 * @property {LineNodes} [busiest_line]
 */

/**
 * One input of a graph, as its readable code declares it.
 * @typedef {object} GraphInput
 * @property {string} name
 * @property {string | null} [type]
 */

/**
 * A collective a graph calls (`torch.ops._c10d_functional.<op>`), as its code prints it.
 * @typedef {object} Collective
 * @property {string} op
 * @property {string | null} [tensor]
 * @property {string[]} [args]
 */

/**
 * A source line of a graph and the nodes traced from it. Since 1.49.
 * @typedef {object} LineNodes
 * @property {string} file
 * @property {number} line
 * @property {string} code
 * @property {number} nodes
 */

/**
 * Graph breaks with the same reason headline at the same user location.
 * @typedef {object} DistinctGraphBreak
 * @property {string} reason
 * @property {SourceLocation} user_frame
 * @property {SourceLocation | null} [stopped_at]
 * @property {number} count
 * @property {string[]} compile_ids
 * @property {string[]} [hints]
 * @property {string | null} [docs_url]
 * @property {Fix} [fix]
 */

/**
 * A symbolic size or int of a compile (`create_symbol`, `create_unbacked_symbol`): where it
comes from and what constrains it (FORMAT.md "Where a dynamic dimension comes from").
 * @typedef {object} Symbol
 * @property {string | null} [compile_id]
 * @property {string} symbol
 * @property {string} [kind]
 * @property {string | null} [source]
 * @property {string | null} [input_source]
 * @property {string | null} [input]
 * @property {number | null} [dim]
 * @property {string | null} [what]
 * @property {string | null} [value]
 * @property {string | null} [range]
 * @property {SourceLocation | null} [entered_at]
 * @property {SourceLocation | null} [traced_at]
 * @property {Specialization[]} [specializations]
 * @property {string[]} [guards]
 * @property {number} [guard_count]
 * @property {string[]} [failed_in]
 * @property {Fix | null} [fix]
 * @property {string | null} [retrace_of]
 * @property {string | null} [why]
 * @property {string | null} [op]
 */

/**
 * A `symbolic_shape_specialization` event: the symbol was replaced by a constant.
 * @typedef {object} Specialization
 * @property {string | null} [value]
 * @property {string | null} [reason]
 * @property {SourceLocation | null} [user_frame]
 * @property {Fix | null} [fix]
 */

/**
 * Did the sizes change? A frame compiled more than once, its graphs' inputs per compile.
 * @typedef {object} FrameShapes
 * @property {string} frame
 * @property {SourceLocation | null} [function]
 * @property {string[]} compile_ids
 * @property {InputShapes[]} inputs
 */

/**
 * @typedef {object} InputShapes
 * @property {string} name
 * @property {string | null} [source]
 * @property {ShapeCell[]} cells
 */

/**
 * One graph input in one compile of a frame, and what changed since the compile before.
 * @typedef {object} ShapeCell
 * @property {string} compile_id
 * @property {string | null} [dtype]
 * @property {string[] | null} [shape]
 * @property {string[] | null} [stride]
 * @property {Array<number | string> | null} [sizes]
 * @property {number[]} [changed_dims]
 * @property {number[]} [changed_strides]
 * @property {boolean} [dtype_changed]
 * @property {boolean} [absent]
 * @property {string | null} [recompile]
 * @property {number | null} [reason_dim]
 * @property {number | null} [reason_stride]
 */

/**
 * One torch.export / draft_export call of the log and how it ended (FORMAT.md "Exports").
 * @typedef {object} ExportCall
 * @property {number} index
 * @property {string} status
 * @property {string} sentence
 * @property {number} log_line
 * @property {SourceLocation | null} [called_at]
 * @property {PayloadRef | null} [program]
 * @property {ExportIssue[]} [issues]
 * @property {string | null} [trace_id]
 */

/**
 * A reason an export failed or produced an unsound program (FORMAT.md "Exports").
 * @typedef {object} ExportIssue
 * @property {string} kind
 * @property {string} title
 * @property {string} sentence
 * @property {string | null} [expr]
 * @property {string | null} [code_expr]
 * @property {string | null} [result]
 * @property {string | null} [op]
 * @property {string | null} [reason]
 * @property {SourceLocation | null} [user_frame]
 * @property {ExportSymbol[]} [symbols]
 * @property {ExportFix | null} [fix]
 * @property {PayloadRef | null} [payload]
 * @property {number} [count]
 * @property {number} log_line
 * @property {number | null} [raw_line]
 * @property {string | null} [event_kind]
 */

/**
 * A symbol an export issue's expression names, and where the user's code made it.
 * @typedef {object} ExportSymbol
 * @property {string} symbol
 * @property {string | null} [name]
 * @property {string} [kind]
 * @property {SourceLocation | null} [created_at]
 */

/**
 * The change that removes an export issue.
 * @typedef {object} ExportFix
 * @property {string} [kind]
 * @property {string} code
 * @property {SourceLocation | null} [where]
 * @property {string} why
 * @property {string | null} [docs_url]
 */

/**
 * One AOT Inductor compile (`torch._inductor.aoti_compile_and_package`, `aot_compile`): a
`compile_fx_aot` span, logged with no compile id (FORMAT.md "AOT Inductor compiles"). Since 1.21.
 * @typedef {object} AotInductorCompile
 * @property {number} index
 * @property {string} status
 * @property {SourceLocation | null} [user_frame]
 * @property {SourceLocation[]} [stack]
 * @property {Timing | null} [time]
 * @property {Phase[]} [phases]
 * @property {Failure | null} [failure]
 * @property {CacheOutcome[]} [cache]
 * @property {Metrics | null} [metrics]
 * @property {MetricsRecord[]} [metrics_records]
 * @property {Graph[]} [graphs]
 * @property {PayloadRef[]} [code]
 * @property {number[]} [log_lines]
 */

/**
 * One vLLM compile of the log: a `vllm_compilation_config` artifact and what follows. Since 1.22.
 * @typedef {object} Vllm
 * @property {number} index
 * @property {string | null} [compile_id]
 * @property {Record<string, unknown>} [config]
 * @property {PayloadRef | null} [config_event]
 * @property {PayloadRef | null} [split_graph]
 * @property {VllmRange[]} [ranges]
 * @property {VllmPiecewise[]} [piecewise]
 */

/**
 * A compile range of one vLLM compile and its pieces. Since 1.22.
 * @typedef {object} VllmRange
 * @property {number | null} [start]
 * @property {number | null} [end]
 * @property {boolean} [single_size]
 * @property {boolean} [cudagraph_size]
 * @property {number} [logged]
 * @property {number | null} [total]
 * @property {string} [sentence]
 */

/**
 * One piece of vLLM's split graph compiled for one compile range (its
`vllm_piecewise_compile_start` artifact's fields, as logged). Since 1.22.
 * @typedef {object} VllmPiecewise
 * @property {number | null} [index]
 * @property {string | null} [submod]
 * @property {number | null} [total]
 * @property {number | null} [range_start]
 * @property {number | null} [range_end]
 * @property {boolean} [single_size]
 * @property {boolean} [cudagraph_size]
 * @property {PayloadRef | null} [event]
 * @property {PayloadRef[]} [graphs]
 * @property {PayloadRef[]} [code]
 */

/**
 * What made inputs dynamic that no line of the user's code marked, and the one setting that
makes them dynamic from the first compile (FORMAT.md "Dynamic without being asked"). Since 1.29.
 * @typedef {object} Dynamic
 * @property {DynamicSource[]} [sources]
 * @property {string | null} [recommended]
 * @property {string | null} [configured]
 * @property {PgoProfile | null} [profile]
 * @property {PgoProfile | null} [profile_written]
 * @property {string} sentence
 */

/**
 * An input torch made dynamic on its own: after a call changed it, or from a PGO profile.
Since 1.29.
 * @typedef {object} DynamicSource
 * @property {string} source
 * @property {string} input
 * @property {number[] | null} [dims]
 * @property {string} by
 * @property {string | null} [compile_id]
 * @property {SourceLocation | null} [function]
 * @property {string[]} [changed]
 * @property {string[]} [entries]
 * @property {SourceLocation[]} [shared_with]
 * @property {string | null} [left_out]
 * @property {string[]} [recompiled]
 */

/**
 * The PGO profile a run read at its first compile (torch/_dynamo/pgo.py). Since 1.29.
 * @typedef {object} PgoProfile
 * @property {string} artifact
 * @property {string} where
 * @property {string | null} [compile_id]
 * @property {string | null} [key]
 * @property {number} [functions]
 * @property {PayloadRef} event
 */

/**
 * Compiles of the run that ran under other settings than its first (a config changed
mid-run, `torch._dynamo.config.patch`, `torch.compile(dynamic=False)`, which turns automatic
dynamic shapes off for that function). Since 1.29.
 * @typedef {object} Settings
 * @property {string | null} [first_compile]
 * @property {SettingsGroup[]} [groups]
 * @property {string} sentence
 */

/**
 * Compiles that ran under the same settings, other than the first compile's. Since 1.29.
 * @typedef {object} SettingsGroup
 * @property {string[]} compile_ids
 * @property {Setting[]} settings
 * @property {number} [more]
 */

/**
 * One setting whose value differs from the run's first compile's. Since 1.29.
 * @typedef {object} Setting
 * @property {string} section
 * @property {string} key
 * @property {string | null} value
 * @property {string | null} first
 */

/**
 * One of the run's first answers (analyse/headline.py): a line, as `tlscope LOG` prints it
under its counts, and the compile it is about. Since 1.41.
 * @typedef {object} FirstAnswer
 * @property {string} kind
 * @property {string | null} [compile_id]
 * @property {string} text
 * @property {number | null} [seconds]
 * @property {string | null} [phase]
 */

export {};
