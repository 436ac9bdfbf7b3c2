// A long run in the tab, at a small size: over many steps the page's JS heap (measured after a forced garbage
// collection) and the worker's GPU buffer pool stay flat once the first iteration has warmed them up, and the main
// thread stays responsive while the worker trains: the Long Tasks API's tasks (over 50 ms) take at most
// BLOCKED_SHARE of the training time, and none freezes the page for FROZEN_MS. (A profile of such a run finds the
// page's own JavaScript at about 0.3 s in 90 s of training; its few long tasks are the browser's layout and paint on
// a machine whose two cores the worker's software GPU keeps busy, where one of them can wait half a second for a
// core: a bound on each task would fail on the machine, a bound on their sum fails on a page that keeps blocking.)
import type { CDPSession, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../../scripts/browser.ts';
import { pageForSuite } from '../helpers/page-suite.ts';

interface Sample {
  /**
   * The page's JS heap after a garbage collection, and the worker's pool: allocated and live bytes, and the least
   * allocated since the previous sample (the pool's low-water mark: a trim between stages however brief).
   */
  heap: number;
  allocated: number;
  live: number;
  low: number;
}

/** Iterations of the run: the first warms the pool and the page up, the rest must hold flat. */
const ITERATIONS = 5;
/** The most of the training time the main thread may spend in long tasks. */
const BLOCKED_SHARE = 0.03;
/** A task this long is a frozen page, whatever else the machine does. */
const FROZEN_MS = 2000;

describe.skipIf(!hasChromium)('a long run in the tab', () => {
  let page: Page;
  const errors = pageForSuite((_s, p) => {
    page = p;
  });

  it('keeps the JS heap and the GPU buffer pool flat, and the main thread free of long tasks', async () => {
    const cdp: CDPSession = await page.context().newCDPSession(page);
    await page.evaluate(() => {
      const w = window as unknown as { __longTasks: { start: number; duration: number }[] };
      w.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__longTasks.push({ start: e.startTime, duration: e.duration });
      }).observe({ type: 'longtask' });
    });
    const sample = async (): Promise<Sample> => {
      await cdp.send('HeapProfiler.collectGarbage');
      const { usedSize } = await cdp.send('Runtime.getHeapUsage');
      type Stats = { allocatedBytes: number; liveBytes: number; lowAllocatedBytes: number };
      const pool = await page.evaluate(() =>
        (window as unknown as { __piplay: { poolStats(): Promise<Stats> } }).__piplay.poolStats(),
      );
      return { heap: usedSize, allocated: pool.allocatedBytes, live: pool.liveBytes, low: pool.lowAllocatedBytes };
    };

    await page.selectOption('#preset', 'smoke');
    await page.fill('#opt-iterations', String(ITERATIONS));
    await page.click('button.start');
    await page.waitForFunction(() => document.body.dataset.phase === 'running', null, { timeout: 60_000 });
    const runningAt = await page.evaluate(() => performance.now());
    const samples: { at: number; s: Sample }[] = [];
    const t0 = Date.now();
    await sample(); // starts the pool's first low-water span
    while ((await page.evaluate(() => document.body.dataset.phase)) === 'running') {
      samples.push({ at: Date.now() - t0, s: await sample() });
      await page.waitForTimeout(4000);
    }
    expect(await page.evaluate(() => document.body.dataset.phase)).toBe('finished');
    const finishedAt = await page.evaluate(() => performance.now());
    const all = await page.evaluate(
      () => (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks,
    );
    // The main thread's tasks while the worker trains.
    const longTasks = all.filter((t) => t.start >= runningAt && t.start <= finishedAt).map((t) => t.duration);
    console.log(
      `long run: ${samples.length} samples over ${((Date.now() - t0) / 1000).toFixed(0)} s; ` +
        `heap ${samples.map((x) => (x.s.heap / 2 ** 20).toFixed(1)).join(' ')} MiB; ` +
        `pool ${samples.map((x) => (x.s.allocated / 2 ** 20).toFixed(1)).join(' ')} MiB; ` +
        `its lows ${samples.map((x) => (x.s.low / 2 ** 20).toFixed(1)).join(' ')} MiB; ` +
        `long tasks ${longTasks.map((d) => d.toFixed(0)).join(' ') || 'none'} ms`,
    );
    expect(samples.length).toBeGreaterThan(8);
    // After the first third of the run (warm-up: the first iteration's shapes, the optimizers' first steps, the
    // page's first renders) neither grows: the pool reuses its buffers, the page keeps capped lists. The pool is
    // trimmed between stages, so its low points are what a run keeps (weights, optimizer state, caches): a leak raises
    // them step by step. Each sample carries the pool's low-water mark since the one before, so no low point is
    // missed; the warm part's second half may not sit above its first. The high points are one pass's transients,
    // which vary with the rollouts' shapes (a question's rollouts packed as one prefix tree are as long as they are
    // alike): they must stay within half again the warm-up's.
    const third = Math.floor(samples.length / 3);
    const warm = samples.slice(third);
    const first = warm[0]!.s;
    const early = samples.slice(0, third + 1).map((x) => x.s.allocated);
    const half = Math.floor(warm.length / 2);
    const lowBefore = Math.min(...warm.slice(0, half).map((x) => x.s.low));
    const lowAfter = Math.min(...warm.slice(half).map((x) => x.s.low));
    expect(lowAfter, 'the pool between stages').toBeLessThanOrEqual(lowBefore * 1.1 + 2 * 2 ** 20);
    for (const { at, s } of warm) {
      expect(s.allocated, `pool at ${at} ms`).toBeLessThanOrEqual(Math.max(...early) * 1.5);
      expect(s.heap, `heap at ${at} ms`).toBeLessThanOrEqual(first.heap * 1.25 + 2 * 2 ** 20);
    }
    const blocked = longTasks.reduce((a, d) => a + d, 0);
    expect(blocked, 'ms of long tasks while training').toBeLessThanOrEqual(BLOCKED_SHARE * (finishedAt - runningAt));
    expect(
      longTasks.filter((d) => d > FROZEN_MS),
      `main-thread tasks over ${FROZEN_MS} ms`,
    ).toEqual([]);
    expect(errors).toEqual([]);
  }, 900_000);
});
