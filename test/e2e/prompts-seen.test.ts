// What each model saw, end to end in headless Chromium on SwiftShader WebGPU: after a smoke run, the heatmap view
// shows the student's prompt and the teacher's, the teacher's with its privileged block marked, at a desktop and a
// phone's width. Screenshots land in test/screenshots/.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, SHOTS } from '../../scripts/browser.ts';
import { pageForSuite } from '../helpers/page-suite.ts';

describe.skipIf(!hasChromium)('what each model saw (headless Chromium, SwiftShader)', () => {
  let page: Page;
  const errors = pageForSuite((_, p) => {
    page = p;
  });

  it('shows the student prompt and the teacher prompt with the privileged block, side by side', async () => {
    await page.selectOption('#preset', 'smoke');
    expect(await page.inputValue('#opt-privileged')).toBe('full');
    await page.click('button.start');
    await page.waitForFunction(() => ['stopped', 'finished'].includes(document.body.dataset.phase ?? ''), null, {
      timeout: 300_000,
      polling: 500,
    });
    await page.click('[data-tab="heatmap"]');
    await page.waitForSelector('#panel-heatmap .tok.policy', { timeout: 10_000 });
    const student = page.locator('#panel-heatmap .seen-col.student');
    const teacher = page.locator('#panel-heatmap .seen-col.teacher');
    const question = (await page.locator('#panel-heatmap .heat-q .q-text').textContent())!.trim();
    expect(await student.locator('h4').textContent()).toBe('Student saw');
    expect(await teacher.locator('h4').textContent()).toBe('Teacher saw');
    expect(await student.locator('.seen-question').textContent()).toContain(question);
    expect(await teacher.locator('.seen-question').textContent()).toContain(question);
    expect(await student.textContent()).not.toContain('Private notes');
    const block = (await teacher.locator('pre mark.seen-priv').textContent())!;
    expect(block).toContain('Private notes on how this question was made');
    expect(block).toContain('Source document:');
    // The same instructions head both prompts, and the note says the response tokens are shared.
    expect(await teacher.locator('.seen-instr').textContent()).toBe(await student.locator('.seen-instr').textContent());
    expect(await page.locator('#panel-heatmap .seen-shared').textContent()).toMatch(/same response tokens/);
    expect(await page.locator('#panel-heatmap').textContent()).not.toMatch(/not among the questions/);
    // Side by side on a desktop.
    const sb = (await student.boundingBox())!;
    const tb = (await teacher.boundingBox())!;
    expect(tb.x).toBeGreaterThan(sb.x + sb.width - 1);
    await page.locator('#panel-heatmap .prompts-seen').scrollIntoViewIfNeeded();
    await page.locator('#work').screenshot({ path: `${SHOTS}prompts-seen.png` });
    // At a phone's width: one under the other, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(300);
    const sp = (await student.boundingBox())!;
    const tp = (await teacher.boundingBox())!;
    expect(tp.y).toBeGreaterThan(sp.y + sp.height - 1);
    expect(tp.x + tp.width).toBeLessThanOrEqual(390);
    await teacher.locator('pre mark.seen-priv').scrollIntoViewIfNeeded();
    await page.waitForTimeout(500);
    await page.screenshot({ path: `${SHOTS}prompts-seen-phone.png` });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
  }, 420_000);
});
