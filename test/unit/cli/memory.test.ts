// The command line's memory check: the estimate printed term by term, and a run past the adapter's limits
// refused with the problem, the estimate's largest term and the setting that lowers it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { estimateLines, peakLine } from '../../../src/cli/memory.ts';
import { parameterCount, parseConfig } from '../../../src/model/config.ts';
import { PRESETS } from '../../../src/selfplay/config.ts';
import { estimateRun, refusal } from '../../../src/selfplay/memory-plan.ts';

const cfg = (name: string) =>
  parseConfig(JSON.parse(readFileSync(new URL(`../../../bench/configs/${name}.json`, import.meta.url), 'utf8')));
const browser = { maxStorageBufferBindingSize: 128 * 2 ** 20, maxBufferSize: 256 * 2 ** 20 };
const prompts = { student: 130, teacher: 900, examiner: 250 };

describe('npm run train memory check', () => {
  it('prints the total, every term and the prompt lengths', () => {
    const m = estimateRun(cfg('smollm2-135m'), { ...PRESETS.smoke, policies: 'lora' }, browser, prompts);
    const lines = estimateLines(m);
    expect(lines[0]).toMatch(
      /^memory estimate: about [\d.]+ [GM]iB .*prompts up to 130 tokens \(student\), 900 \(teacher\)/,
    );
    expect(lines.length).toBeGreaterThanOrEqual(1 + m.breakdown.length);
    expect(lines.join('\n')).toMatch(/student forward: 4 rollouts × 210 tokens/);
    expect(refusal(m)).toBeNull();
  });

  it('refuses a run past the limits, naming the largest term and the setting that lowers it', () => {
    const m = estimateRun(cfg('smollm2-135m'), { ...PRESETS.demo, policies: 'lora', microBatch: 10 }, browser, prompts);
    const r = refusal(m)!;
    expect(r).toMatch(/^this run cannot fit this GPU: One activation of a training micro-batch \(31400 tokens/);
    expect(r).toContain(`largest term is ${m.largestTerm.label}`);
    expect(r).toMatch(/lower it with micro-batch \(--micro-batch\)\.$/);
  });

  it('counts frozen weights in the checkpoint dtype and trained copies in f32', () => {
    const smol = cfg('smollm2-135m'); // torch_dtype bfloat16
    const f32 = 4 * parameterCount(smol);
    const term = (m: ReturnType<typeof estimateRun>, re: RegExp) => m.breakdown.find((l) => re.test(l.label))!;
    const lora = estimateRun(smol, { ...PRESETS.smoke, policies: 'lora' }, browser, prompts);
    const base = term(lora, /one shared frozen base/);
    expect(base.label).toMatch(/\(matrices in bfloat16\)/);
    expect(base.bytes).toBe(lora.frozenWeightBytes);
    // All but the norm vectors halve: 269 MB of the 538 MB in f32, as the checkpoint is on disk.
    expect(base.bytes / f32).toBeGreaterThan(0.5);
    expect(base.bytes / f32).toBeLessThan(0.501);
    expect(lora.weightBytes).toBe(f32);

    const separate = estimateRun(smol, { ...PRESETS.smoke, policies: 'separate', beta: 0.01 }, browser, prompts);
    expect(term(separate, /full f32 copies/).bytes).toBe(3 * f32);
    expect(term(separate, /frozen reference/).bytes).toBe(lora.frozenWeightBytes);

    // An f32 checkpoint stays f32 frozen or not.
    const f32cfg = { ...smol, torchDtype: 'float32' as const };
    const plain = estimateRun(f32cfg, { ...PRESETS.smoke, policies: 'lora' }, browser, prompts);
    expect(term(plain, /one shared frozen base$/).bytes).toBe(f32);
  });

  it('reports the measured high-water mark beside the estimate, and how far off the estimate was', () => {
    expect(peakLine(1010 * 2 ** 20, 1.24 * 2 ** 30, 0.67 * 2 ** 30)).toBe(
      'GPU memory high-water mark 1.24 GiB allocated by the buffer pool (686.1 MiB in use at most); the estimate ' +
        'of 1010.0 MiB is 20.5% under it',
    );
    expect(peakLine(600 * 2 ** 20, 500 * 2 ** 20, 300 * 2 ** 20)).toMatch(/estimate of 600\.0 MiB is 20\.0% over it$/);
  });
});
