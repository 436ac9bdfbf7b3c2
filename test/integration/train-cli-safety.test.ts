// `npm run train` never destroys what it did not write and never keeps a poisoned checkpoint: --out on a
// model folder or a folder of other files is refused before a byte is written; --resume on a missing folder
// does not create it; a diverging run (--lr 1e30) stops with a message naming what diverged, and its latest
// checkpoint stays finite and resumable. Tiny: the smoke preset, random-tiny, one iteration.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirStorage } from '../../src/cli/fs-storage.ts';
import { parseSafetensors, toFloat32 } from '../../src/model/safetensors.ts';
import { latestCheckpoint, saveCheckpoint, type RunState } from '../../src/selfplay/checkpoint.ts';
import { makeConfig } from '../../src/selfplay/config.ts';
import type { Policies } from '../../src/selfplay/policies.ts';
import { sha256Hex } from '../../src/selfplay/storage.ts';
import { writeSafetensors } from '../../src/model/safetensors.ts';

const root = mkdtempSync(join(tmpdir(), 'piplay-safety-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function train(
  args: string[],
  command = 'train',
  timeout = 0,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `src/cli/${command}.ts`, ...args],
      { maxBuffer: 64 << 20, timeout },
      (err, stdout, stderr) => {
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Every file under a folder with its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, f);
    try {
      out[f] = readFileSync(p).toString('base64');
    } catch {
      out[f] = 'dir';
    }
  }
  return out;
}

describe('npm run train --out', () => {
  it('refuses a model folder (--out equal to --model) and leaves it byte for byte', async () => {
    const model = join(root, 'model');
    cpSync('public/models/piplay-tiny', model, { recursive: true });
    const before = snapshot(model);
    const r = await train(['--out', model, '--model', model, '--preset', 'smoke']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`--out: ${model} holds files that npm run train did not write`);
    expect(r.stderr).toContain('It is a model folder: give it as --model, and a new folder as --out');
    expect(snapshot(model)).toEqual(before);
  }, 60_000);

  it("refuses a folder of the user's files, writing nothing", async () => {
    const mine = join(root, 'mine');
    mkdirSync(mine);
    writeFileSync(join(mine, 'metrics.jsonl'), 'my own notes\n');
    writeFileSync(join(mine, 'draft.txt'), 'x');
    const r = await train(['--out', mine, '--preset', 'smoke']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds files that npm run train did not write \(draft.txt\).*Choose another folder/);
    expect(readdirSync(mine).sort()).toEqual(['draft.txt', 'metrics.jsonl']);
    expect(readFileSync(join(mine, 'metrics.jsonl'), 'utf8')).toBe('my own notes\n');
  }, 60_000);

  it('--resume on a missing folder does not create it', async () => {
    const missing = join(root, 'missing', 'run');
    const r = await train(['--out', missing, '--resume']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`--resume: ${missing} does not exist, so there is nothing to resume`);
    expect(existsSync(join(root, 'missing'))).toBe(false);
  }, 60_000);
});

describe('npm run experiment and npm run pretrain --out', () => {
  it('refuse a folder of other files before any work; pretrain may replace its own model', async () => {
    const mine = join(root, 'results');
    mkdirSync(join(mine, 'investigation'), { recursive: true });
    writeFileSync(join(mine, 'results.md'), 'my table');
    const before = snapshot(mine);
    const exp = await train(['--out', mine, '--preset', 'smoke'], 'experiment');
    expect(exp.code).toBe(1);
    expect(exp.stderr).toContain(`--out: ${mine} holds files that npm run experiment did not write (investigation)`);
    const pre = await train(['--out', mine, '--steps', '1'], 'pretrain');
    expect(pre.code).toBe(1);
    expect(pre.stderr).toContain(
      `--out: ${mine} holds files that npm run pretrain did not write (investigation, results.md)`,
    );
    const world = await train(['--out', join(root, 'new-model'), '--world-out', mine, '--steps', '1'], 'pretrain');
    expect(world.code).toBe(1);
    expect(world.stderr).toContain(`--world-out: ${mine} holds files that npm run pretrain did not write`);
    expect(snapshot(mine)).toEqual(before);
    expect(existsSync(join(root, 'new-model'))).toBe(false);
    // A model folder that is not pretrain's (no TRAINING.md of it) is refused too.
    const model = join(root, 'hf-model');
    cpSync('public/models/piplay-tiny', model, { recursive: true });
    rmSync(join(model, 'TRAINING.md'));
    const hf = await train(['--out', model, '--steps', '1'], 'pretrain');
    expect(hf.stderr).toContain(`--out: ${model} holds files that npm run pretrain did not write`);
  }, 60_000);
});

