// The memory estimate (src/selfplay/memory-plan.ts) against the buffer pool's measured high-water mark over a whole
// self-play iteration on a small shape, with separate and with LoRA policies, with activation recompute and
// (LoRA) without; and at a real model's widths: SmolLM2-135M's config.json (hidden 576, the 49,152-token
// vocabulary, BF16) cut to two layers, with random weights and LoRA policies. One turn of exactly
// turnTokens tokens and 1-hop questions make the run's sequences as long as the estimate's bounds, so the two
// can be held within 20% where each rollout has a row of its own; with a question's rollouts packed as one prefix
// tree (the default), a pass holds fewer tokens than that bound, and the estimate must still bound it.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { expectedTensors, parseConfig } from '../../../src/model/config.ts';
import { initWeights } from '../../../src/model/init.ts';
import { makeConfig, type SelfPlayConfig } from '../../../src/selfplay/config.ts';
import { randomTinyBase, type BaseModel } from '../../../src/selfplay/base-model.ts';
import { Environment } from '../../../src/selfplay/environment.ts';
import { SelfPlayRun } from '../../../src/selfplay/loop.ts';
import { setTreePacking } from '../../../src/selfplay/student.ts';
import { measurePrompts } from '../../../src/selfplay/prompt-lengths.ts';
import { estimateRun } from '../../../src/selfplay/memory-plan.ts';
import { testEngine } from '../../helpers/engine.ts';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

/**
 * Runs one self-play iteration from an emptied pool, a row per rollout in the student's passes (the run the
 * estimate is held within 20% of), then again with prefix trees (which the estimate must bound); the estimate's
 * total against each run's pool high-water mark.
 */
async function estimateAndPeak(config: SelfPlayConfig, base: BaseModel, env: Environment) {
  const est = estimateRun(base.cfg, config, e.info.limits, measurePrompts(config, base, env));
  const peakOf = async (trees: boolean) => {
    setTreePacking(trees);
    e.pool.trim();
    e.pool.resetPeak();
    const run = await SelfPlayRun.start({ engine: e, config, base, env });
    try {
      await run.run();
      await e.sync();
      return e.memory().peakAllocatedBytes;
    } finally {
      run.dispose();
      setTreePacking(true);
    }
  };
  const rows = await peakOf(false);
  const trees = await peakOf(true);
  const terms = est.breakdown.map((l) => `${l.label}: ${(l.bytes / 2 ** 20).toFixed(1)} MiB`).join('; ');
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const what = `estimate ${mib(est.totalBytes)} MiB vs measured ${mib(rows)} MiB, ${mib(trees)} MiB in trees (${terms})`;
  return { ratio: est.totalBytes / rows, treeRatio: est.totalBytes / trees, what };
}

describe.each([
  ['separate', 'on'],
  ['lora', 'on'],
  ['lora', 'off'],
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
    const { ratio, treeRatio, what } = await estimateAndPeak(config, base, env);
    expect(ratio, what).toBeGreaterThan(0.8);
    expect(ratio, what).toBeLessThan(1.2);
    expect(treeRatio, what).toBeGreaterThan(ratio * 0.999);
  }, 240_000);
});

describe('estimate vs measured at real widths', () => {
  it("SmolLM2-135M's config with two layers, a BF16 base and LoRA policies: within 20%", async () => {
    const json = JSON.parse(readFileSync(new URL('../../../bench/configs/smollm2-135m.json', import.meta.url), 'utf8'));
    const cfg = parseConfig({ ...json, num_hidden_layers: 2 });
    // One question of two rollouts per stage and one held-out question: the widths, not the batch, are what
    // this case is about.
    const config = makeConfig('smoke', {
      policies: 'lora',
      maxTurns: 1,
      turnTokens: 16,
      hopWeights: [1],
      evalAtStart: false,
      studentBatch: 1,
      examinerBatch: 1,
      evalBatch: 2,
      evalHops: [1],
    });
    const env = Environment.fromWorld(config);
    // The corpus-trained tokenizer's ids are all inside the real vocabulary; the weights are the real shapes'.
    const tiny = await randomTinyBase(config, env.passages);
    const fileDtypes = new Map(expectedTensors(cfg).map((t) => [t.name, 'BF16' as const]));
    const base: BaseModel = { ...tiny, cfg, weights: initWeights(cfg, { seed: 1 }), fileDtypes };
    const { ratio, treeRatio, what } = await estimateAndPeak(config, base, env);
    console.log(what); // docs/memory.md quotes it
    expect(ratio, what).toBeGreaterThan(0.8);
    expect(ratio, what).toBeLessThan(1.2);
    expect(treeRatio, what).toBeGreaterThan(ratio * 0.999);
  }, 600_000);
});
