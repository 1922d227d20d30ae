// The explorer's landing page: open a trace from a picked or dropped folder (nothing leaves the
// page), a URL on this server, or the list of traces it serves.

import { FileSource, isObject, setTestHook } from '/lib/tlscope.js';
import { byId, messageOf, showError } from './dom.js';
import { start } from './view.js';

/** The traces `tlscope serve` lists (/api/traces), as links to open them. */
async function listServed() {
  if (!/^https?:$/.test(location.protocol)) return;
  const response = await fetch('/api/traces').catch(() => null);
  if (!response || !response.ok) return;
  const traces = await response.json().catch(() => []);
  if (!Array.isArray(traces) || !traces.length) return;
  const box = byId('served');
  box.appendChild(Object.assign(document.createElement('h2'), { textContent: 'Traces on this server' }));
  const ul = document.createElement('ul');
  for (const t of /** @type {unknown[]} */ (traces)) {
    if (!isObject(t) || typeof t.url !== 'string' || !t.url.startsWith('/')) continue;
    const a = document.createElement('a');
    a.href = `?trace=${encodeURIComponent(t.url)}`;
    const events = isObject(t.summary) ? t.summary.events : undefined;
    a.textContent = `${String(t.id)} (${events !== undefined ? `${String(events)} events` : 'not parsed yet'})`;
    const li = document.createElement('li');
    li.appendChild(a);
    ul.appendChild(li);
  }
  box.appendChild(ul);
}

/**
 * The files of a drop: a dropped folder is walked through the entries API (each file gets its
 * `relativePath` in it); dropped files are taken as they are.
 * @param {DataTransfer | null} dataTransfer
 * @returns {Promise<File[]>}
 */
function filesFromDrop(dataTransfer) {
  const entries = [...(dataTransfer ? dataTransfer.items : [])].flatMap((i) => {
    const entry = i.webkitGetAsEntry ? i.webkitGetAsEntry() : null;
    return entry ? [entry] : [];
  });
  /** @type {File[]} */
  const out = [];
  /**
   * @param {FileSystemEntry} entry
   * @param {string} prefix
   * @returns {Promise<void>}
   */
  const walk = (entry, prefix) =>
    new Promise((resolve) => {
      const done = () => resolve();
      // isFile / isDirectory say which interface the entry is (the entries API's own test).
      if (entry.isFile) {
        /** @type {FileSystemFileEntry} */ (entry).file((f) => {
          Object.defineProperty(f, 'relativePath', { value: prefix + f.name });
          out.push(f);
          done();
        }, done);
      } else if (entry.isDirectory) {
        const reader = /** @type {FileSystemDirectoryEntry} */ (entry).createReader();
        const more = () =>
          reader.readEntries(async (batch) => {
            if (!batch.length) return done();
            await Promise.all(batch.map((e) => walk(e, `${prefix}${entry.name}/`)));
            more();
          }, done);
        more();
      } else done();
    });
  return Promise.all(entries.map((e) => walk(e, ''))).then(() => out);
}

/** Show the landing page and wire its ways to open a trace. */
export function showLanding() {
  const landing = byId('landing');
  landing.hidden = false;
  byId('main').hidden = true;
  /** @param {File[]} files */
  const openFiles = (files) => {
    if (files.length) start(FileSource.fromFiles(files)).catch((err) => showError(messageOf(err)));
  };
  const pickFolder = byId('pick-folder', HTMLInputElement);
  const pickFiles = byId('pick-files', HTMLInputElement);
  pickFolder.addEventListener('change', () => openFiles([...(pickFolder.files || [])]));
  pickFiles.addEventListener('change', () => openFiles([...(pickFiles.files || [])]));
  byId('url-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const url = byId('url-input', HTMLInputElement).value.trim();
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
