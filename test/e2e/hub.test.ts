// The hub flow in headless Chromium against a local server with the Hugging Face URL layout (the real hub cannot
// be reached from the test machines) serving the embedded tiny model as test-org/piplay-tiny: the download size
// is shown before Start, the progress bar moves, a connection cut mid-way is resumed with a Range request, a
// reload loads the model from the browser's cache without downloading it again, and a wrong id is refused with
// a message that names it. Screenshots land in test/screenshots/.
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fmtBytes } from '../../src/ui/format.ts';
import { hasChromium, ready, startBrowserSession, type BrowserSession } from '../../scripts/browser.ts';
import { startHubServer, type HubServer } from '../helpers/hub-server.ts';

const SHOTS = new URL('../screenshots/', import.meta.url).pathname;
const MODEL = new URL('../../public/models/piplay-tiny/', import.meta.url).pathname;
const ID = 'test-org/piplay-tiny';

async function waitPhase(page: Page, want: string[], timeout: number): Promise<void> {
  await page.waitForFunction((w) => w.includes(document.body.dataset.phase ?? ''), want, { timeout, polling: 250 });
}

/** Chooses the hub id and waits for its report (a download size, or the reason it cannot be used). */
async function chooseHubModel(page: Page, id: string): Promise<string> {
  await page.fill('.hub-id', id);
  await page.press('.hub-id', 'Enter');
  await page.waitForFunction(
    () => {
      const box = document.querySelector('.model-estimate');
      return box?.querySelector('.download-size, .estimate.bad') !== null && box?.querySelector('.muted') === null;
    },
    null,
    { timeout: 60_000, polling: 100 },
  );
  return (await page.locator('.model-estimate').textContent()) ?? '';
}

/** Records every value the download progress bar shows, per file. */
async function recordProgress(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: [string, number][] = [];
    (window as unknown as { progressSeen: typeof seen }).progressSeen = seen;
    const box = document.querySelector('.model-download')!;
    new MutationObserver(() => {
      const bar = box.querySelector('progress');
      if (bar) seen.push([box.querySelector('label')?.textContent?.trim() ?? '', bar.value]);
    }).observe(box, { childList: true, subtree: true });
  });
}

describe.skipIf(!hasChromium)('hub downloads (headless Chromium, local hub server)', () => {
  let s: BrowserSession;
  let hub: HubServer;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // 64 KiB every 40 ms: the 1.6 MB weights take about a second; their first download is cut after ~0.8 MB.
    hub = await startHubServer({
      repos: { [ID]: MODEL },
      chunk: { bytes: 65536, ms: 40 },
      cutFirst: { 'model.safetensors': 800_000 },
    });
    s = await startBrowserSession();
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    await hub?.close();
  });

  it('shows the size, downloads with progress and resumes, loads from the cache after a reload', async () => {
    const page = await s.newPage();
    const address = `${s.url}?preset=smoke&hub=${encodeURIComponent(hub.url)}`;
    await ready(page, address);
    const sizes = hub.sizes(ID);
    const needed = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
    const total = needed.reduce((a, f) => a + sizes[f]!, 0);

    // The size first, from the listing: nothing but config.json is downloaded yet.
    const report = await chooseHubModel(page, ID);
    expect(report).toContain(`download ${fmtBytes(total)}`);
    expect(hub.requests.filter((r) => r.path.endsWith('/model.safetensors'))).toEqual([]);
    await page.screenshot({ path: `${SHOTS}hub-size.png` });

    await recordProgress(page);
    await page.click('button.start');
    await page.waitForSelector('.model-download progress', { timeout: 60_000 });
    await page.screenshot({ path: `${SHOTS}hub-download.png` });
    await waitPhase(page, ['running', 'finished'], 120_000);

    // The weights: cut mid-way, then the rest asked for from where the body broke off.
    const weights = hub.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/model.safetensors'));
    expect(weights.length).toBe(2);
    expect(weights[0]!.range).toBeUndefined();
    const resumedAt = Number(/^bytes=(\d+)-$/.exec(weights[1]!.range ?? '')?.[1]);
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThan(sizes['model.safetensors']!);
    // The bar moved: several distinct values for the weights, never going back.
    const seen = await page.evaluate(() => (window as unknown as { progressSeen: [string, number][] }).progressSeen);
    const bar = seen.filter(([label]) => label.includes('model.safetensors')).map(([, v]) => v);
    expect(new Set(bar).size).toBeGreaterThan(3);
    for (let i = 1; i < bar.length; i++) expect(bar[i]).toBeGreaterThanOrEqual(bar[i - 1]!);

    // A reload: the page says the model is cached, and Start loads it without a download.
    const before = hub.requests.filter((r) => r.path.includes('/resolve/')).length;
    await ready(page, address);
    const again = await chooseHubModel(page, ID);
    expect(again).toContain('download none');
    expect(again).toContain(`in this browser's cache`);
    await page.click('button.start');
    await waitPhase(page, ['running', 'finished'], 120_000);
    expect(hub.requests.filter((r) => r.path.includes('/resolve/')).length).toBe(before);
    await page.close();
  }, 600_000);

  it('names a wrong id and says what to do', async () => {
    const page = await s.newPage();
    await ready(page, `${s.url}?hub=${encodeURIComponent(hub.url)}`);
    const text = await chooseHubModel(page, 'test-org/no-such-model');
    expect(text).toMatch(/Not a usable Hugging Face model/);
    expect(text).toContain(`'test-org/no-such-model' was not found at ${hub.url}`);
    expect(text).toMatch(/check the id's owner and name/);
    await page.screenshot({ path: `${SHOTS}hub-wrong-id.png` });
    await page.close();
  }, 300_000);
});
