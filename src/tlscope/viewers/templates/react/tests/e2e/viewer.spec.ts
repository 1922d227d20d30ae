import { expect, test, type Page } from '@playwright/test';

interface Hook {
  ready?: boolean;
  loaded?: boolean;
  total?: number;
  compileIds?: string[];
  filter?: string;
  error?: string;
}

const base = () => process.env.TLSCOPE_URL!;

async function hook(page: Page): Promise<Hook> {
  return page.evaluate(() => JSON.parse(JSON.stringify((window as unknown as { __tlscope?: Hook }).__tlscope ?? {})));
}

test('the viewer shows every event and compile id of a served trace', async ({ page, request }) => {
  const traces = await (await request.get(`${base()}/api/traces`)).json();
  const trace = traces[0];
  const manifest = await (await request.get(`${base()}${trace.url}manifest.json`)).json();
  const url = trace.viewer_url.replace('/viewers/explorer/', `/viewers/${process.env.VIEWER_NAME}/`);
  await page.goto(`${base()}${url}`);
  await expect.poll(async () => (await hook(page)).loaded, { timeout: 30_000 }).toBe(true);
  const h = await hook(page);
  expect(h.error).toBeUndefined();
  expect(h.total).toBe(manifest.raw_jsonl_events);
  expect(h.compileIds).toEqual(manifest.compile_ids.map((c: { id: string }) => c.id));
  await page.locator('.compile-ids li', { hasText: '[0/0]' }).first().click();
  // The hook names the filter only beside its total (src/App.tsx): no stale total to race with.
  await expect.poll(async () => (await hook(page)).filter, { timeout: 30_000 }).toBe('[0/0]');
  const filtered = (await hook(page)).total!;
  expect(filtered).toBeGreaterThan(0);
  expect(filtered).toBeLessThan(manifest.raw_jsonl_events);
  expect(page.url()).toContain('cid=%5B0%2F0%5D');
});
