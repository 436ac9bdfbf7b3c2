// An exported folder is put in place whole: a write that fails half way leaves the folder there before untouched and
// nothing under the final name; a finished one replaces it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFolderAtomically } from '../../../src/cli/atomic-folder.ts';

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
