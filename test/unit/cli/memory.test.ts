// The command line's memory check: the estimate printed term by term, and a run past the adapter's limits
// refused with the problem, the estimate's largest term and the setting that lowers it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { estimateLines, refusal } from '../../../src/cli/memory.ts';
import { parseConfig } from '../../../src/model/config.ts';
import { PRESETS } from '../../../src/selfplay/config.ts';
import { estimateRun } from '../../../src/worker/estimate.ts';

const cfg = (name: string) =>
  parseConfig(JSON.parse(readFileSync(new URL(`../../assets/configs/${name}.json`, import.meta.url), 'utf8')));
const browser = { maxStorageBufferBindingSize: 128 * 2 ** 20, maxBufferSize: 256 * 2 ** 20 };
const prompts = { student: 130, teacher: 900, examiner: 250 };

describe('npm run train memory check', () => {
  it('prints the total, every term and the prompt lengths', () => {
    const m = estimateRun(cfg('smollm2-135m'), { ...PRESETS.smoke, policies: 'lora' }, browser, prompts);
    const lines = estimateLines(m);
    expect(lines[0]).toMatch(
      /^memory estimate: about [\d.]+ GiB .*prompts up to 130 tokens \(student\), 900 \(teacher\)/,
    );
    expect(lines.length).toBeGreaterThanOrEqual(1 + m.breakdown.length);
    expect(lines.join('\n')).toMatch(/student forward: 4 rollouts × 210 tokens/);
    expect(refusal(m)).toBeNull();
  });

  it('refuses a run past the limits, naming the largest term and the setting that lowers it', () => {
    const m = estimateRun(cfg('smollm2-135m'), { ...PRESETS.demo, policies: 'lora' }, browser, prompts);
    const r = refusal(m)!;
    expect(r).toMatch(/^this run cannot fit this GPU: One activation of a training micro-batch \(31400 tokens/);
    expect(r).toContain(`largest term is ${m.largestTerm.label}`);
    expect(r).toMatch(/lower it with micro-batch \(--micro-batch\)\.$/);
  });
});
