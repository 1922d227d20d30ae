// The explorer's landing page: open a trace from a picked or dropped folder (nothing leaves the
// page), a URL on this server, or the list of traces it serves.

import { FileSource, setTestHook } from '/lib/tlscope.js';
import { byId, showError } from './dom.js';
import { start } from './view.js';

async function listServed() {
  if (!/^https?:$/.test(location.protocol)) return;
  const response = await fetch('/api/traces').catch(() => null);
  if (!response || !response.ok) return;
  const traces = await response.json().catch(() => []);
  if (!Array.isArray(traces) || !traces.length) return;
  const box = byId('served');
  box.appendChild(Object.assign(document.createElement('h2'), { textContent: 'Traces on this server' }));
  const ul = document.createElement('ul');
  for (const t of traces) {
    if (!t || typeof t.url !== 'string' || !t.url.startsWith('/')) continue;
    const a = document.createElement('a');
    a.href = `?trace=${encodeURIComponent(t.url)}`;
    a.textContent = `${t.id} (${t.summary && t.summary.events !== undefined ? `${t.summary.events} events` : 'not parsed yet'})`;
    const li = document.createElement('li');
    li.appendChild(a);
    ul.appendChild(li);
  }
  box.appendChild(ul);
}

function filesFromDrop(dataTransfer) {
  // A dropped folder is walked through the entries API; dropped files are taken as they are.
  const entries = [...dataTransfer.items].map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
  const out = [];
  const walk = (entry, prefix) =>
    new Promise((resolve) => {
      if (entry.isFile) {
        entry.file((f) => {
          Object.defineProperty(f, 'relativePath', { value: prefix + f.name });
          out.push(f);
          resolve();
        }, resolve);
      } else {
        const reader = entry.createReader();
        const more = () =>
          reader.readEntries(async (batch) => {
            if (!batch.length) return resolve();
            await Promise.all(batch.map((e) => walk(e, `${prefix}${entry.name}/`)));
            more();
          }, resolve);
        more();
      }
    });
  return Promise.all(entries.map((e) => walk(e, ''))).then(() => out);
}

export function showLanding() {
  const landing = byId('landing');
  landing.hidden = false;
  byId('main').hidden = true;
  const openFiles = (files) => {
    if (files.length) start(FileSource.fromFiles(files)).catch((err) => showError(String(err.message || err)));
  };
  byId('pick-folder').addEventListener('change', (e) => openFiles([...e.target.files]));
  byId('pick-files').addEventListener('change', (e) => openFiles([...e.target.files]));
  byId('url-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const url = byId('url-input').value.trim();
    if (url) location.search = `?trace=${encodeURIComponent(url)}`;
  });
  document.addEventListener('dragover', (e) => {
    e.preventDefault();
    landing.classList.add('drag');
  });
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    landing.classList.remove('drag');
    filesFromDrop(e.dataTransfer).then(openFiles);
  });
  listServed();
  setTestHook({ ready: true, landing: true });
}