describe('npm run train refuses settings that cannot work, before anything is built or written', () => {
  it('--tiny-hidden 65536, --turn-tokens 2100 (2048 context), an empty corpus', async () => {
    const out = join(root, 'never');
    const big = await train(['--out', out, '--preset', 'smoke', '--tiny-hidden', '65536']);
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/--tiny-hidden 65536, .*random-tiny would have \d+M parameters per policy/);
    const turns = await train(['--out', out, '--preset', 'smoke', '--turn-tokens', '2100']);
    expect(turns.code).toBe(1);
    expect(turns.stderr).toContain(
      "--turn-tokens: 2100 tokens per turn do not fit in the model's context of 2048 tokens (--tiny-max-positions)",
    );
    const corpus = join(root, 'empty.jsonl');
    writeFileSync(corpus, '\n');
    const empty = await train([
      '--out',
      out,
      '--preset',
      'smoke',
      '--corpus',
      corpus,
      '--student-questions',
      'examiner',
    ]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain(`--corpus: ${corpus} holds no passages (the corpus is empty)`);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

describe('npm run eval and npm run probe run the memory estimate first', () => {
  it('refuse a model no device holds from its config.json alone, before its weights are read', async () => {
    const model = join(root, 'huge');
    cpSync('public/models/piplay-tiny', model, { recursive: true });
    const config = JSON.parse(readFileSync(join(model, 'config.json'), 'utf8')) as Record<string, unknown>;
    delete config['head_dim'];
    Object.assign(config, {
      hidden_size: 65536,
      num_attention_heads: 512,
      num_key_value_heads: 512,
      intermediate_size: 262144,
      num_hidden_layers: 1024,
    });
    writeFileSync(join(model, 'config.json'), JSON.stringify(config));
    writeFileSync(join(model, 'model.safetensors'), 'not read'); // refused before this file is opened
    for (const command of ['eval', 'probe']) {
      const r = await train(['--model', model, '--preset', 'smoke'], command);
      expect(r.code, command).toBe(1);
      expect(r.stdout).toMatch(/^memory estimate: about \d+\.\d+ GiB/m);
      expect(r.stderr).toMatch(/this model cannot be evaluated on this GPU: .*It needs about \d+\.\d GiB, more than/);
      expect(r.stderr).not.toMatch(/safetensors/);
    }
  }, 60_000);

  it('--run given a file or a device, not a folder, says so (it said the run could not be listed)', async () => {
    for (const run of ['/dev/zero', join(root, 'a-run-file')]) {
      writeFileSync(join(root, 'a-run-file'), '{}');
      for (const command of ['eval', 'probe']) {
        const r = await train(['--run', run], command, 30_000);
        expect(r.stderr, `${command} ${run}`).toContain(
          `--run: ${run} is not a folder; give the folder of a run of npm run train`,
        );
        expect(r.code, `${command} ${run}`).toBe(1);
      }
    }
  }, 120_000);
});

describe('a diverging run (--lr 1e30)', () => {
  it('stops naming what diverged; the latest checkpoint stays finite and resumable', async () => {
    const out = join(root, 'diverge');
    const args = ['--out', out, '--preset', 'smoke', '--lr', '1e30', '--examiner-lr', '1e30', '--examiner-steps', '2'];
    const r = await train(args);
    expect(r.code, r.stderr).toBe(2);
    const message =
      /the examiner's weight norm is Infinity after the optimizer step at the examiner stage, iteration 1, step 0: training diverged.*--examiner-lr/;
    expect(r.stderr).toMatch(message);
    const storage = new DirStorage(out);
    const cp = await latestCheckpoint(storage);
    expect(cp?.state.cursor).toEqual({ iteration: 0, stage: 'examiner', step: 0 });
    for (const name of ['examiner', 'student', 'teacher']) {
      const file = parseSafetensors((await storage.get(`checkpoints/${cp!.slot}/${name}.safetensors`))!, name);
      for (const [t, entry] of file.tensors) expect(toFloat32(entry).every(Number.isFinite), `${name} ${t}`).toBe(true);
    }
    const again = await train(['--out', out, '--resume']);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain('resumed at iteration 1, examiner step 0');
    expect(again.stderr).toMatch(message);
  }, 120_000);

  it('with no held-out question it reports no held-out EM (not 0%), and the student folder is whole', async () => {
    const out = join(root, 'no-eval');
    const r = await train(['--out', out, '--preset', 'smoke', '--eval-per-hop', '0', '--examiner-steps', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/train: done in .*; the student is in/);
    expect(r.stdout).not.toContain('held-out EM');
    expect(readdirSync(join(out, 'student')).sort()).toEqual([
      'README.md',
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    // Its model card says the EM was not measured rather than 0%.
    expect(readFileSync(join(out, 'student', 'README.md'), 'utf8')).toContain('| after (this model) | not measured |');
    expect(readdirSync(out).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 120_000);

  it('two trains on one folder at once: one runs, the other is refused naming it, and the logs are whole', async () => {
    const out = join(root, 'twice');
    const args = ['--out', out, '--preset', 'smoke', '--seed', '3'];
    const [a, b] = await Promise.all([train(args), train(args)]);
    const codes = [a.code, b.code].sort();
    expect(codes, a.stderr + b.stderr).toEqual([0, 1]);
    const refused = a.code === 1 ? a : b;
    expect(refused.stderr).toMatch(
      /is in use by npm run train \(process \d+ on .*\); wait for it to finish or stop it/,
    );
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n');
    // The smoke run's own lines only: 1 examiner step, generation, 1 student step.
    expect(metrics).toHaveLength(3);
    expect(existsSync(join(out, 'piplay.lock'))).toBe(false);
  }, 180_000);

  it("a run's files without latest.json are refused, not replaced; --resume finds the slots; a cut file falls back", async () => {
    const out = join(root, 'lost-pointer');
    const first = await train(['--out', out, '--preset', 'smoke', '--seed', '5']);
    expect(first.code, first.stderr).toBe(0);
    const pointer = readFileSync(join(out, 'checkpoints', 'latest.json'));
    rmSync(join(out, 'checkpoints', 'latest.json'));
    const before = snapshot(out);
    const again = await train(['--out', out, '--preset', 'smoke', '--seed', '5']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds a run \(checkpoint at iteration 1, done step 0\); pass --resume/);
    expect(snapshot(out)).toEqual(before);
    // Both slots gone too: the logs are still the user's.
    const slots = join(root, 'slots');
    cpSync(join(out, 'checkpoints'), slots, { recursive: true });
    rmSync(join(out, 'checkpoints'), { recursive: true });
    const logsOnly = await train(['--out', out, '--preset', 'smoke', '--seed', '5']);
    expect(logsOnly.code).toBe(1);
    expect(logsOnly.stderr).toMatch(
      /holds a run's files \(.*config.json.*metrics.jsonl.*\) but no checkpoint to resume/,
    );
    cpSync(slots, join(out, 'checkpoints'), { recursive: true });
    writeFileSync(join(out, 'checkpoints', 'latest.json'), pointer);
    // The newest slot's optimizer file cut short: the other slot, named, is used.
    const { slot } = JSON.parse(pointer.toString()) as { slot: string };
    const cut = join(out, 'checkpoints', slot, 'student.optim.safetensors');
    writeFileSync(cut, readFileSync(cut).subarray(0, 1000));
    const resumed = await train(['--out', out, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr + resumed.stdout).toContain(
      `checkpoints/${slot}/student.optim.safetensors has 1000 bytes where the checkpoint wrote`,
    );
    expect(resumed.stderr + resumed.stdout).toContain(
      `using the other checkpoint, checkpoints/${slot === 'a' ? 'b' : 'a'}`,
    );
  }, 180_000);
});

describe('npm run train --resume refuses a checkpoint that is not of this run and base', () => {
  /** Just what saveCheckpoint reads of the policies (the resume is refused before any is loaded). */
  const policies = {
    saveWeights: async () => writeSafetensors([{ name: 'w', dtype: 'F32', shape: [1], data: new Uint8Array(4) }]),
    optimizerState: async () => ({ step: 0, params: [] }),
  } as unknown as Policies;

  /** A run folder of a LoRA run on `model` with run identity `id` and one checkpoint. */
  async function runFolder(dir: string, id: string, model: string, weights: Uint8Array): Promise<void> {
    const config = makeConfig('smoke', { model, policies: 'lora' });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ format: 'piplay-run', id }));
    for (const log of ['metrics', 'questions', 'rollouts', 'eval']) writeFileSync(join(dir, `${log}.jsonl`), '');
    const state: RunState = {
      version: 1,
      config,
      cursor: { iteration: 0, stage: 'examiner', step: 0 },
      rng: { seed: 0, scheme: 'labels-v1' },
      dataset: [],
      metrics: [],
      evals: [],
      records: { metrics: 0, questions: 0, rollouts: 0, eval: 0 },
      base: model,
      baseFiles: { 'model.safetensors': await sha256Hex(weights) },
      runId: id,
    };
    await saveCheckpoint(new DirStorage(dir), policies, state);
  }

  it("a base whose weights were replaced (same shapes), and another run's checkpoints copied in", async () => {
    const model = join(root, 'lora-base');
    cpSync('public/models/piplay-tiny', model, { recursive: true });
    const weights = readFileSync(join(model, 'model.safetensors'));
    const a = join(root, 'run-a');
    await runFolder(a, 'run-a', model, weights);
    // The same shapes, other values: the last byte of the last tensor.
    const other = Buffer.from(weights);
    other[other.length - 1]! ^= 1;
    writeFileSync(join(model, 'model.safetensors'), other);
    const before = snapshot(a);
    const changed = await train(['--out', a, '--resume']);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain(
      `--resume: ${a}: the base model ${model} is not the one this run was trained from: its model.safetensors has ` +
        'another SHA-256; put the original files back to resume, or start a new run on this model',
    );
    expect(snapshot(a)).toEqual(before);
    const ev = await train(['--run', a], 'eval');
    expect(ev.code).toBe(1);
    expect(ev.stderr).toContain('--run: the base model');
    writeFileSync(join(model, 'model.safetensors'), weights);
    // Run b's folder, with run a's checkpoints copied over its own.
    const b = join(root, 'run-b');
    await runFolder(b, 'run-b', model, weights);
    rmSync(join(b, 'checkpoints'), { recursive: true });
    cpSync(join(a, 'checkpoints'), join(b, 'checkpoints'), { recursive: true });
    const copied = await train(['--out', b, '--resume']);
    expect(copied.code).toBe(1);
    expect(copied.stderr).toContain(
      `--resume: ${b}: the checkpoints belong to run run-a, not to this folder's run run-b (its run.json)`,
    );
  }, 120_000);
});

describe('a model, a retriever or a folder that cannot work is refused before the run folder is touched', () => {
  it('max_position_embeddings below the prompts: eval and train refuse it (eval reported 0%)', async () => {
    const model = join(root, 'short-context');
    cpSync('public/models/piplay-tiny', model, { recursive: true });
    const config = JSON.parse(readFileSync(join(model, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(model, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 100 }));
    const ev = await train(['--model', model, '--preset', 'smoke', '--turn-tokens', '8'], 'eval');
    expect(ev.code).toBe(1);
    expect(ev.stderr).toMatch(
      /the student's prompt takes up to \d+ tokens, more than the model's context of 100 tokens \(max_position_embeddings in .*short-context's config.json\)/,
    );
    const out = join(root, 'short-run');
    const tr = await train(['--out', out, '--model', model, '--preset', 'smoke', '--turn-tokens', '8']);
    expect(tr.code).toBe(1);
    expect(tr.stderr).toMatch(/prompt takes up to \d+ tokens, more than the model's context of 100 tokens/);
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it('--retriever dense without its model (offline) is refused before the folder exists', async () => {
    const out = join(root, 'dense');
    const r = await train(['--out', out, '--preset', 'smoke', '--retriever', 'dense']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "--retriever dense: the embedding model 'Xenova/e5-base-v2' (--dense-model) could not be",
    );
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it('an --out that cannot be made is named with the cause (it was a raw error)', async () => {
    writeFileSync(join(root, 'a-file'), 'x');
    const out = join(root, 'a-file', 'run');
    const r = await train(['--out', out, '--preset', 'smoke']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`piplay: could not create ${out}: a part of the path is a file, not a folder (ENOTDIR)`);
  }, 60_000);

  it('an --out where the file system takes no folders (/proc) ends at once, naming it (it looped forever)', async () => {
    const out = `/proc/piplay-run-${process.pid}`;
    for (const [command, args] of [
      ['train', ['--preset', 'smoke']],
      ['experiment', ['--preset', 'smoke', '--arms', 'base', '--seeds', '1']],
      ['pretrain', ['--steps', '1']], // made before its training, which it made after
    ] as const) {
      const r = await train(['--out', out, ...args], command, 30_000);
      expect(r.stderr, command).toContain(`piplay: could not create ${out}: /proc takes no new folders`);
      expect(r.stdout, command).not.toMatch(/loss/);
      expect(r.code, command).toBe(1);
    }
  }, 120_000);
});

describe("npm run pretrain's memory plan", () => {
  it('refuses a step no device holds before generating its text (it was minutes of silence)', async () => {
    const out = join(root, 'pretrain-huge');
    const t0 = Date.now();
    const r = await train(['--out', out, '--world-out', '', '--batch', '65536', '--seq', '512'], 'pretrain');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^memory estimate: about \d+\.\d+ GiB of GPU memory/m);
    expect(r.stderr).toMatch(
      /this pretraining cannot fit this GPU: A layer's activation of 65536 × 512 tokens takes \d+ MiB, more than this GPU's largest buffer/,
    );
    expect(r.stderr).toContain('lower it with rows or tokens per step (--batch, --seq)');
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
