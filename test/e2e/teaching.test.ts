// The teaching demo end to end, in headless Chromium on SwiftShader WebGPU: what a class sees of a run. A typed
// Hugging Face id is the model Start uses; one smoke run (three iterations, stopped in the third) is watched for a
// time left that never rises within a step, a tab bar that never moves and a pinned token that new rollouts do not
// replace; then its views are read: iteration numbers that agree, charts whose legends show the latest values, the
// EM axis by iteration, the heatmap's legend colours, visible whitespace tokens, its absolute log colour scale with
// the range, a KL histogram and the ranked disagreements. At a phone's width, the preset and Start come first and the
// run controls stay in view; a link carries the setup; the metrics download as JSONL and CSV. Screenshots land in
// test/screenshots/.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, ready, SHOTS, type BrowserSession } from '../../scripts/browser.ts';
import { pageForSuite } from '../helpers/page-suite.ts';

async function waitPhase(page: Page, want: string[], timeout: number): Promise<string> {
  await page.waitForFunction((w) => w.includes(document.body.dataset.phase ?? ''), want, { timeout, polling: 250 });
  return (await page.evaluate(() => document.body.dataset.phase))!;
}

async function tab(page: Page, id: string): Promise<void> {
  await page.click(`[data-tab="${id}"]`);
  await page.waitForTimeout(150);
}

const tabsTop = (page: Page) =>
  page.evaluate(() => Math.round(document.getElementById('tabs')!.getBoundingClientRect().top + window.scrollY));

