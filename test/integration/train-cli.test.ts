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
import { loadModel } from '../../src/model/io.ts';
import { latestCheckpoint, restorePolicies } from '../../src/selfplay/checkpoint.ts';
import type { SelfPlayConfig } from '../../src/selfplay/config.ts';
import { Policies } from '../../src/selfplay/policies.ts';
import { testEngine } from '../helpers/engine.ts';
import { expectStudentExport } from '../helpers/lora-export.ts';

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

    await expectStudentExport(exported, policies, 0);
    exported.dispose();
    policies.dispose();
  });
});
