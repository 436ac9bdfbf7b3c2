// An exported folder or file is put in place whole: a write that fails half way leaves the folder there before
// untouched and nothing under the final name; a finished one replaces it. What a killed writer leaves in a run folder
// is the run's own: --resume accepts the folder and cleans it, putting back a folder the kill left missing.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanLeftovers, writeFileAtomically, writeFolderAtomically } from '../../../src/cli/atomic-folder.ts';
import { checkOutFolder } from '../../../src/cli/out-folder.ts';
import { RUN_NAMES, trainOutRule } from '../../../src/cli/run-folder.ts';

/** A pid no process has (pids are below 2^22 on Linux). */
const DEAD = 4_194_400;

const root = mkdtempSync(join(tmpdir(), 'piplay-atomic-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const bytes = (s: string) => new TextEncoder().encode(s);

describe('writeFolderAtomically', () => {
  it('a failed write leaves nothing new under the final name; a whole one replaces the folder', () => {
    const dir = join(root, 'student');
    const broken: [string, Uint8Array][] = [
      ['config.json', bytes('{}')],
      ['no-such-folder/model.safetensors', bytes('x')],
    ];
    expect(() => writeFolderAtomically(dir, broken)).toThrow(/could not write .*model.safetensors/);
    expect(existsSync(dir)).toBe(false);
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.safetensors'), 'old');
    expect(() => writeFolderAtomically(dir, broken)).toThrow();
    expect(readFileSync(join(dir, 'model.safetensors'), 'utf8')).toBe('old');
    writeFolderAtomically(dir, [
      ['config.json', bytes('{"a":1}')],
      ['model.safetensors', bytes('new')],
    ]);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'model.safetensors']);
    expect(readFileSync(join(dir, 'model.safetensors'), 'utf8')).toBe('new');
    // Nothing left beside it.
    expect(readdirSync(root)).toEqual(['student']);
  });
});

describe('writeFileAtomically', () => {
  it('never replaces a file unless asked, and leaves nothing beside it', () => {
    const dir = join(root, 'files');
    mkdirSync(dir);
    const f = join(dir, 'data.jsonl');
    writeFileAtomically(f, 'one\n', { replace: false });
    expect(() => writeFileAtomically(f, 'two\n', { replace: false })).toThrow(
      `piplay: ${f} exists; piplay never overwrites a file: give a new path`,
    );
    expect(readFileSync(f, 'utf8')).toBe('one\n');
    writeFileAtomically(f, 'three\n', { replace: true });
    expect(readFileSync(f, 'utf8')).toBe('three\n');
    expect(() => writeFileAtomically(join(dir, 'nope', 'x'), 'x', { replace: true })).toThrow(
      `piplay: could not write ${join(dir, 'nope', 'x')}: it or a folder above it does not exist (ENOENT)`,
    );
    expect(readdirSync(dir)).toEqual(['data.jsonl']);
  });
});

describe("a run folder's own leftovers", () => {
  it('a kill during the final export: --resume accepts the folder and cleans it (it refused the run)', () => {
    const run = join(root, 'run');
    mkdirSync(join(run, 'checkpoints'), { recursive: true });
    writeFileSync(join(run, 'config.json'), JSON.stringify({ examinerSteps: 1, studentSteps: 1 }));
    mkdirSync(join(run, `.student.tmp-${DEAD}`));
    writeFileSync(join(run, `.student.tmp-${DEAD}`, 'config.json'), '{}');
    mkdirSync(join(run, `.student.tmp-${process.pid}`)); // a live writer's (this process): left alone
    expect(checkOutFolder(run, trainOutRule(true))).toBe('own');
    expect(cleanLeftovers(run, RUN_NAMES)).toEqual([
      `removed ${join(run, `.student.tmp-${DEAD}`)}, left by a process killed while writing student`,
    ]);
    expect(readdirSync(run).sort()).toEqual([`.student.tmp-${process.pid}`, 'checkpoints', 'config.json']);
    rmSync(join(run, `.student.tmp-${process.pid}`), { recursive: true });
    // Killed between its two renames: the student is missing, its previous version beside it.
    mkdirSync(join(run, `.student.old-${DEAD}`));
    mkdirSync(join(run, `.student.tmp-${DEAD}`));
    expect(cleanLeftovers(run, RUN_NAMES)).toEqual([
      `put back ${join(run, 'student')} from .student.old-${DEAD}, left by a process killed while replacing it`,
      `removed ${join(run, `.student.tmp-${DEAD}`)}, left by a process killed while writing student`,
    ]);
    expect(readdirSync(run).sort()).toEqual(['checkpoints', 'config.json', 'student']);
    // Someone else's hidden files are still not the run's.
    writeFileSync(join(run, '.notes.tmp-1'), 'mine');
    expect(() => checkOutFolder(run, trainOutRule(true))).toThrow(/did not write \(\.notes\.tmp-1\)/);
  });
});
