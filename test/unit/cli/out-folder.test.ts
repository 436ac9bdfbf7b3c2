// checkOutFolder: a command writes only into a new or empty folder or its own earlier output; a model
// folder or a folder of other files is refused, naming the folder, before anything is written.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkOutFolder } from '../../../src/cli/out-folder.ts';
import { PRETRAIN_OUT_RULE, WORLD_OUT_RULE } from '../../../src/cli/pretrain-args.ts';
import { trainOutRule } from '../../../src/cli/run-folder.ts';

const root = mkdtempSync(join(tmpdir(), 'piplay-out-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  return dir;
}

describe('checkOutFolder (npm run train --out)', () => {
  it('takes a new or empty folder, and a run of its own', () => {
    expect(checkOutFolder(join(root, 'nothing-here'), trainOutRule(false))).toBe('new');
    expect(readdirSync(root)).not.toContain('nothing-here');
    expect(checkOutFolder(folder('empty', {}), trainOutRule(false))).toBe('empty');
    const run = folder('run', {
      'config.json': JSON.stringify({ model: 'random-tiny', examinerSteps: 1, studentSteps: 1 }),
      'metrics.jsonl': '',
    });
    expect(checkOutFolder(run, trainOutRule(false))).toBe('own');
    expect(checkOutFolder(run, trainOutRule(true))).toBe('own');
    const cp = folder('cp', { 'checkpoints/latest.json': '{}' });
    expect(checkOutFolder(cp, trainOutRule(true))).toBe('own');
  });

  it('refuses a model folder, naming it and saying what to do', () => {
    const model = join(root, 'model');
    cpSync('public/models/piplay-tiny', model, { recursive: true });
    expect(() => checkOutFolder(model, trainOutRule(false))).toThrow(
      new RegExp(
        `--out: ${model} holds files that npm run train did not write \\(TRAINING.md, model.safetensors.*It is a model folder: give it as --model`,
      ),
    );
    // config.json alone is a model's, not a run's: still refused.
    const cfgOnly = folder('cfg-only', {
      'config.json': JSON.stringify({ model_type: 'llama', architectures: ['LlamaForCausalLM'] }),
    });
    expect(() => checkOutFolder(cfgOnly, trainOutRule(false))).toThrow(/did not write \(config.json\).*model folder/);
  });

  it("refuses a folder of the user's own files, and a file", () => {
    const mine = folder('mine', { 'notes.txt': 'x', 'metrics.jsonl': 'mine' });
    expect(() => checkOutFolder(mine, trainOutRule(false))).toThrow(
      new RegExp(`${mine} holds files that npm run train did not write \\(notes.txt\\).*Choose another folder`),
    );
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    expect(() => checkOutFolder(file, trainOutRule(false))).toThrow(/is a file, not a folder/);
  });

  it('--resume needs a folder that is there and holds something', () => {
    const missing = join(root, 'missing');
    expect(() => checkOutFolder(missing, trainOutRule(true))).toThrow(
      new RegExp(`--resume: ${missing} does not exist`),
    );
    expect(readdirSync(root)).not.toContain('missing');
    expect(() => checkOutFolder(folder('empty2', {}), trainOutRule(true))).toThrow(
      /is empty, so there is nothing to resume/,
    );
  });
});

describe('checkOutFolder (npm run pretrain --out, --world-out)', () => {
  it("takes the embedded model (pretrain made it) and the default world's folder; refuses another model", () => {
    expect(checkOutFolder('public/models/piplay-tiny', PRETRAIN_OUT_RULE)).toBe('own');
    expect(checkOutFolder('public/worlds/default', WORLD_OUT_RULE)).toBe('own');
    const hf = folder('hf', {
      'config.json': JSON.stringify({ model_type: 'llama' }),
      'model.safetensors': '',
      'TRAINING.md': '# notes',
    });
    expect(() => checkOutFolder(hf, PRETRAIN_OUT_RULE)).toThrow(
      /npm run pretrain did not write \(TRAINING.md, config.json, model.safetensors\).*It is a model folder/,
    );
  });
});
