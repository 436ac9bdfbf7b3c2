// The memory estimate (src/selfplay/memory-plan.ts) of the demo preset with LoRA policies for the real small models,
// from their published config.json alone (bench/configs; no weights needed), on a browser's default
// limits (128 MiB per storage binding): every term listed, and the totals within what a laptop GPU gives a
// tab: SmolLM2-135M ≤ 2 GiB, Qwen2.5-0.5B and Qwen3-0.6B ≤ 4 GiB. Activation recompute, one rollout per
// training pass and the KV budget are what get them there; docs/memory.md quotes these numbers.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { estimateLines } from '../../../src/cli/memory.ts';
import { parseConfig } from '../../../src/model/config.ts';
import { PRESETS } from '../../../src/selfplay/config.ts';
import { chunkRows, LOGITS_CHUNK_BYTES } from '../../../src/gpu/ops/vocab_head.ts';
import { estimateRun, KEEP_ACTIVATIONS_BYTES, recomputes } from '../../../src/selfplay/memory-plan.ts';

const cfg = (name: string) =>
  parseConfig(JSON.parse(readFileSync(new URL(`../../../bench/configs/${name}.json`, import.meta.url), 'utf8')));
const browser = { maxStorageBufferBindingSize: 128 * 2 ** 20, maxBufferSize: 256 * 2 ** 20 };
const GiB = 2 ** 30;
const demoLora = { ...PRESETS.demo, policies: 'lora' as const };

