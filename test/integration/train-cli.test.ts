// `npm run train` end to end with LoRA policies at toy size (the smoke preset, a random tiny model): the
// student/ folder it writes is a plain HF model folder, the student's adapters merged into the base, that
// loads back and gives the logits of the adapted student restored from the run's checkpoint.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirStorage } from '../../src/cli/fs-storage.ts';
import { buildBase, buildEnvironment } from '../../src/cli/setup.ts';
import { filesFromNodeFolder } from '../../src/gpu/host/node-files.ts';
import type { CausalLM } from '../../src/model/decoder.ts';
import { loadModel } from '../../src/model/io.ts';
import { latestCheckpoint, restorePolicies } from '../../src/selfplay/checkpoint.ts';
import type { SelfPlayConfig } from '../../src/selfplay/config.ts';
import { Policies } from '../../src/selfplay/policies.ts';
import { expectClose } from '../helpers/compare.ts';
import { testEngine } from '../helpers/engine.ts';

const out = mkdtempSync(join(tmpdir(), 'piplay-train-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

let result: { code: number; stdout: string; stderr: string };

beforeAll(async () => {
  const args = ['--out', out, '--preset', 'smoke', '--policies', 'lora', '--lora-rank', '4', '--eval-at-start', 'off'];
  result = await new Promise((done) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', ...args], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}, 300_000);

describe('npm run train --policies lora (smoke preset)', () => {
  it("writes student/: the student's adapters merged into the base, with the adapted student's logits", async () => {
    expect(result.code, result.stderr).toBe(0);
    const dir = join(out, 'student');
    expect(result.stdout).toContain(`the student is in ${dir}`);
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) expect(existsSync(join(dir, f)), f).toBe(true);

    const e = await testEngine();
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as SelfPlayConfig;
    const base = await buildBase(e, config, buildEnvironment(config));
    const policies = Policies.create(e, base, config);
    const storage = new DirStorage(out);
    await restorePolicies(storage, (await latestCheckpoint(storage))!.slot, policies);
    const exported = await loadModel(e, filesFromNodeFolder(dir), { source: dir });
    expect(exported.lora).toBeNull();

    const q = 'model.layers.0.self_attn.q_proj.weight';
    const got = (await exported.toHost()).get(q)!.data;
    const merged = async (m: CausalLM) => (await m.toHost({ mergeLora: true })).get(q)!.data;
    const maxDiff = (a: Float32Array, b: Float32Array) => Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));
    expect(maxDiff(got, await merged(policies.student))).toBe(0);
    // Not the examiner's or the teacher's adapters (training moved them ~1e-4 apart).
    expect(maxDiff(got, await merged(policies.examiner))).toBeGreaterThan(1e-5);
    expect(maxDiff(got, await merged(policies.teacher!))).toBeGreaterThan(1e-5);

    const ids = Int32Array.from([1, 5, 9, 3, 7, 2]);
    const logits = async (m: CausalLM) => {
      const t = e.noGrad(() => e.tidy(() => e.keep(m.forward({ ids, batch: 1, time: ids.length }))));
      const out = (await t.readF32()).slice();
      t.dispose();
      return out;
    };
    expectClose(await logits(exported), await logits(policies.student), 1e-4, 1e-5, 'logits of student/ vs the adapted student');
    exported.dispose();
    policies.dispose();
  });
});
