// A corpus or held-out file that is not UTF-8 is refused, naming the file and the first bad line (before, its bytes
// became U+FFFD characters in the passages without a word).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEnvironment } from '../../../src/cli/setup.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';

const root = mkdtempSync(join(tmpdir(), 'piplay-utf8-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('text files are UTF-8', () => {
  it('refuses a corpus with Latin-1 bytes on line 2, and reads a UTF-8 one with the same text', () => {
    const good = '{"id":"a","title":"A","text":"Zürich"}\n{"id":"b","title":"B","text":"Málaga"}\n';
    const bad = join(root, 'latin1.jsonl');
    const [line1, line2] = good.split('\n');
    writeFileSync(bad, Buffer.concat([Buffer.from(`${line1}\n`, 'utf8'), Buffer.from(`${line2}\n`, 'latin1')]));
    expect(() => buildEnvironment(makeConfig('smoke', { corpus: bad, evalPerHop: 0 }))).toThrow(
      `--corpus: ${bad} is not UTF-8 text (line 2 is not); save it as UTF-8`,
    );
    const ok = join(root, 'utf8.jsonl');
    writeFileSync(ok, good);
    expect(buildEnvironment(makeConfig('smoke', { corpus: ok, evalPerHop: 0 })).passages.map((p) => p.text)).toEqual([
      'Zürich',
      'Málaga',
    ]);
  });
});
