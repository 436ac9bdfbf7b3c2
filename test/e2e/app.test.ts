import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, startBrowserSession, type BrowserSession } from '../helpers/browser.ts';

const SHOTS = new URL('../screenshots/', import.meta.url).pathname;

describe.skipIf(!hasChromium)('browser app (headless Chromium, SwiftShader)', () => {
  let s: BrowserSession;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startBrowserSession();
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });

  it('starts the engine worker on WebGPU and computes a correct matmul', async () => {
    const page = await s.newPage();
    await page.goto(s.url);
    await page.waitForFunction(() => document.getElementById('gpu-status')?.dataset.selftest !== undefined, null, {
      timeout: 90_000,
    });
    expect(await page.locator('#gpu-status').getAttribute('data-selftest')).toBe('pass');
    expect(await page.locator('#gpu-status').getAttribute('class')).toContain('ok');
    await page.screenshot({ path: `${SHOTS}boot.png` });
    await page.close();
  }, 120_000);

  it('tells the user clearly when WebGPU is missing', async () => {
    const page = await s.newPage();
    await page.addInitScript(() => {
      delete (Navigator.prototype as { gpu?: unknown }).gpu;
    });
    await page.goto(s.url);
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toMatch(/WebGPU is not available.*chrome:\/\/flags/s);
    await page.screenshot({ path: `${SHOTS}no-webgpu.png` });
    await page.close();
  }, 60_000);
});
