// Inputs are regular files of a known size before they are read: a corpus that is /dev/zero, weights linked to
// /dev/zero, a tokenizer.json linked to /dev/urandom and a config.json that is a FIFO each end in a clear error
// naming the file (they used to read forever or block), a folder named model.safetensors is named as a folder, a
// held-out file with no question is refused, and a log cut mid-line or deleted is reported on resume.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEnvironment } from '../../../src/cli/setup.ts';
import { RunFolder } from '../../../src/cli/run-folder.ts';
import { filesFromNodeFolder } from '../../../src/gpu/host/node-files.ts';
import { readInputFile, readInputJson } from '../../../src/node/input-file.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';

const root = mkdtempSync(join(tmpdir(), 'piplay-input-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Fails the test instead of hanging it when a read never ends. */
const quickly = <T>(p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, no) => setTimeout(() => no(new Error('the read did not end')), 5000))]);

describe('inputs are regular files of a known size', () => {
  it('--corpus /dev/zero and --eval-set /dev/null are refused by name', () => {
    expect(() => buildEnvironment(makeConfig('smoke', { corpus: '/dev/zero' }))).toThrow(
      '--corpus: could not read /dev/zero: it is a character device (like /dev/zero), not a regular file',
    );
    expect(() => buildEnvironment(makeConfig('smoke', { evalSet: '/dev/null' }))).toThrow(
      /--eval-set: could not read \/dev\/null: it is a character device/,
    );
  });

  it('an empty held-out file is refused, not reported as EM 0% of 0 questions', () => {
    const empty = join(root, 'empty.jsonl');
    writeFileSync(empty, '\n');
    expect(() => buildEnvironment(makeConfig('smoke', { evalSet: empty }))).toThrow(
      `--eval-set: ${empty} holds no questions`,
    );
  });

  it('model files linked to devices, a FIFO config.json and a folder named model.safetensors', async () => {
    const dir = join(root, 'model');
    mkdirSync(dir);
    symlinkSync('/dev/zero', join(dir, 'model.safetensors'));
    symlinkSync('/dev/urandom', join(dir, 'tokenizer.json'));
    execFileSync('mkfifo', [join(dir, 'config.json')]);
    const read = filesFromNodeFolder(dir);
    await expect(quickly(read('model.safetensors'))).rejects.toThrow(
      `could not read ${join(dir, 'model.safetensors')}: it is a character device`,
    );
    await expect(quickly(read('tokenizer.json'))).rejects.toThrow(/tokenizer.json: it is a character device/);
    await expect(quickly(read('config.json'))).rejects.toThrow(
      `could not read ${join(dir, 'config.json')}: it is a FIFO (a named pipe), not a regular file`,
    );
    const folder = join(root, 'model2');
    mkdirSync(join(folder, 'model.safetensors'), { recursive: true });
    await expect(filesFromNodeFolder(folder)('model.safetensors')).rejects.toThrow(
      `could not read ${join(folder, 'model.safetensors')}: it is a folder, not a file`,
    );
  });

  it('a JSON file cut short (a result.json of experiment --resume) is named as such', () => {
    const cut = join(root, 'result.json');
    writeFileSync(cut, '{"arm": "piplay", "em": [0.1');
    expect(() => readInputJson(cut)).toThrow(
      new RegExp(`^piplay: ${cut} is not valid JSON \\(.*\\): it may have been cut short by a full disk or a kill$`),
    );
  });

  it('a file past its cap is refused before it is read', () => {
    const big = join(root, 'big.json');
    writeFileSync(big, 'x'.repeat(2000));
    expect(() => readInputFile(big, { maxBytes: 1000, what: 'config.json' })).toThrow(
      /big.json: it has 0.002 MiB, more than the 0.001 MiB config.json may have/,
    );
    expect(readInputFile(big).length).toBe(2000);
  });
});

describe('a resumed run says what its logs lost', () => {
  it('a log cut mid-line or deleted is reported, and the cut line dropped', () => {
    const dir = join(root, 'run');
    const f = new RunFolder(dir);
    writeFileSync(join(dir, 'metrics.jsonl'), '{"step":0}\n{"step":1}\n{"st');
    writeFileSync(join(dir, 'questions.jsonl'), '{"q":0}\n{"q":1}\n{"q":2}\n');
    writeFileSync(join(dir, 'rollouts.jsonl'), '');
    const notes = f.truncateLogs({ metrics: 3, questions: 2, rollouts: 1, eval: 2 });
    expect(notes).toEqual([
      `the last line of ${join(dir, 'metrics.jsonl')} was cut mid-way (4 characters); it was dropped`,
      `${join(dir, 'metrics.jsonl')} holds 2 of the 3 records the checkpoint counts (it was cut or edited); the ` +
        'missing ones are not written again',
      `${join(dir, 'rollouts.jsonl')} holds 0 of the 1 records the checkpoint counts (it was cut or edited); the ` +
        'missing ones are not written again',
      `${join(dir, 'eval.jsonl')} is missing: the 2 records the checkpoint counts in it are lost; it starts again here`,
    ]);
    // What was logged after the checkpoint (questions' third line) goes without a word.
    expect(f.truncateLogs({ metrics: 2, questions: 2, rollouts: 0, eval: 0 })).toEqual([]);
  });
});