describe.skipIf(!hasChromium)('teaching demo (headless Chromium, SwiftShader)', () => {
  let s: BrowserSession;
  let page: Page;
  const errors = pageForSuite((session, p) => {
    s = session;
    page = p;
  });

  it('puts the preset and Start in the first screen of a phone, with the run controls always in view', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await ready(page, s.url);
    const box = async (sel: string) => (await page.locator(sel).first().boundingBox())!;
    for (const sel of ['#preset', '#setup-form button.start-top']) {
      const b = await box(sel);
      expect.soft(b.y + b.height, `${sel} bottom on a 844 px screen`).toBeLessThanOrEqual(844);
    }
    // The advanced settings are folded.
    expect.soft(await page.locator('#setup-form details:not([open]) [name="temperature"]').count()).toBe(1);
    // The run controls stay in one place on screen wherever the page is scrolled.
    const before = await box('#run-controls button.start');
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await page.waitForTimeout(200);
    const after = await box('#run-controls button.start');
    expect.soft(after.y, 'run controls after scrolling').toBe(before.y);
    expect.soft(after.y + after.height).toBeLessThanOrEqual(844);
    expect.soft(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}phone.png` });
    await page.setViewportSize({ width: 1280, height: 800 });
    await ready(page, s.url);
  }, 120_000);

  it('starts the Hugging Face id typed in the field, also one edited after "check"', async () => {
    // Typed, never checked: offline here, so the error must name this id (not run the embedded model).
    await page.fill('.hub-id', 'someone/typed-model');
    await page.click('button.start');
    await expect
      .poll(() => page.locator('.run-error').textContent(), { timeout: 60_000 })
      .toMatch(/someone\/typed-model/);
    expect(await page.evaluate(() => document.body.dataset.phase ?? 'idle')).not.toBe('running');
    // Checked, then edited: Start uses the edited id.
    await page.fill('.hub-id', 'someone/first-model');
    await page.click('.hub-check');
    await expect
      .poll(() => page.locator('.model-estimate').textContent(), { timeout: 60_000 })
      .toMatch(/someone\/first-model/);
    await page.fill('.hub-id', 'someone/edited-model');
    await page.click('button.start');
    await expect
      .poll(() => page.locator('.run-error').textContent(), { timeout: 60_000 })
      .toMatch(/someone\/edited-model/);
    expect(await page.locator('.run-error').textContent()).not.toMatch(/first-model/);
    await page.screenshot({ path: `${SHOTS}hub-typed.png` });
    await page.fill('.hub-id', '');
    await page.check('#mk-embedded');
  }, 180_000);

  it('takes a setup from the page address and keeps the address in step with the form', async () => {
    await ready(page, `${s.url}?preset=smoke&iterations=2&lambda=0.1,0.03&privileged=gt&colour=red`);
    expect(await page.inputValue('#preset')).toBe('smoke');
    expect(await page.inputValue('#opt-iterations')).toBe('2');
    expect(await page.inputValue('#opt-lambda')).toBe('0.1,0.03');
    expect(await page.inputValue('#opt-privileged')).toBe('gt');
    expect(await page.locator('.run-error').textContent()).toMatch(/colour: not a setting/);
    await page.fill('#opt-iterations', '4');
    await page.press('#opt-iterations', 'Tab');
    const search = await page.evaluate(() => location.search);
    expect(search).toMatch(/^\?preset=smoke&/);
    expect(search).toMatch(/iterations=4/);
    expect(search).toMatch(/lambda=0\.1,0\.03/);
    expect(search).not.toMatch(/colour/);
    await page.goto(s.url);
  }, 120_000);

  it('watches a smoke run: time left never rises within a step, the tab bar never moves', async () => {
    await ready(page, s.url);
    const top = await tabsTop(page);
    // An error line beside the run controls.
    await page.selectOption('#preset', 'smoke');
    await page.fill('#opt-iterations', '0');
    await page.click('button.start');
    await expect.poll(() => page.locator('.run-error').textContent(), { timeout: 5_000 }).toMatch(/iterations/);
    expect.soft(await tabsTop(page), 'tab bar after an error line').toBe(top);
    await page.fill('#opt-iterations', '3');
    await page.fill('#opt-lambda', '0.1,0.03,0.01');
    // Every render of the progress line: stage, iteration, units done and the time left, and where the tabs are.
    await page.evaluate(() => {
      const seen: { key: string; eta: number | null; top: number }[] = [];
      (window as unknown as { __seen: typeof seen }).__seen = seen;
      const secs = (t: string) => {
        const m = /≈ (?:(\d+)h )?(?:(\d+)m )?(?:(\d+)s)? left/.exec(t);
        return m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : null;
      };
      const el = document.getElementById('progress')!;
      new MutationObserver(() => {
        const key = [
          el.querySelector('.stage')?.textContent,
          el.querySelector('.iter')?.textContent,
          el.querySelector('.count')?.textContent?.split(' · ')[0],
        ].join('|');
        const top = Math.round(document.getElementById('tabs')!.getBoundingClientRect().top + window.scrollY);
        seen.push({ key, eta: secs(el.querySelector('.eta')?.textContent ?? ''), top });
      }).observe(el, { childList: true, subtree: true, characterData: true });
    });
    await page.click('button.start');
    await waitPhase(page, ['running'], 60_000);
    // A token pinned in iteration 1's first rollout stays in view while iteration 2's rollouts arrive.
    const students = () =>
      page.evaluate(() => Number(document.querySelector('[data-tab="student"] .count')?.textContent || 0));
    await expect.poll(students, { timeout: 180_000, interval: 250 }).toBeGreaterThan(0);
    await tab(page, 'heatmap');
    await page.waitForSelector('#panel-heatmap .tok.policy', { timeout: 10_000 });
    const first = await students();
    const rolloutShown = await page.locator('#panel-heatmap .rollout-select option:checked').textContent();
    await page.locator('#panel-heatmap .tok.policy').nth(2).click();
    const pinnedDetail = await page.locator('#panel-heatmap .token-detail').textContent();
    expect(pinnedDetail).toMatch(/pinned/i);
    expect(await page.locator('#panel-heatmap .tok.pinned').getAttribute('data-i')).toBe(
      await page.locator('#panel-heatmap .tok.policy').nth(2).getAttribute('data-i'),
    );
    // The pointer elsewhere does not replace it.
    await page.locator('#panel-heatmap .tok.policy').nth(0).hover();
    expect(await page.locator('#panel-heatmap .token-detail').textContent()).toBe(pinnedDetail);
    await expect.poll(students, { timeout: 180_000, interval: 250 }).toBeGreaterThan(first);
    await page.waitForTimeout(500);
    expect
      .soft(
        await page.locator('#panel-heatmap .rollout-select option:checked').textContent(),
        'the pinned rollout stays selected',
      )
      .toBe(rolloutShown);
    expect
      .soft(await page.locator('#panel-heatmap .token-detail').textContent(), 'the pinned token stays in the detail')
      .toBe(pinnedDetail);
    expect.soft(await page.locator('#panel-heatmap .tok.pinned').count()).toBe(1);
    await page.locator('#work').screenshot({ path: `${SHOTS}teaching-pinned.png` });
    // Esc unpins; arrow keys still move the inspected token.
    await page.locator('#panel-heatmap .tok.pinned').focus();
    await page.keyboard.press('Escape');
    expect(await page.locator('#panel-heatmap .tok.pinned').count()).toBe(0);
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.i)).toBe(
      await page.locator('#panel-heatmap .tok.active').getAttribute('data-i'),
    );
    // Stop in the third iteration (Stop checkpoints, so the reload below offers to resume).
    await page.waitForFunction(
      () => /iteration 3 of 3/.test(document.getElementById('progress')?.textContent ?? ''),
      null,
      { timeout: 240_000, polling: 250 },
    );
    await page.click('button.stop');
    await waitPhase(page, ['stopped', 'finished'], 240_000);
    const seen = await page.evaluate(
      () => (window as unknown as { __seen: { key: string; eta: number | null; top: number }[] }).__seen,
    );
    expect(seen.length).toBeGreaterThan(5);
    const rises = seen.filter(
      (v, i) =>
        i > 0 && v.key === seen[i - 1]!.key && v.eta !== null && seen[i - 1]!.eta !== null && v.eta > seen[i - 1]!.eta!,
    );
    expect.soft(rises, 'time left rising within a step').toEqual([]);
    expect.soft([...new Set(seen.map((v) => v.top))], 'tab bar positions while running').toEqual([top]);
  }, 400_000);

  it('shows the run: iteration numbers that agree, the latest values in the legends, EM by iteration', async () => {
    // Progress bar, checkpoint row and the page's own checkpoint log line count iterations from 1.
    expect.soft(await page.locator('#progress').textContent()).toMatch(/iteration 3 of 3/);
    const row = page.locator('#checkpoints .ckpt').first();
    await row.waitFor({ timeout: 10_000 });
    expect.soft(await row.textContent()).toMatch(/next: iteration 3,/);
    await tab(page, 'log');
    expect.soft(await page.locator('#panel-log').textContent()).toMatch(/continues at iteration 3,/);
    await tab(page, 'charts');
    await page.waitForSelector('#panel-charts .chart[data-chart="em"] canvas', { timeout: 10_000 });
    await page.waitForTimeout(700);
    // Legends show values without hovering: the latest point of each series.
    const values = await page.$$eval(
      '#panel-charts .main-charts .chart .u-legend tr.u-series:not(.raw) td.u-value',
      (els) => els.map((e) => e.textContent ?? ''),
    );
    expect(values.length).toBeGreaterThan(4);
    expect
      .soft(
        values.filter((v) => /^\s*(–|--)?\s*$/.test(v)),
        'legend values shown as – before hovering',
      )
      .toEqual([]);
    // The EM chart's x is the iteration an evaluation followed.
    const emX = await page.locator('#panel-charts .chart[data-chart="em"] .u-legend tr.u-series').first().textContent();
    expect.soft(emX).toMatch(/iteration 2 \(latest\)/);
    expect.soft(emX).not.toMatch(/evaluation/);
    await page.locator('#work').screenshot({ path: `${SHOTS}teaching-charts.png` });
    // Every point as JSONL and CSV.
    for (const kind of ['jsonl', 'csv']) {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click(`#panel-charts button[data-export="${kind}"]`),
      ]);
      expect(download.suggestedFilename()).toBe(`metrics.${kind}`);
      const text = readFileSync((await download.path())!, 'utf8');
      if (kind === 'jsonl') {
        const rows = text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { series: string; iteration: number });
        expect(rows.some((r) => r.series === 'eval/em' && r.iteration === -1)).toBe(true);
        expect(rows.some((r) => r.series === 'student/lambda')).toBe(true);
      } else expect(text.split('\n')[0]).toBe('series,x,iteration,step,value');
    }
  });

  it('shows the heatmap: legend words in the colours they name, whitespace tokens visible', async () => {
    await tab(page, 'heatmap');
    await page.waitForSelector('#panel-heatmap .tok.policy', { timeout: 10_000 });
    await page.check('input[name="heat-mode"][value="diff"]');
    // The words "blue" and "red" of the legend, in the colour each names.
    const rgb = (word: string) =>
      page
        .locator('#panel-heatmap .legend span', { hasText: new RegExp(`^${word}$`) })
        .evaluate((e) => getComputedStyle(e).color.match(/\d+/g)!.map(Number));
    const [br, bg, bb] = await rgb('blue');
    expect.soft(bb > br + 60 && bb > bg + 30, `"blue" printed in rgb(${br}, ${bg}, ${bb})`).toBe(true);
    const [rr, rg, rb] = await rgb('red');
    expect.soft(rr > rg + 60 && rr > rb + 60, `"red" printed in rgb(${rr}, ${rg}, ${rb})`).toBe(true);
    // Every chip and top-K entry shows something, across the tokens of several rollouts.
    const blank: string[] = [];
    const options = await page.locator('#panel-heatmap .rollout-select option').count();
    for (let o = 0; o < Math.min(options, 4); o++) {
      await page.selectOption('#panel-heatmap .rollout-select', { index: o });
      const chips = await page.$$eval('#panel-heatmap .jump', (els) =>
        els.map((e) => e.querySelector('.chip-text')?.textContent ?? e.firstChild?.textContent ?? ''),
      );
      blank.push(...chips.filter((t) => t.trim() === '').map((t) => `chip ${JSON.stringify(t)}`));
      const n = await page.locator('#panel-heatmap .tok.policy').count();
      for (let i = 0; i < Math.min(n, 12); i++) {
        await page.locator('#panel-heatmap .tok.policy').nth(i).hover();
        const texts = await page.$$eval('#panel-heatmap .token-detail code', (els) =>
          els.map((e) => e.textContent ?? ''),
        );
        blank.push(...texts.filter((t) => t.trim() === '').map((t) => `top-K ${JSON.stringify(t)}`));
      }
    }
    expect.soft([...new Set(blank)], 'blank token texts').toEqual([]);
    await page.locator('#work').screenshot({ path: `${SHOTS}teaching-heatmap.png` });
  }, 120_000);

  it('colours the heatmap on one absolute log scale, states its range, shows a KL histogram and the ranking', async () => {
    await page.check('input[name="heat-mode"][value="kl"]');
    const options = await page.locator('#panel-heatmap .rollout-select option').count();
    const off: string[] = [];
    const ranges = new Set<string>();
    for (let o = 0; o < Math.min(options, 4); o++) {
      await page.selectOption('#panel-heatmap .rollout-select', { index: o });
      // Each token's opacity follows its own KL on the fixed scale 1e−4 .. 1 nat, whatever the rest of the rollout.
      const toks = await page.$$eval('#panel-heatmap .tok.policy', (els) =>
        els.map((e) => ({
          kl: Number(/KL (\S+)/.exec(e.getAttribute('title') ?? '')![1]!.replace('−', '-')),
          a: Number(/rgba\([^)]*, ([\d.]+)\)/.exec(e.getAttribute('style') ?? '')![1]),
        })),
      );
      for (const t of toks) {
        const pos = t.kl <= 1e-4 ? 0 : t.kl >= 1 ? 1 : Math.log(t.kl / 1e-4) / Math.log(1e4);
        if (Math.abs(t.a - (0.04 + 0.86 * pos)) > 0.02) off.push(`KL ${t.kl} drawn at opacity ${t.a}`);
      }
      ranges.add(
        await page
          .locator('#panel-heatmap .scale')
          .evaluate((e) => `${e.getAttribute('data-lo')}..${e.getAttribute('data-hi')}`),
      );
      expect.soft(await page.locator('#panel-heatmap .scale-ticks').textContent()).toMatch(/1e−4.*0\.01.*1/);
      // The histogram counts every student token once.
      const counts = await page.$$eval('#panel-heatmap .kl-hist .hist-bin', (els) =>
        els.map((e) => Number(e.getAttribute('data-count'))),
      );
      expect.soft(counts.reduce((a, b) => a + b, 0)).toBe(toks.length);
      // "Largest disagreements" ranked 1, 2, ... by KL.
      const chips = await page.$$eval('#panel-heatmap .jump', (els) =>
        els.map((e) => ({
          rank: Number(e.getAttribute('data-rank')),
          kl: Number((e.querySelector('small')?.textContent ?? '').replace('−', '-')),
        })),
      );
      expect.soft(chips.map((c) => c.rank)).toEqual(chips.map((_, i) => i + 1));
      expect.soft(chips.every((c, i) => i === 0 || c.kl <= chips[i - 1]!.kl)).toBe(true);
    }
    expect.soft(off, 'tokens off the absolute scale').toEqual([]);
    expect.soft([...ranges]).toEqual(['0.0001..1']);
    await page.check('input[name="heat-mode"][value="diff"]');
    expect.soft(await page.locator('#panel-heatmap .top-kl .jump').count()).toBeGreaterThan(0);
    await page.check('input[name="heat-mode"][value="kl"]');
    await page.locator('#panel-heatmap .tok.policy').first().hover();
    await page.locator('#work').screenshot({ path: `${SHOTS}teaching-scale.png` });
    // The rollout as a PNG (kept beside the screenshots to look at).
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#panel-heatmap button.heat-png')]);
    expect(download.suggestedFilename()).toMatch(/^heatmap-iteration\d+-step\d+-kl\.png$/);
    const png = readFileSync((await download.path())!);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.length).toBeGreaterThan(1000);
    await download.saveAs(`${SHOTS}heatmap-export.png`);
  });

  it('keeps the tab bar still under the resume banner after a reload', async () => {
    const top = await tabsTop(page);
    await ready(page, s.url);
    await page.getByText('A run can be resumed').waitFor({ timeout: 20_000 });
    expect.soft(await tabsTop(page), 'tab bar under the resume banner').toBe(top);
    await page.screenshot({ path: `${SHOTS}resume-banner.png` });
    expect(errors).toEqual([]);
  });
});
