// A fetch that answers from a folder on disk: the JS client reads a trace without a server.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function folderFetch(root: string): typeof fetch {
  return (async (input: RequestInfo | URL) => {
    const url = new URL(String(input));
    const file = join(root, decodeURIComponent(url.pathname));
    if (!existsSync(file)) return new Response('not found', { status: 404 });
    return new Response(readFileSync(file), { status: 200 });
  }) as typeof fetch;
}
