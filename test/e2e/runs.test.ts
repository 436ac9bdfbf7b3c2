// Runs as objects you can open, end to end in headless Chromium (SwiftShader WebGPU), in a fresh browser profile:
// the recorded example (public/examples/) opens from its control with no training and fills every view (its
// heatmap shows tokens, the teacher's prompt beside the student's), also in a browser without WebGPU; the charts overlay a second run (Dr. Zero's
// recording beside π-Play's); a finished smoke run, after a reload, opens again from its "View run" control with
// its rollouts and questions. Screenshots land in test/screenshots/.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, ready, SHOTS, type BrowserSession } from '../../scripts/browser.ts';
import { pageForSuite } from '../helpers/page-suite.ts';

async function tab(page: Page, id: string): Promise<void> {
  await page.click(`[data-tab="${id}"]`);
  await page.waitForTimeout(200);
}

/** The legend labels of the EM chart's bold curves. */
const emLegend = (page: Page) =>
  page
    .locator('#panel-charts .chart[data-chart="em"] .u-legend tr.u-series:not(.raw) th')
    .allTextContents()
    .then((t) => t.map((s) => s.trim()).filter((s) => s && !/raw$/.test(s)));

describe.skipIf(!hasChromium)('recorded and stored runs (headless Chromium, SwiftShader)', () => {
  let s: BrowserSession;
  let page: Page;
  const errors = pageForSuite((session, p) => {
    s = session;
    page = p;
  });

  it('opens the recorded example with one click and fills every view without training', async () => {
    const open = page.getByRole('button', { name: /recorded example/i });
    await expect.poll(() => open.isEnabled(), { timeout: 20_000 }).toBe(true);
    await open.click();
    await expect
      .poll(() => page.locator('#runs-bar .viewing').textContent())
      .toMatch(/viewing the recorded example: π-Play/);
    await tab(page, 'heatmap');
    await expect.poll(() => page.locator('#panel-heatmap .tok').count(), { timeout: 10_000 }).toBeGreaterThan(20);
    // What each model saw: the teacher's prompt holds the privileged block.
    expect(await page.locator('#panel-heatmap .seen-priv').count()).toBeGreaterThan(0);
    await page.locator('#panel-heatmap .tok').first().hover();
    await page.locator('#panel-heatmap').screenshot({ path: `${SHOTS}example-heatmap.png` });
    await tab(page, 'examiner');
    expect(await page.locator('#panel-examiner .question-card').count()).toBeGreaterThan(0);
    await tab(page, 'student');
    expect(await page.locator('#panel-student .turn').count()).toBeGreaterThan(0);
    await page.locator('#panel-student').screenshot({ path: `${SHOTS}example-student.png` });
    // No run was started: the page's own state is idle.
    expect(await page.evaluate(() => document.body.dataset.phase ?? 'idle')).toBe('idle');
  }, 60_000);

  it('opens the example also where the browser has no WebGPU', async () => {
    const bare = await s.newPage();
    await bare.addInitScript(() => delete (Navigator.prototype as { gpu?: unknown }).gpu);
    await bare.goto(s.url);
    await expect
      .poll(() => bare.locator('.alert h2').allTextContents(), { timeout: 30_000 })
      .toContain('WebGPU is not available');
    await bare.getByRole('button', { name: /recorded example/i }).click({ timeout: 30_000 });
    await bare.click('[data-tab="heatmap"]');
    await expect.poll(() => bare.locator('#panel-heatmap .tok').count(), { timeout: 10_000 }).toBeGreaterThan(20);
    await bare.screenshot({ path: `${SHOTS}example-no-webgpu.png` });
    await bare.close();
  }, 60_000);

  it('overlays a second run on the charts', async () => {
    await tab(page, 'charts');
    await page.waitForSelector('#panel-charts .chart[data-chart="em"]', { timeout: 10_000 });
    expect(await emLegend(page)).not.toContainEqual(expect.stringMatching(/Dr\. Zero/));
    const option = await page
      .locator('#panel-charts .overlay-select option', { hasText: 'Dr. Zero' })
      .getAttribute('value');
    await page.selectOption('#panel-charts .overlay-select', option!);
    await expect.poll(() => emLegend(page), { timeout: 10_000 }).toContainEqual(expect.stringMatching(/Dr\. Zero/));
    const legend = await emLegend(page);
    expect(legend.filter((l) => l.startsWith('all'))).toHaveLength(2);
    await page.locator('#panel-charts').screenshot({ path: `${SHOTS}example-overlay.png` });
    // The control beside π-Play: the same teacher without the privileged context, named short in the legend.
    const control = await page
      .locator('#panel-charts .overlay-select option', { hasText: 'self control' })
      .getAttribute('value');
    await page.selectOption('#panel-charts .overlay-select', control!);
    await expect.poll(() => emLegend(page), { timeout: 10_000 }).toContain('all · self control');
    await page.locator('#panel-charts').screenshot({ path: `${SHOTS}example-overlay-self.png` });
    await page.selectOption('#panel-charts .overlay-select', '');
    await page.click('#runs-bar button.back');
  }, 60_000);

  it("the guide shows what the example's experiment found, its verdicts and what they support", async () => {
    await tab(page, 'guide');
    const rows = page.locator('#guide-findings tr[data-finding]');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
    expect(await page.locator('#guide-findings tr[data-finding="piplay − self"]').count()).toBe(1);
    expect(await page.locator('#guide-findings .findings-summary').textContent()).toMatch(/self control/);
    await page.locator('#guide-findings').screenshot({ path: `${SHOTS}guide-findings.png` });
  }, 60_000);

  it('opens a finished smoke run again after a reload, with its rollouts', async () => {
    await ready(page, `${s.url}?preset=smoke`);
    await page.click('button.start');
    await page.waitForFunction(() => document.body.dataset.phase === 'finished', null, { timeout: 240_000 });
    const live = await page.evaluate(() => document.querySelector('[data-tab="student"] .count')?.textContent ?? '');
    expect(Number(live)).toBeGreaterThan(0);
    await ready(page, s.url);
    const row = page.locator('#checkpoints .ckpt', { hasText: 'finished' }).first();
    await row.getByRole('button', { name: /view run/i }).click();
    await expect.poll(() => page.locator('#runs-bar .viewing').textContent()).toMatch(/viewing the stored run: 'run-/);
    await tab(page, 'student');
    await expect.poll(() => page.locator('#panel-student .turn').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.evaluate(() => document.querySelector('[data-tab="student"] .count')?.textContent)).toBe(live);
    await tab(page, 'heatmap');
    expect(await page.locator('#panel-heatmap .tok').count()).toBeGreaterThan(0);
    await tab(page, 'charts');
    await page.waitForSelector('#panel-charts .chart[data-chart="em"]', { timeout: 10_000 });
    await page.locator('#panel-charts').screenshot({ path: `${SHOTS}stored-run.png` });
    expect(errors).toEqual([]);
  }, 360_000);
});
