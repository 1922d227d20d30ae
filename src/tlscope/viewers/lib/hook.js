// The test hook every viewer sets (docs/VIEWERS.md): window.__tlscope = {ready, total,
// compileIds, ...}. `ready` turns true once the first view is drawn; tests wait for it.

/** Merge `fields` into window.__tlscope (created on first use) and return it. */
export function setTestHook(fields, win = globalThis.window) {
  const hook = win.__tlscope || { ready: false, total: 0, compileIds: [] };
  Object.assign(hook, fields);
  win.__tlscope = hook;
  return hook;
}
