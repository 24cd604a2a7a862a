import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

export default defineConfig({
  plugins: [WxtVitest()],
  test: {
    include: ['tests/**/*.test.ts'],
    environment: 'node',
    // One process, modules loaded once: jsdom, Readability and turndown dominate the run's time.
    isolate: false,
    fileParallelism: false,
  },
});
