// The memory estimate (src/worker/estimate.ts) against the buffer pool's measured high-water mark over a whole
// self-play iteration on a small shape, with separate and with LoRA policies, with activation recompute and
// (LoRA) without. One turn of exactly turnTokens tokens and 1-hop questions make the run's sequences as long
// as the estimate's bounds, so the two can be held within 20%.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { randomTinyBase } from '../../../src/selfplay/base-model.ts';
import { Environment } from '../../../src/selfplay/environment.ts';
import { SelfPlayRun } from '../../../src/selfplay/loop.ts';
import { measurePrompts } from '../../../src/selfplay/prompt-lengths.ts';
import { estimateRun } from '../../../src/worker/estimate.ts';
import { testEngine } from '../../helpers/engine.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe.each([
  ['separate', true],
  ['lora', true],
  ['lora', false],
] as const)('estimate vs measured, %s policies, recompute %s', (policies, recompute) => {
  it('the estimate is within 20% of the pool high-water mark', async () => {
    const config = makeConfig('smoke', {
      policies,
      recompute,
      tinyHidden: 128,
      tinyLayers: 2,
      tinyHeads: 4,
      tinyKvHeads: 2,
      maxTurns: 1,
      turnTokens: 16,
      hopWeights: [1],
      evalAtStart: false,
    });
    const env = Environment.fromWorld(config);
    const base = await randomTinyBase(config, env.passages);
    const est = estimateRun(base.cfg, config, e.info.limits, measurePrompts(config, base, env));
    e.pool.trim();
    e.pool.resetPeak();
    const run = await SelfPlayRun.start({ engine: e, config, base, env });
    await run.run();
    await e.sync();
    const peak = e.memory().peakAllocatedBytes;
    run.dispose();
    const ratio = est.totalBytes / peak;
    const terms = est.breakdown.map((l) => `${l.label}: ${(l.bytes / 2 ** 20).toFixed(1)} MiB`).join('; ');
    const what = `estimate ${(est.totalBytes / 2 ** 20).toFixed(1)} MiB vs measured ${(peak / 2 ** 20).toFixed(1)} MiB (${terms})`;
    expect(ratio, what).toBeGreaterThan(0.8);
    expect(ratio, what).toBeLessThan(1.2);
  }, 240_000);
});
