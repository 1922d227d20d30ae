// The baseline bench/viewers.py compares the explorer with: what tlparse-scope does. The whole
// raw.jsonl is fetched as text, split, each line parsed, and every event becomes a table row
// in the DOM. Same hook as a viewer: window.__tlscope {ready, loaded, total, firstRowsAt, loadedAt}.
const CONTEXT = new Set(['rank', 'compiled_autograd_id', 'frame_id', 'frame_compile_id', 'attempt', 'has_payload', 'stack',
  'severity', 'timestamp', 'pathname', 'thread', 'process', 'lineno', 'log_line', 'payload_filename', 'payload_size']);

async function main() {
  window.__tlscope = { ready: false, loaded: false, total: 0, startedAt: performance.now() };
  const trace = new URL(location.href).searchParams.get('trace');
  const text = await (await fetch(`${trace}raw.jsonl`)).text();
  const lines = text.split('\n').slice(1).filter(Boolean);
  const table = document.getElementById('t');
  const body = document.createElement('tbody');
  lines.forEach((line, i) => {
    const event = JSON.parse(line);
    const key = Object.keys(event).find((k) => !CONTEXT.has(k)) || '';
    const tr = document.createElement('tr');
    for (const value of [i + 1, event.timestamp, `${event.frame_id ?? '-'}/${event.frame_compile_id ?? '-'}`, key, JSON.stringify(event[key]).slice(0, 200)]) {
      const td = document.createElement('td');
      td.textContent = String(value);
      tr.appendChild(td);
    }
    body.appendChild(tr);
  });
  table.appendChild(body);
  requestAnimationFrame(() => {
    const now = performance.now();
    Object.assign(window.__tlscope, { ready: true, loaded: true, total: lines.length, firstRowsAt: now, loadedAt: now });
  });
}

main();
