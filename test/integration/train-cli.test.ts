// `npm run train` end to end with LoRA policies at toy size (the smoke preset, a random tiny model): the
// student/ folder it writes is a plain HF model folder, the student's adapters merged into the base, that
// loads back and gives the logits of the adapted student restored from the run's checkpoint; `npm run eval`
// and `npm run probe` open the run folder at its checkpoint.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRun } from '../../src/cli/setup.ts';
import { filesFromNodeFolder } from '../../src/gpu/host/node-files.ts';
import { loadModel } from '../../src/model/io.ts';
import type { SelfPlayConfig } from '../../src/selfplay/config.ts';
import { testEngine } from '../helpers/engine.ts';
import { expectStudentExport } from '../helpers/lora-export.ts';

const out = mkdtempSync(join(tmpdir(), 'piplay-train-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

let result: { code: number; stdout: string; stderr: string };

beforeAll(async () => {
  const args = ['--out', out, '--preset', 'smoke', '--policies', 'lora', '--lora-rank', '4', '--eval-at-start', 'off'];
  result = await cli('train', args);
}, 300_000);

function cli(name: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `src/cli/${name}.ts`, ...args],
      { maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('npm run train --policies lora (smoke preset)', () => {
  it("writes student/: the student's adapters merged into the base, with the adapted student's logits", async () => {
    expect(result.code, result.stderr).toBe(0);
    const dir = join(out, 'student');
    expect(result.stdout).toContain(`the student is in ${dir}`);
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'])
      expect(existsSync(join(dir, f)), f).toBe(true);
    // Its model card reproduces the run; random-tiny is no hub model, so the card names no base_model.
    const card = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(card).toMatch(/^---\nlibrary_name: transformers\n/);
    expect(card).toContain('# random-tiny, trained by piplay');
    expect(card).toContain('npm run train -- --out runs/again --preset paper');

    const e = await testEngine();
    // config.json: the run's settings, and the code that started the run (its commit, and whether dirty).
    const { code, ...config } = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as SelfPlayConfig & {
      code: { commit: string; dirty: boolean };
    };
    expect(code.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(typeof code.dirty).toBe('boolean');
    const { policies, config: stored } = await openRun(e, out);
    expect(stored).toEqual(config);
    const exported = await loadModel(e, filesFromNodeFolder(dir), { source: dir });
    expect(exported.lora).toBeNull();

    await expectStudentExport(exported, policies, 0);
    exported.dispose();
    policies.dispose();
  });

  it('npm run eval and npm run probe open the run at its latest checkpoint', async () => {
    const ev = await cli('eval', ['--run', out]);
    expect(ev.code, ev.stderr).toBe(0);
    expect(ev.stdout).toMatch(/eval: the student of .* at iteration 1, done step 0/);
    const probe = await cli('probe', [
      '--run',
      out,
      '--questions',
      '2',
      '--modes',
      'full,gt',
      '--examiner-questions',
      '2',
    ]);
    expect(probe.code, probe.stderr).toBe(0);
    expect(probe.stdout).toMatch(/probe: the student, teacher and examiner of .* at iteration 1/);
    expect(probe.stdout).toMatch(/^\| full \|/m);
    expect(probe.stdout).toContain('The examiner probe');
    expect(probe.stdout).toMatch(/^\| all \| 2 \|/m);
    const bad = await cli('probe', ['--run', out, '--modes', 'none']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--modes: 'none' is not allowed");
  }, 300_000);
});
