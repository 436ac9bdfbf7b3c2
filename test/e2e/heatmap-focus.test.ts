// The heatmap's keyboard focus in headless Chromium, on the app's own page and styles: a HeatmapPanel mounted below
// a tall spacer, fed rollouts by the test. Two ways the token a person is on could be taken from them:
// - focusing a token scrolls the page, and Chromium then sends a mouseover to whatever token lies under the still
//   pointer: that is content moving, not the person pointing, and must not move the detail;
// - a live run adds rollouts while a person reads one with the arrow keys: the view must keep that rollout and
//   the focus, and follow the newest again once the focus leaves the tokens.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, type BrowserSession } from '../../scripts/browser.ts';
import { pageForSuite } from '../helpers/page-suite.ts';

/** Mounts a panel showing one long rollout ('rollout 0'); window.__heat.add() appends the next rollout. */
async function mount(page: Page): Promise<void> {
  // The panel's module, as the dev server serves it to the app.
  await page.addScriptTag({
    type: 'module',
    content: "import { HeatmapPanel } from '/src/ui/panels/heatmap.ts'; window.__HeatmapPanel = HeatmapPanel;",
  });
  await page.waitForFunction(() => '__HeatmapPanel' in window);
  await page.evaluate(() => {
    const HeatmapPanel = (
      window as unknown as { __HeatmapPanel: typeof import('../../src/ui/panels/heatmap.ts').HeatmapPanel }
    ).__HeatmapPanel;
    const rollout = (n: number) => ({
      iteration: 0,
      step: n,
      question: `rollout ${n}`,
      gold: 'x',
      hops: 1,
      answer: 'x',
      reward: 1,
      advantage: 0,
      searches: [],
      tokens: Array.from({ length: 900 }, (_, i) => ({
        id: i,
        text: ` w${i}`,
        policy: 1 as const,
        studentLogp: -1,
        teacherLogp: -1 - (i % 7) / 3,
        kl: (i % 11) / 10,
      })),
    });
    const spacer = Object.assign(document.createElement('div'), { style: 'height:2400px' });
    const root = Object.assign(document.createElement('section'), { id: 'heat-test' });
    document.body.append(spacer, root);
    const panel = new HeatmapPanel(root);
    const rollouts = [rollout(0)];
    panel.render(rollouts, []);
    (window as unknown as { __heat: unknown }).__heat = {
      add: () => {
        rollouts.push(rollout(rollouts.length));
        panel.render([...rollouts], []);
      },
    };
  });
}

/** Starts (or stops) a new rollout every 15 ms. */
const arrive = (page: Page, on: boolean) =>
  page.evaluate((on) => {
    const w = window as unknown as { __heat: { add(): void }; __timer?: number };
    window.clearInterval(w.__timer);
    if (on) w.__timer = window.setInterval(() => w.__heat.add(), 15);
  }, on);
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    return el.closest('#heat-test .tokens') ? el.dataset.i : `not a token: ${el.tagName}`;
  });
const active = (page: Page) => page.locator('#heat-test .tok.active').getAttribute('data-i');
const shown = (page: Page) => page.locator('#heat-test .q-text').textContent();

describe.skipIf(!hasChromium)('heatmap keyboard focus (headless Chromium)', () => {
  let page: Page;
  pageForSuite((_s: BrowserSession, p) => {
    page = p;
  });

  it('keeps the detail on the focused token when focusing scrolls tokens under a still pointer', async () => {
    await mount(page);
    // The pointer rests in the middle of the screen, over the spacer; focusing the first token scrolls the
    // strip (900 tokens, several screens of them) under it.
    await page.mouse.move(400, 400);
    await page.locator('#heat-test .tok[tabindex="0"]').focus();
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(1000);
    // Chromium's mouseover for the scrolled content comes on a timer after the scroll.
    await page.waitForTimeout(400);
    const under = await page.evaluate(() =>
      document.elementFromPoint(400, 400)?.closest('.tok')?.getAttribute('data-i'),
    );
    expect(under, 'a token lies under the pointer').toMatch(/^\d+$/);
    expect(under).not.toBe('0');
    expect(await focused(page)).toBe('0');
    expect(await active(page)).toBe('0');
    await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(400);
    expect(await focused(page)).toBe('1');
    expect(await active(page)).toBe('1');
    // Pointing is still pointing: a real move onto a token shows it.
    const box = (await page.locator('#heat-test .tok[data-i="5"]').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    expect(await active(page)).toBe('5');
  }, 60_000);

  it('keeps the rollout and the focus while new rollouts arrive, then follows the newest again', async () => {
    await page.reload();
    await page.waitForFunction(() => document.getElementById('gpu-status')?.dataset.selftest !== undefined);
    await mount(page);
    await page.locator('#heat-test .tok[tabindex="0"]').focus();
    // A rollout arrives every 15 ms while the arrow keys move along the strip.
    await arrive(page, true);
    for (let k = 1; k <= 20; k++) {
      await page.keyboard.press('ArrowRight');
      await page.waitForTimeout(10);
    }
    await page.waitForTimeout(100);
    expect(await page.evaluate(() => document.querySelectorAll('#heat-test option').length)).toBeGreaterThan(10);
    expect(await shown(page)).toBe('rollout 0');
    expect(await focused(page)).toBe('20');
    expect(await active(page)).toBe('20');
    // Focus leaves the tokens: the view follows the newest rollout again.
    await page.locator('#heat-test .rollout-select').focus();
    await page.waitForTimeout(100);
    expect(await shown(page)).not.toBe('rollout 0');
    // Back on a token of the newest rollout: Enter pins, Esc unpins and the arrows move on while rollouts arrive.
    await arrive(page, false);
    await page.locator('#heat-test .tok[tabindex="0"]').focus();
    await arrive(page, true);
    const reading = await shown(page);
    for (const key of ['ArrowRight', 'ArrowRight', 'Enter', 'ArrowRight', 'Escape', 'ArrowLeft']) {
      await page.keyboard.press(key);
      await page.waitForTimeout(20);
    }
    await page.waitForTimeout(100);
    expect(await shown(page)).toBe(reading);
    expect(await focused(page)).toBe('2');
    expect(await active(page)).toBe('2');
    await arrive(page, false);
  }, 60_000);
});
