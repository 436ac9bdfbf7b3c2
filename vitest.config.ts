import { defineConfig } from 'vitest/config';

// Tests by what they need, each set runnable on its own (`npm test -- --cpu`, `--gpu`, `--browser`):
// cpu: unit tests that need no GPU device (seconds); gpu: the unit tests that run kernels or models on a device
// (*.gpu.test.ts, on lavapipe without a GPU) and the integration tests, which run the commands; browser: the page
// in headless Chromium.
export default defineConfig({
  test: {
    // Each file gets its own process and GPU device; two CPU cores run two at a time.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: { name: 'cpu', include: ['test/unit/**/*.test.ts'], exclude: ['test/unit/**/*.gpu.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'gpu', include: ['test/unit/**/*.gpu.test.ts', 'test/integration/**/*.test.ts'] },
      },
      { extends: true, test: { name: 'browser', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
});
