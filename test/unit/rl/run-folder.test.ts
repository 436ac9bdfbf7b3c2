// The Node side of a run folder: checkpoint files through DirStorage, and logs cut back on resume.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirStorage } from '../../../src/cli/fs-storage.ts';
import { RunFolder } from '../../../src/cli/run-folder.ts';
import { parseArgs } from '../../../src/cli/args.ts';

const dir = mkdtempSync(join(tmpdir(), 'piplay-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('run folder', () => {
  it('stores, lists and reads back checkpoint files', async () => {
    const s = new DirStorage(dir);
    await s.put('checkpoints/a/state.json', new TextEncoder().encode('{"x":1}'));
    await s.put('checkpoints/latest.json', new Uint8Array([1, 2, 3]));
    expect(await s.list()).toEqual(['checkpoints/a/state.json', 'checkpoints/latest.json']);
    expect(Array.from((await s.get('checkpoints/latest.json'))!)).toEqual([1, 2, 3]);
    expect(await s.get('checkpoints/b/state.json')).toBeNull();
    await expect(s.put('../escape', new Uint8Array(1))).rejects.toThrow(/bad storage name/);
  });

  it('cuts each log back to the records a checkpoint had seen', () => {
    const f = new RunFolder(dir);
    f.resetLogs();
    for (let i = 0; i < 5; i++) f.log({ type: 'metrics', metrics: { stage: 'student', iteration: 0, step: i } });
    f.log({ type: 'eval', metrics: { iteration: 0, em: 0, emByHop: {}, searchesPerRollout: 0, redundancy: 0, n: 0 } });
    f.truncateLogs({ metrics: 3, questions: 0, rollouts: 0, eval: 0 });
    const lines = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).step)).toEqual([0, 1, 2]);
    expect(readFileSync(join(dir, 'eval.jsonl'), 'utf8')).toBe('');
  });

  it('parses command lines and names unknown or bad options', () => {
    const a = parseArgs(
      ['--out', 'x', '--topk', '25', '--tail=off', '--resume', '--lambda', '0.1,0.03'],
      ['out'],
      ['resume'],
    );
    expect(a.own).toEqual({ out: 'x', resume: 'true' });
    expect(a.settings).toEqual({ topK: 25, tail: false, lambda: [0.1, 0.03] });
    expect(parseArgs(['--beta', '-0'], [], []).settings).toEqual({ beta: -0 });
    expect(() => parseArgs(['--nope', '1'], [], [])).toThrow(/unknown option --nope/);
    expect(() => parseArgs(['--topk'], [], [])).toThrow(/--topk needs a value/);
    expect(() => parseArgs(['--kl', 'up'], [], [])).toThrow(/--kl: 'up' is not allowed; use one of reverse, forward/);
  });
});
