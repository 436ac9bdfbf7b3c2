// The README's heatmap figure, made by the page itself: opens the recorded example (public/examples/) in
// headless Chromium, shows one of its rollouts in the heatmap tab and saves what its "Download PNG" button
// exports. Also prints, for every rollout of the example, the answer tokens' share of the distillation term
// D (the sum of per-token top-K KL over the student's tokens), the number the README quotes beside the figure.
//
//   npx tsx scripts/readme-heatmap.ts --out results/figures/heatmap.png [--example piplay] [--rollout N]
//                                     [--page docs/page.png]
//
// --rollout is the index among the example's rollouts (default: the one whose D falls most on its answer).
// --page also saves the whole page (1280 x 860) as it then stands, the README's picture. An existing --out or
// --page is never overwritten.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { ANSWER_CLOSE, ANSWER_OPEN } from '../src/env/tags.ts';
import type { RolloutRecord } from '../src/selfplay/events.ts';
import { answerSpan } from '../src/lab/probe.ts';
import { parseRecording, replayEvent } from '../src/worker/recording.ts';
import { ready, startBrowserSession } from './browser.ts';

/** D over the student's tokens and the share of it on its answer, as the teacher probe counts it (answerSpan). */
function answerShare(r: RolloutRecord): { d: number; share: number; tokens: number } {
  const policy = r.tokens.filter((t) => t.policy);
  const idOf = (text: string) => r.tokens.find((t) => t.text === text)?.id ?? -1;
  const span = answerSpan(
    policy.map((t) => t.id),
    idOf(ANSWER_OPEN),
    idOf(ANSWER_CLOSE),
  );
  const d = policy.reduce((sum, t) => sum + t.kl, 0);
  const onAnswer = span.reduce((sum, j) => sum + policy[j]!.kl, 0);
  return { d, share: d > 0 ? onAnswer / d : 0, tokens: policy.length };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      example: { type: 'string', default: 'piplay' },
      rollout: { type: 'string' },
      page: { type: 'string' },
    },
  });
  const usage =
    'usage: npx tsx scripts/readme-heatmap.ts --out FILE.png [--example NAME] [--rollout N] [--page FILE.png]';
  if (!values.out) throw new Error(usage);
  for (const [flag, f] of [
    ['--out', values.out],
    ['--page', values.page],
  ])
    if (f && existsSync(f)) throw new Error(`${f} exists; choose another ${flag} (it is never overwritten)`);
  const file = new URL(`../public/examples/${values.example}.json`, import.meta.url);
  const rollouts = parseRecording(readFileSync(file, 'utf8'), file.pathname)
    .events.map(replayEvent)
    .flatMap((e) => (e.type === 'rollout' ? [e.record] : []));
  const shares = rollouts.map(answerShare);
  shares.forEach((s, i) => {
    const r = rollouts[i]!;
    console.log(
      `${i}: ${r.question} | answer ${JSON.stringify(r.answer)} (gold ${r.gold}) | ${s.tokens} tokens, ` +
        `D ${s.d.toFixed(3)}, answer share ${(100 * s.share).toFixed(0)}%`,
    );
  });
  const byShare = shares.map((s) => s.share);
  const pick = values.rollout === undefined ? byShare.indexOf(Math.max(...byShare)) : Number(values.rollout);
  if (!rollouts[pick])
    throw new Error(`--rollout ${values.rollout}: the example has rollouts 0 to ${rollouts.length - 1}`);
  console.log(`figure: rollout ${pick}`);

  const session = await startBrowserSession();
  try {
    const page = await session.newPage();
    // The dev server compiles the page on its first load: slow on a loaded 2-core machine.
    page.setDefaultNavigationTimeout(300_000);
    page.setDefaultTimeout(120_000);
    await ready(page, session.url);
    await page.getByRole('button', { name: /recorded example/i }).click({ timeout: 30_000 });
    await page.click('[data-tab="heatmap"]');
    // The select's option values are the rollouts' indices (listed newest first).
    await page.locator('#panel-heatmap .rollout-select').selectOption(String(pick));
    const download = page.waitForEvent('download');
    await page.locator('#panel-heatmap .heat-png').click();
    mkdirSync(dirname(values.out), { recursive: true });
    await (await download).saveAs(values.out);
    console.log(`wrote ${values.out}`);
    if (values.page) {
      await page.setViewportSize({ width: 1280, height: 860 });
      await page.waitForTimeout(500);
      await page.screenshot({ path: values.page });
      console.log(`wrote ${values.page}`);
    }
  } finally {
    await session.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
