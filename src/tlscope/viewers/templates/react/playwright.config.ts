import { defineConfig } from '@playwright/test';

// Browser tests drive a system chromium (Playwright's browser download is not needed):
// CHROMIUM, default /usr/bin/chromium. tests/e2e/serve-setup.ts starts `tlscope serve` with
// this viewer's dist/ on a free port.
export default defineConfig({
  testDir: 'tests/e2e',
  globalSetup: './tests/e2e/serve-setup.ts',
  timeout: 60_000,
  reporter: process.env.CI ? 'line' : 'list',
  use: {
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    },
  },
});
