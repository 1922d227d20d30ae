// Playwright global setup: `tlscope serve <corpus trace> --viewer .` on a free port (the viewer is
// this folder's dist/, so `npm run build` first). The URL it prints goes to the tests in
// TLSCOPE_URL; the returned function stops the server.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export default async function setup() {
  const tlscope = (process.env.TLSCOPE_CMD || 'tlscope').split(' ');
  const trace = execFileSync(tlscope[0], [...tlscope.slice(1), 'corpus', 'path', 'simple'], { encoding: 'utf8' }).trim();
  const server = spawn(tlscope[0], [...tlscope.slice(1), 'serve', trace, '--viewer', here, '--port', '0', '--no-browser'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((ok, fail) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error(`tlscope serve printed no address: ${seen}`)), 60_000);
    server.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const found = seen.match(/http:\/\/127\.0\.0\.1:\d+/);
      if (found) {
        clearTimeout(timer);
        ok(found[0]);
      }
    });
    server.on('exit', (code) => fail(new Error(`tlscope serve exited (${code}): ${seen}`)));
  });
  process.env.TLSCOPE_URL = url;
  process.env.VIEWER_NAME = here.split('/').pop();
  return () => {
    server.kill();
  };
}
