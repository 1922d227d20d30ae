// The format files' types as JSDoc typedefs (lib/compiles-json.js, lib/manifest-json.js,
// lib/ranks-json.js...), from their JSON Schemas (docs/schema/, written from the Python model):
// the client and every viewer read the fields the format documents. Needs node alone (no npm
// install), so a change to a schema is caught wherever node runs (tests/test_js_check.py):
//
//   node src/tlscope/viewers/schema-types.mjs --write   (or --check: exit 1 naming stale files)
//
// dts.mjs (npm run dts) writes them too, before making the declarations from lib/.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const GENERATED = '// Generated from docs/schema/ by src/tlscope/viewers/schema-types.mjs (npm run dts): do not edit.\n';
const SCHEMAS = join(HERE, '..', '..', '..', 'docs', 'schema');
/** Generated module (in lib/) -> the schema it types, and the FORMAT.md section documenting it. */
export const SCHEMA_MODULES = new Map([
  ['compiles-json.js', { schema: 'compiles.schema.json', doc: 'compiles.json (docs/FORMAT.md section 14)' }],
  ['manifest-json.js', { schema: 'manifest.schema.json', doc: 'manifest.json (docs/FORMAT.md section 2)' }],
  ['graph-json.js', { schema: 'graph.schema.json', doc: 'graphs/<md5>.json (docs/FORMAT.md section 18)' }],
  ['provenance-json.js', { schema: 'provenance.schema.json', doc: 'provenance.json (docs/FORMAT.md section 19)' }],
  ['ranks-json.js', { schema: 'ranks.schema.json', doc: 'ranks.json (docs/FORMAT.md section 16)' }],
]);

/**
 * A JSON Schema (the subset msgspec writes) as a TypeScript type.
 * @param {Record<string, any>} node
 * @returns {string}
 */
function tsType(node) {
  if (node.$ref) return node.$ref.replace('#/$defs/', '');
  if (node.anyOf) return node.anyOf.map(tsType).join(' | ');
  switch (node.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = node.items ? tsType(node.items) : 'unknown';
      return /[ |]/.test(item) ? `Array<${item}>` : `${item}[]`;
    }
    case 'object':
      return node.additionalProperties ? `Record<string, ${tsType(node.additionalProperties)}>` : 'Record<string, unknown>';
    default:
      return 'unknown';
  }
}

/**
 * One schema definition as a JSDoc typedef. Fields not required are optional: a folder written
 * by an older tlscope lacks the fields added since (docs/FORMAT.md, Versioning).
 * @param {string} name
 * @param {Record<string, any>} def
 * @returns {string}
 */
function typedef(name, def) {
  const required = new Set(def.required || []);
  const lines = ['/**', ...(def.description ? [` * ${def.description}`] : []), ` * @typedef {object} ${name}`];
  for (const [field, node] of Object.entries(def.properties || {})) {
    const doc = node.description ? ` ${node.description}` : '';
    lines.push(` * @property {${tsType(node)}} ${required.has(field) ? field : `[${field}]`}${doc}`);
  }
  lines.push(' */');
  return lines.join('\n');
}

/**
 * A generated module's text, from its schema.
 * @param {{ schema: string, doc: string }} spec
 * @returns {string}
 */
export function schemaModule({ schema: file, doc }) {
  const schema = JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8'));
  const defs = Object.entries(schema.$defs).map(([name, def]) => typedef(name, def));
  const head = `${GENERATED}// The types of ${doc}, from docs/schema/${file}.\n`;
  return `${head}\n${defs.join('\n\n')}\n\nexport {};\n`;
}

/**
 * Every schema module: its path (relative to this folder) -> its text.
 * @returns {Map<string, string>}
 */
export function schemaModules() {
  return new Map([...SCHEMA_MODULES].map(([name, spec]) => [`lib/${name}`, schemaModule(spec)]));
}

/**
 * The schema modules that differ from what the schemas give (paths), after writing them if `write`.
 * @param {boolean} write
 * @returns {string[]}
 */
export function syncSchemaModules(write) {
  const stale = [];
  for (const [path, text] of schemaModules()) {
    let current = null;
    try {
      current = readFileSync(join(HERE, path), 'utf8');
    } catch {
      // missing: stale
    }
    if (current === text) continue;
    if (write) writeFileSync(join(HERE, path), text);
    else stale.push(path);
  }
  return stale;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = syncSchemaModules(!check);
  if (stale.length) {
    console.error(`stale schema types: ${stale.join(', ')} (run: node src/tlscope/viewers/schema-types.mjs --write; then npm ci && npm run dts in src/tlscope/viewers/ for lib/types/)`);
    process.exit(1);
  }
}
