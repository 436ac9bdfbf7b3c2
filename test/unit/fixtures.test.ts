// Every PyTorch reference case in ../shared/fixtures, through the same runner as `npm run fixtures`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/gpu/engine.ts';
import { loadFixture, runFixture } from '../../src/fixtures/runner.ts';
import { testEngine } from '../helpers/engine.ts';

const DIR = new URL('../../../shared/fixtures/', import.meta.url).pathname;
const files = existsSync(DIR) ? readdirSync(DIR).filter((f) => f.endsWith('.json')).sort() : [];

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

describe.skipIf(files.length === 0)('shared fixtures', () => {
  for (const file of files) {
    it(file.replace(/\.json$/, ''), async () => {
      const fx = await loadFixture(readFileSync(DIR + file, 'utf8'), file);
      const r = await runFixture(e, fx, file, DIR);
      expect(r.ok, `${r.name} (${r.op}): worst ${r.worst.toFixed(2)}x tolerance: ${r.detail}`).toBe(true);
    });
  }
});

describe('fixture runner', () => {
  it('reports an unknown op as not implemented', async () => {
    const fx = await loadFixture(JSON.stringify({ op: 'no_such_op', params: {}, inputs: {}, outputs: {}, tol: { rtol: 0, atol: 0 } }), 'x.json');
    const r = await runFixture(e, fx, 'x', DIR);
    expect(r.ok).toBe(false);
    expect(r.detail).toMatch(/not implemented/);
  });

  it.skipIf(files.length === 0)('fails a case whose reference is off', async () => {
    const good = JSON.parse(readFileSync(DIR + 'matmul_rect.json', 'utf8'));
    good.outputs.c.data[5] += 1;
    const r = await runFixture(e, await loadFixture(JSON.stringify(good), 'bad.json'), 'bad', DIR);
    expect(r.ok).toBe(false);
    expect(r.detail).toMatch(/output 'c'\[5\]/);
  });

  it('refuses a malformed file with its name', async () => {
    await expect(loadFixture('{"op": 1}', 'broken.json')).rejects.toThrow(/broken\.json/);
    await expect(loadFixture('not json', 'broken.json')).rejects.toThrow(/broken\.json.*JSON/);
  });
});
