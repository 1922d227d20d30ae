import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// `npm run dev` serves the viewer and passes trace and API requests to a running
// `tlscope serve` (TLSCOPE_URL, default http://127.0.0.1:8000), so relative trace URLs work.
const tlscope = process.env.TLSCOPE_URL || 'http://127.0.0.1:8000';

export default defineConfig({
  plugins: [react()],
  // Relative asset paths: dist/ works under any folder (tlscope serve's /viewers/<name>/,
  // GitHub Pages' /<repo>/).
  base: './',
  server: {
    proxy: {
      '/api': tlscope,
      '/traces': tlscope,
      '/lib': tlscope,
    },
  },
  test: {
    environment: 'jsdom',
    include: ['tests/unit/**/*.test.ts'],
    globalSetup: './tests/unit/corpus-setup.ts',
  },
});