describe('the demo preset with LoRA on real model shapes', () => {
  it.each([
    ['smollm2-135m', 2],
    ['qwen2.5-0.5b-instruct', 4],
    ['qwen3-0.6b', 4],
  ] as const)('%s: the estimate lists its terms and is at most %s GiB', (name, target) => {
    const m = estimateRun(cfg(name), demoLora, browser);
    const lines = estimateLines(m);
    console.log(`${name}, demo preset, LoRA:\n${lines.join('\n')}`);
    expect(m.problems).toEqual([]);
    expect(m.fits).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(1 + m.breakdown.length);
    const labels = m.breakdown.map((l) => l.label).join('\n');
    expect(labels).toMatch(/one shared frozen base \(matrices in bfloat16\)/);
    expect(labels).toMatch(/LoRA adapters \(rank 16\) ×3/);
    expect(labels).toMatch(/AdamW moments/);
    expect(m.totalBytes).toBe(m.breakdown.reduce((s, l) => s + l.bytes, 0));
    expect(m.totalBytes / GiB).toBeLessThanOrEqual(target);
  });

  it('activation recompute is what keeps the training pass small', () => {
    const on = estimateRun(cfg('qwen3-0.6b'), demoLora, browser);
    const off = estimateRun(cfg('qwen3-0.6b'), { ...demoLora, recompute: 'off' }, browser);
    const forward = (m: typeof on) => m.breakdown.find((l) => l.label.startsWith('student forward'))!;
    expect(forward(on).label).toMatch(/each layer's input \(recomputed on the backward pass\)/);
    expect(forward(off).label).toMatch(/every layer's intermediates/);
    expect(forward(off).setting).toBe('activation recompute (--recompute)');
    expect(forward(off).bytes / forward(on).bytes).toBeGreaterThan(10);
    expect(off.totalBytes / GiB).toBeGreaterThan(8);
  });

  // The demo's 'auto': the real models recompute (without it each run needs several GiB); the embedded model
  // keeps its activations (all of it fits in a few hundred MiB either way).
  it('--recompute auto recomputes where the run would need over 1 GiB without, and only there', () => {
    expect(PRESETS.demo.recompute).toBe('auto');
    for (const name of ['smollm2-135m', 'qwen2.5-0.5b-instruct', 'qwen3-0.6b']) {
      for (const policies of ['lora', 'separate'] as const) {
        const run = { ...PRESETS.demo, policies };
        const without = estimateRun(cfg(name), { ...run, recompute: 'off' }, browser);
        expect(without.totalBytes, `${name}, ${policies}`).toBeGreaterThan(KEEP_ACTIVATIONS_BYTES);
        expect(recomputes(cfg(name), run), `${name}, ${policies}`).toBe(true);
        expect(estimateRun(cfg(name), run, browser).totalBytes).toBe(
          estimateRun(cfg(name), { ...run, recompute: 'on' }, browser).totalBytes,
        );
      }
    }
    const tiny = parseConfig(
      JSON.parse(readFileSync(new URL('../../../public/models/piplay-tiny/config.json', import.meta.url), 'utf8')),
    );
    const run = PRESETS.demo;
    expect(estimateRun(tiny, { ...run, recompute: 'off' }, browser).totalBytes).toBeLessThanOrEqual(
      KEEP_ACTIVATIONS_BYTES,
    );
    expect(recomputes(tiny, run)).toBe(false);
    expect(recomputes(tiny, { ...run, recompute: 'on' })).toBe(true);
    expect(recomputes(cfg('qwen3-0.6b'), { ...run, recompute: 'off' })).toBe(false);
    // A config written before 'auto' holds a boolean.
    expect(recomputes(tiny, { ...run, recompute: true as unknown as 'on' })).toBe(true);
    expect(recomputes(cfg('qwen3-0.6b'), { ...run, recompute: false as unknown as 'off' })).toBe(false);
  });

  it('the KV budget splits a batch of rollouts whose cache would not fit it', () => {
    // Without a budget the demo's rollouts of a student step decode with one cache of 2176 positions each.
    const rollouts = demoLora.studentBatch * demoLora.rolloutsPerQuestion;
    const unlimited = estimateRun(cfg('qwen3-0.6b'), { ...demoLora, kvBudget: 0 }, browser);
    const kvOf = (m: typeof unlimited) => m.breakdown.find((l) => l.label.startsWith('KV cache'))!;
    expect(kvOf(unlimited).label).toBe(`KV cache: ${rollouts} rollouts × 2176 positions`);
    expect(unlimited.largestTerm).toBe(kvOf(unlimited));
    expect(unlimited.totalBytes / GiB).toBeGreaterThan(8);
    // Under 4 GiB they decode 8 at a time (the demo's 1 GiB: 2 at a time, below the training pass).
    const m = estimateRun(cfg('qwen3-0.6b'), { ...demoLora, kvBudget: 4096 }, browser);
    expect(kvOf(m).label).toBe(
      `KV cache: 8 rollouts × 2176 positions (${rollouts} decode in parts under --kv-budget 4096)`,
    );
    expect(kvOf(m).setting).toBe('KV budget (--kv-budget)');
    expect(kvOf(m).bytes).toBeLessThanOrEqual(4096 * 2 ** 20);
  });

  it.each(['smollm2-135m', 'qwen2.5-0.5b-instruct', 'qwen3-0.6b'])(
    '%s: the same plan on an adapter that binds 2 GiB as on one that binds 128 MiB (the logits chunk is capped)',
    (name) => {
      const desktop = { maxStorageBufferBindingSize: 2 * GiB, maxBufferSize: 4 * GiB };
      const small = estimateRun(cfg(name), demoLora, browser);
      const big = estimateRun(cfg(name), demoLora, desktop);
      expect(big.totalBytes).toBe(small.totalBytes);
      // Where training is the largest stage (not generation, as for SmolLM2), its logits line is capped.
      const logits = big.breakdown.find((l) => l.label.startsWith('logits'));
      expect(logits?.bytes ?? 0).toBeLessThanOrEqual(3 * LOGITS_CHUNK_BYTES);
    },
  );

  it('cuts the logits into chunks of at most 128 MiB on any adapter', () => {
    const engine = (binding: number) =>
      ({ info: { limits: { maxStorageBufferBindingSize: binding, maxBufferSize: binding } } }) as never;
    expect(chunkRows(engine(2 * GiB), 151_936)).toBe(Math.floor(LOGITS_CHUNK_BYTES / (4 * 151_936)));
    expect(chunkRows(engine(64 * 2 ** 20), 151_936)).toBe(Math.floor((64 * 2 ** 20) / (4 * 151_936)));
  });
});
