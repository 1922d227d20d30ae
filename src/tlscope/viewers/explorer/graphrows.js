// The Graph view's model (graph.js draws it): one FX graph of graphs/<md5>.json (docs/FORMAT.md
// section 18) as the rows of a table, its inputs first and then its nodes, filtered by op, target
// and a search, and folded by the user line or the nn.Module the nodes came from. Pure: no DOM.

/** @typedef {import('/lib/tlscope.js').StoredGraph} StoredGraph */
/** @typedef {import('/lib/tlscope.js').FxSource} FxSource */
/** @typedef {import('/lib/tlscope.js').TensorMeta} TensorMeta */

/**
 * An input or a node of the graph, as the view lists it.
 * @typedef {object} Entry
 * @property {string} name
 * @property {string[]} names every name it defines (a tuple unpack defines several)
 * @property {string} op `input` for an input of `forward`
 * @property {string} target
 * @property {string[]} args
 * @property {string[]} users
 * @property {TensorMeta | null} meta
 * @property {FxSource | null} source
 * @property {string | null} module
 * @property {number} line 1-based line in the payload (0: not known)
 * @property {boolean} output read by the graph's `return`
 * @property {string[]} [cells] the texts of its row's cells, made when it is first drawn
 */

/**
 * A row of the table: an entry (by index), or the header of a fold.
 * @typedef {{ kind: 'entry', index: number } | { kind: 'group', id: string, label: string, size: number, open: boolean }} Row
 */

/**
 * What the rows show: `op` ('' all), `target` and `q` (substrings, case-insensitive), `fold`.
 * @typedef {{ op: string, target: string, q: string, fold: 'none' | 'source' | 'module' }} GraphFilter
 */

/**
 * The entries of a stored graph, inputs first; an input's users are the nodes reading it.
 * @param {StoredGraph} graph
 * @returns {{ entries: Entry[], byName: Map<string, number> }}
 */
export function graphEntries(graph) {
  const outputs = new Set(graph.outputs || []);
  const sources = graph.sources || [];
  /** @type {Map<string, string[]>} */
  const readers = new Map();
  for (const node of graph.nodes) {
    for (const arg of new Set(node.args)) {
      const list = readers.get(arg);
      if (list) list.push(node.name);
      else readers.set(arg, [node.name]);
    }
  }
  /** @type {Entry[]} */
  const entries = graph.inputs.map((i) => ({
    name: i.name, names: [i.name], op: 'input', target: '', args: [], users: readers.get(i.name) || [],
    meta: i.meta ?? null, source: null, module: i.module ?? null, line: 0, output: outputs.has(i.name),
  }));
  for (const n of graph.nodes) {
    const source = typeof n.source === 'number' && sources[n.source] ? sources[n.source] : null;
    entries.push({
      name: n.name, names: n.names, op: n.op, target: n.target, args: n.args, users: n.users,
      meta: n.meta ?? null, source, module: n.module ?? null, line: n.line ?? 0, output: outputs.has(n.name),
    });
  }
  /** @type {Map<string, number>} */
  const byName = new Map();
  entries.forEach((e, i) => e.names.forEach((name) => byName.has(name) || byName.set(name, i)));
  return { entries, byName };
}

/**
 * The shape and dtype as shown inline: `f32[s0, 4]`, `Sym(s0)`, the annotation otherwise.
 * @param {TensorMeta | null} meta
 * @returns {string}
 */
export function metaText(meta) {
  if (!meta) return '';
  if (meta.dtype === 'Sym') return `Sym(${meta.sym || ''})`;
  if (Array.isArray(meta.shape)) return `${meta.dtype || ''}[${meta.shape.join(', ')}]`;
  return meta.text;
}

/**
 * `file:line` of a user line, the file's last two path parts.
 * @param {FxSource} source
 * @returns {string}
 */
export function sourceText(source) {
  return `${source.file.split('/').slice(-2).join('/')}:${source.line}`;
}

/**
 * @param {Entry} e
 * @param {GraphFilter} f
 */
function matches(e, f) {
  if (f.op && e.op !== f.op) return false;
  if (f.target && !e.target.toLowerCase().includes(f.target.toLowerCase())) return false;
  if (!f.q) return true;
  const q = f.q.toLowerCase();
  const text = [e.name, e.target, e.meta ? e.meta.text : '', e.source ? `${e.source.file}:${e.source.line} ${e.source.code}` : '', e.module ?? ''];
  return text.some((t) => t.toLowerCase().includes(q));
}

/**
 * The fold an entry belongs to under `fold`, or null (shown as a row of its own).
 * @param {Entry} e
 * @param {GraphFilter['fold']} fold
 * @returns {{ key: string, label: string } | null}
 */
function foldOf(e, fold) {
  if (fold === 'source' && e.source) return { key: `${e.source.file}:${e.source.line}`, label: `${sourceText(e.source)}  ${e.source.code}` };
  if (fold === 'module' && e.module !== null) return { key: e.module, label: e.module || '(the compiled module)' };
  return null;
}

/**
 * The rows shown: the entries matching `filter`, consecutive ones of one fold under its header
 * (their rows only when the fold's id is in `open`); and the fold id of every entry in one.
 * @param {Entry[]} entries
 * @param {GraphFilter} filter
 * @param {Set<string>} open
 * @returns {{ rows: Row[], folds: Map<number, string> }}
 */
export function graphRows(entries, filter, open) {
  /** @type {Row[]} */
  const rows = [];
  /** @type {Map<number, string>} */
  const folds = new Map();
  /** @type {{ key: string, header: Row & { kind: 'group' } } | null} */
  let group = null;
  entries.forEach((e, index) => {
    if (!matches(e, filter)) return;
    const fold = filter.fold === 'none' ? null : foldOf(e, filter.fold);
    if (!fold) group = null;
    else if (!group || group.key !== fold.key) {
      const id = `${fold.key}@${index}`;
      group = { key: fold.key, header: { kind: 'group', id, label: fold.label, size: 0, open: open.has(id) } };
      rows.push(group.header);
    }
    if (group) {
      group.header.size += 1;
      folds.set(index, group.header.id);
      if (!group.header.open) return;
    }
    rows.push({ kind: 'entry', index });
  });
  return { rows, folds };
}

/**
 * The link to a user line: `base` (http(s) only) joined with the file's path relative to the
 * source root (a `$CWD/` prefix removed; absolute paths under `root` made relative), `#L<line>`.
 * @param {string | null} base
 * @param {string} root a local path prefix of the logged files ('' for none)
 * @param {FxSource} source
 * @returns {string | null}
 */
export function sourceHref(base, root, source) {
  if (!base || !/^https?:\/\//i.test(base)) return null;
  let path = source.file;
  if (path.startsWith('$CWD/')) path = path.slice(5);
  else if (root && path.startsWith(root.endsWith('/') ? root : `${root}/`)) path = path.slice(root.length).replace(/^\/+/, '');
  if (path.startsWith('/') || path.split('/').some((p) => p === '..' || p === '')) return null;
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return `${base.replace(/\/+$/, '')}/${encoded}#L${source.line}`;
}
