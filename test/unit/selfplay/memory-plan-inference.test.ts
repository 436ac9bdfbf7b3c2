// The memory estimate of evaluating and probing (estimateInference): the weights once (as stored, or f32 for a
// run's trained policies), the KV cache, prefill and decoding step of the held-out batch; and the refusal,
// for evaluation and training alike, of a total past the device's known memory or past any GPU's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/model/config.ts';
import { weightBytes } from '../../../src/model/weight-storage.ts';
import { PRESETS } from '../../../src/selfplay/config.ts';
import { estimateInference, estimateRun, NO_DEVICE_BYTES } from '../../../src/selfplay/memory-plan.ts';

const cfg = (name: string) =>
  parseConfig(JSON.parse(readFileSync(new URL(`../../../bench/configs/${name}.json`, import.meta.url), 'utf8')));
const browser = { maxStorageBufferBindingSize: 128 * 2 ** 20, maxBufferSize: 256 * 2 ** 20 };
const GiB = 2 ** 30;

describe('estimateInference', () => {
  it('counts the weights as stored once, the KV cache of the held-out batch and one decoding step', () => {
    const q3 = cfg('qwen3-0.6b');
    const m = estimateInference(q3, PRESETS.demo, browser);
    expect(m.fits).toBe(true);
    const weights = m.breakdown.find((l) => l.label.startsWith('weights'))!;
    expect(weights.bytes).toBe(weightBytes(q3, true));
    expect(m.breakdown.map((l) => l.label.split(':')[0]!.split(' (')[0])).toEqual([
      'weights',
      'KV cache',
      'prompt prefill',
      'fused decoding',
      'one decoding step',
      "the prefill's last logits, and their copy for rows that share a prompt",
      "a turn's cache laid out anew",
      'buffer pool rounding to size classes',
    ]);
    // Far below training the same model: no optimizer, no gradients, no trained copies.
    expect(m.totalBytes).toBeLessThan(estimateRun(q3, PRESETS.demo, browser).totalBytes / 2);
    // A run's three trained policies in f32.
    const run = estimateInference(q3, PRESETS.demo, browser, { copies: 3, trained: true });
    expect(run.breakdown[0]!.bytes).toBe(3 * m.weightBytes);
  });

  it('refuses past the device memory it knows, and past any GPU whatever the device', () => {
    const q3 = cfg('qwen3-0.6b');
    const small = estimateInference(q3, PRESETS.demo, { ...browser, deviceBytes: 0.5 * GiB });
    expect(small.fits).toBe(false);
    expect(small.problems.join(' ')).toMatch(/more than this device's 0\.5 GiB/);
    const huge = { ...q3, layers: 1024, hidden: 65536, intermediate: 262144 };
    const m = estimateInference(huge, PRESETS.demo, { maxStorageBufferBindingSize: 2 ** 52, maxBufferSize: 2 ** 52 });
    expect(m.totalBytes).toBeGreaterThan(NO_DEVICE_BYTES);
    expect(m.problems.join(' ')).toMatch(/more than any GPU holds \(256\.0 GiB\)/);
    // Training too: refused, never only warned.
    const train = estimateRun(huge, PRESETS.demo, { maxStorageBufferBindingSize: 2 ** 52, maxBufferSize: 2 ** 52 });
    expect(train.fits).toBe(false);
    expect(train.problems.join(' ')).toMatch(/more than any GPU holds/);
    expect(train.warnings).toEqual([]);
  });
});
