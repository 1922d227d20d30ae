// What both pages of the explorer share: element lookup and the error shown on the landing page.

import { setTestHook } from '/lib/tlscope.js';

export const byId = (id) => document.getElementById(id);

export function showError(message) {
  byId('landing').hidden = false;
  byId('main').hidden = true;
  byId('landing-error').textContent = message;
  byId('status').textContent = '';
  setTestHook({ error: message });
}
