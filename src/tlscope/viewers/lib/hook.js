// The test hook every viewer sets (docs/VIEWERS.md): window.__tlscope = {ready, total,
// compileIds, ...}. `ready` turns true once the first view is drawn; tests wait for it.

/**
 * What a viewer tells its tests through window.__tlscope: `ready` once the first view is drawn,
 * the rows shown, the compile ids listed; and any other fields the viewer's tests read.
 * @typedef {{ ready: boolean, total: number, compileIds: string[], [field: string]: unknown }} TestHook
 */

/**
 * A window that may carry the test hook.
 * @typedef {Window & { __tlscope?: TestHook }} HookWindow
 */

/**
 * Merge `fields` into window.__tlscope (created on first use) and return it.
 * @param {Partial<TestHook>} fields
 * @param {HookWindow} [win]
 * @returns {TestHook}
 */
export function setTestHook(fields, win = globalThis.window) {
  const hook = win.__tlscope || { ready: false, total: 0, compileIds: [] };
  Object.assign(hook, fields);
  win.__tlscope = hook;
  return hook;
}
