// Clear errors before work starts, and file errors that name the file: random-tiny too large to build,
// a turn budget the context cannot hold, ENOSPC/ENOTDIR with the path and the cause, and the temporary
// files a killed writer leaves behind.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirStorage } from '../../../src/cli/fs-storage.ts';
import { RunFolder } from '../../../src/cli/run-folder.ts';
import { checkContext, makeConfig, TINY_MAX_PARAMS, tinyParams } from '../../../src/selfplay/config.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';

const root = mkdtempSync(join(tmpdir(), 'piplay-errors-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('settings refused up front', () => {
  it('random-tiny larger than a test model may be', () => {
    expect(() => makeConfig('smoke', { tinyHidden: 65536 })).toThrow(
      /--tiny-hidden 65536, --tiny-layers 1, --tiny-vocab 1024: random-tiny would have \d+M parameters per policy, more than the 100M/,
    );
    expect(() => makeConfig('smoke', { tinyHidden: 1024, tinyLayers: 4 })).not.toThrow();
    expect(tinyParams(makeConfig('smoke', { tinyHidden: 1024, tinyLayers: 4 }))).toBeLessThan(TINY_MAX_PARAMS);
  });

  it('tinyParams counts what initWeights makes', () => {
    const c = makeConfig('smoke', { tinyHidden: 48, tinyLayers: 2, tinyHeads: 4, tinyKvHeads: 2, tinyVocab: 300 });
    const w = initWeights(
      tinyConfig({ vocabSize: 300, hidden: 48, layers: 2, heads: 4, kvHeads: 2, maxPositions: 64 }),
      { seed: 1 },
    );
    expect(tinyParams(c)).toBe([...w.values()].reduce((n, t) => n + t.data.length, 0));
  });

  it('a turn budget that does not fit in the context, naming both settings', () => {
    expect(() => makeConfig('smoke', { turnTokens: 2100 })).toThrow(
      /--turn-tokens: 2100 tokens per turn do not fit in the model's context of 2048 tokens \(--tiny-max-positions\)/,
    );
    expect(() => checkContext({ turnTokens: 600 }, 512, 'max_position_embeddings in m/config.json')).toThrow(
      /context of 512 tokens \(max_position_embeddings in m\/config.json\)/,
    );
    expect(() => checkContext({ turnTokens: 100 }, 512, 'x')).not.toThrow();
  });
});

describe('file errors name the file and the cause', () => {
  it('a full disk (ENOSPC) while writing a checkpoint file or a log', async () => {
    const s = new DirStorage(join(root, 'full'));
    mkdirSync(join(root, 'full', 'checkpoints'), { recursive: true });
    // The temporary file put() writes is a link to /dev/full: every write fails with ENOSPC.
    symlinkSync('/dev/full', join(root, 'full', 'checkpoints', `latest.json.tmp-${process.pid}`));
    const target = join(root, 'full', 'checkpoints', 'latest.json');
    await expect(s.put('checkpoints/latest.json', new Uint8Array(8))).rejects.toThrow(
      `piplay: could not write ${target}: no space is left on the device; free some and resume the run (--resume) (ENOSPC)`,
    );
    expect(readdirSync(join(root, 'full', 'checkpoints'))).toEqual([]); // the temporary file is gone
    const f = new RunFolder(join(root, 'full'));
    symlinkSync('/dev/full', join(root, 'full', 'metrics.jsonl'));
    expect(() => f.append('metrics', { step: 0 })).toThrow(
      `could not write ${join(root, 'full', 'metrics.jsonl')}: no space is left on the device`,
    );
  });

  it('a path through a file (ENOTDIR)', async () => {
    writeFileSync(join(root, 'afile'), 'x');
    const s = new DirStorage(join(root, 'afile'));
    await expect(s.put('checkpoints/a/state.json', new Uint8Array(1))).rejects.toThrow(
      /could not create .*afile\/checkpoints\/a: a part of the path is a file, not a folder \(ENOTDIR\)/,
    );
  });

  it("removes the temporary files of a killed writer, not its own process's", async () => {
    const dir = join(root, 'left');
    mkdirSync(join(dir, 'checkpoints', 'a'), { recursive: true });
    writeFileSync(join(dir, 'checkpoints', 'a', 'student.safetensors.tmp-999999'), 'torn');
    writeFileSync(join(dir, 'checkpoints', `latest.json.tmp-${process.pid}`), 'mine');
    writeFileSync(join(dir, 'checkpoints', 'a', 'state.json'), '{}');
    const s = new DirStorage(dir);
    expect(await s.list()).toEqual(['checkpoints/a/state.json']);
    expect(await s.removeLeftovers()).toEqual(['checkpoints/a/student.safetensors.tmp-999999']);
    expect(existsSync(join(dir, 'checkpoints', 'a', 'student.safetensors.tmp-999999'))).toBe(false);
    expect(existsSync(join(dir, 'checkpoints', `latest.json.tmp-${process.pid}`))).toBe(true);
  });
});
