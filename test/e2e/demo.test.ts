// The teaching demo's explanations end to end, in headless Chromium on SwiftShader WebGPU: the guide (a paragraph
// per role, the student's loss with a tooltip per term, the glossary) and the software-GPU warning, which covers no
// control; after one smoke run, the live ablation of the rollout shown (the teacher rescoring its tokens under
// every privileged context) and the base model beside the trained student on held-out questions; the whole run's
// time before a run (its units, then at the pace a run measured) and while it goes. Screenshots land in
// test/screenshots/.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, ready, SHOTS, type BrowserSession } from '../../scripts/browser.ts';
import { pageForSuite } from '../helpers/page-suite.ts';

describe.skipIf(!hasChromium)('the teaching demo explained (headless Chromium, SwiftShader)', () => {
  let s: BrowserSession;
  let page: Page;
  const errors = pageForSuite((session, p) => {
    s = session;
    page = p;
  });

  it('warns of the software GPU without covering a control, and explains the roles, the loss and the words', async () => {
    const warning = page.locator('#gpu-warning .gpu-warning');
    expect(await warning.textContent()).toMatch(/Software GPU \(SwiftShader\)/);
    const w = (await warning.boundingBox())!;
    for (const b of await page.locator('button:visible, select:visible, input:visible').all()) {
      const r = await b.boundingBox();
      if (!r) continue;
      const overlaps = r.x < w.x + w.width && w.x < r.x + r.width && r.y < w.y + w.height && w.y < r.y + r.height;
      expect.soft(overlaps, `a control under the warning at y=${r.y}`).toBe(false);
    }
    await page.click('[data-tab="guide"]');
    const guide = page.locator('#panel-guide');
    for (const role of ['examiner', 'student', 'teacher'])
      expect(await guide.locator(`[data-role="${role}"]`).textContent()).toMatch(new RegExp(role, 'i'));
    expect((await guide.locator('.loss').textContent())!.replace(/\s+/g, ' ')).toMatch(/LS = LGRPO \+ β·KLref \+ λ·D/);
    for (const t of ['grpo', 'beta', 'lambda', 'd'])
      expect((await guide.locator(`.loss-term[data-term="${t}"]`).getAttribute('title'))!.length).toBeGreaterThan(30);
    expect(await guide.locator('.glossary dt').allTextContents()).toEqual([
      'GRPO',
      'HRPO',
      '0<k<n',
      'tail bucket',
      'τ',
    ]);
    await page.screenshot({ path: `${SHOTS}guide.png`, fullPage: true });
  }, 60_000);

  it('scores a rollout under every privileged context, and sets the base model beside the trained student', async () => {
    await page.click('[data-tab="before-after"]');
    // Before any run: a clear refusal.
    await page.click('#panel-before-after button.compare');
    await expect.poll(() => page.locator('#panel-before-after .ba-error').textContent()).toMatch(/no run/);

    // Before a run: the whole run's units (no run of this model has measured a pace in this fresh profile).
    await page.selectOption('#preset', 'quick');
    expect(await page.locator('#preset-help').textContent()).toMatch(/quick: real rollouts with searches/);
    expect(await page.locator('#progress .run-eta').textContent()).toMatch(/whole run: 17 units/);
    await page.selectOption('#preset', 'smoke');
    expect(await page.locator('#progress .run-eta').textContent()).toMatch(/whole run: 5 units/);
    await page.click('button.start');
    // While it goes: the whole run's time left, from the units measured so far.
    await expect
      .poll(() => page.locator('#progress .run-eta').textContent(), { timeout: 300_000, interval: 250 })
      .toMatch(/whole run: about .+ to go/);
    // A smoke run takes under two minutes on SwiftShader, much longer on a loaded machine.
    await page.waitForFunction(() => ['stopped', 'finished'].includes(document.body.dataset.phase ?? ''), null, {
      timeout: 600_000,
      polling: 500,
    });
    await page.click('[data-tab="heatmap"]');
    await page.waitForSelector('#panel-heatmap .tok.policy', { timeout: 10_000 });
    await page.click('#panel-heatmap button.ablate');
    const rows = page.locator('#panel-heatmap .abl-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 120_000 }).toBe(5);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.mode))).toEqual([
      'none',
      'gt',
      'gt-hop',
      'partial',
      'full',
    ]);
    // Every mode's mean D is a number; the run's mode (full) is marked; one strip per mode, same tokens as above.
    for (const d of await rows.locator('.d-total').allTextContents()) expect(d).toMatch(/^-?[\d.e−-]+$/);
    expect(await page.locator('#panel-heatmap tr.run-mode').getAttribute('data-mode')).toBe('full');
    const strips = page.locator('#panel-heatmap .abl-strip');
    expect(await strips.count()).toBe(5);
    const shown = await page.locator('#panel-heatmap .heat .tokens .tok').count();
    for (const st of await strips.all()) expect(await st.locator('.tok').count()).toBe(shown);
    expect(await strips.first().locator('.tok.policy').first().getAttribute('style')).toMatch(/background:rgba/);
    await page.locator('#panel-heatmap .ablation').scrollIntoViewIfNeeded();
    await page.locator('#panel-heatmap .ablation').screenshot({ path: `${SHOTS}ablation.png` });

    await page.click('[data-tab="before-after"]');
    await page.click('#panel-before-after button.compare');
    const ba = page.locator('#panel-before-after .ba-table tbody tr');
    // The smoke preset's held-out set: one question per hop count (1 and 2).
    await expect.poll(() => ba.count(), { timeout: 120_000 }).toBe(2);
    for (const tr of await ba.all()) {
      expect(await tr.locator('td[data-who="base"] .verdict').textContent()).toMatch(/[✓✗]/);
      expect(await tr.locator('td[data-who="student"] .verdict').textContent()).toMatch(/[✓✗]/);
    }
    expect(await page.locator('#panel-before-after .summary').textContent()).toMatch(/base model \d+ right/);
    await page.locator('#panel-before-after').screenshot({ path: `${SHOTS}before-after.png` });
    expect(errors).toEqual([]);
  }, 900_000);

  it("estimates the next run's time before it starts, at the pace the smoke run measured here", async () => {
    await ready(page, s.url);
    await page.selectOption('#preset', 'smoke');
    expect(await page.locator('#progress .run-eta').textContent()).toMatch(/whole run: about .+ on this GPU \(5 units/);
    await page.locator('.run-panel').screenshot({ path: `${SHOTS}run-estimate.png` });
  }, 120_000);
});
