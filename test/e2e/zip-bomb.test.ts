// A zip bomb imported in the page (headless Chromium): an archive of a few kilobytes whose three weight files
// declare 10 GiB in all is refused from its central directory in under a second, before a byte is inflated, and
// the renderer's memory (the page's and its worker's) does not grow.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, type BrowserSession } from '../../scripts/browser.ts';
import { pageForSuite } from '../helpers/page-suite.ts';
import { deflated, zipOf } from '../helpers/zip-bomb.ts';

/** Resident bytes of the browser's renderer processes (the page's, where its dedicated worker also runs). */
async function rendererBytes(s: BrowserSession): Promise<number> {
  const cdp = await s.browser.newBrowserCDPSession();
  const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as {
    processInfo: { type: string; id: number }[];
  };
  await cdp.detach();
  let bytes = 0;
  for (const p of processInfo.filter((x) => x.type === 'renderer')) {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.id}/status`, 'utf8'))?.[1];
    bytes += Number(rss ?? 0) * 1024;
  }
  return bytes;
}

describe.skipIf(!hasChromium)('zip import in the page (headless Chromium)', () => {
  let s: BrowserSession;
  let page: Page;
  const errors = pageForSuite((session, p) => {
    s = session;
    page = p;
  });

  it('refuses a 10 GiB-declared zip bomb in under a second without the memory growing', async () => {
    const zeros = deflated('x', new Uint8Array(2 ** 20));
    const bomb = zipOf(
      ['model-1.safetensors', 'model-2.safetensors', 'model-3.safetensors'].map((n) => ({
        ...zeros,
        name: `bomb/${n}`,
        size: 0xd5555555, // 3.33 GiB each, 10 GiB in all
      })),
    );
    expect(bomb.length).toBeLessThan(16 * 1024);
    const file = join(mkdtempSync(join(tmpdir(), 'piplay-bomb-')), 'bomb.zip');
    writeFileSync(file, bomb);
    // In the page: from the file input's change to the refusal shown, timed by the page's own clock.
    await page.evaluate(() => {
      const w = window as unknown as { importStart?: number; refusedAfter?: number };
      document.querySelector('#checkpoints .import-zip')!.addEventListener('change', () => {
        w.importStart = performance.now();
      });
      new MutationObserver(() => {
        if (w.importStart !== undefined && /declare 10240\.0 MiB/.test(document.body.textContent ?? '')) {
          w.refusedAfter ??= performance.now() - w.importStart;
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    const before = await rendererBytes(s);
    await page.locator('#checkpoints .import-zip').setInputFiles(file);
    await page.getByText(/declare 10240\.0 MiB in all, more than a model folder may hold/).waitFor({ timeout: 10_000 });
    const after = await rendererBytes(s);
    const ms = await page.evaluate(() => (window as unknown as { refusedAfter: number }).refusedAfter);
    console.log(
      `zip bomb refused after ${ms.toFixed(0)} ms; renderer memory ${((after - before) / 2 ** 20).toFixed(1)} MiB more`,
    );
    expect(ms).toBeLessThan(1000);
    expect(after - before).toBeLessThan(64 * 2 ** 20);
    expect(await page.locator('#checkpoints .ckpt', { hasText: 'bomb' }).count()).toBe(0);
    expect(errors).toEqual([]);
  }, 120_000);
});
