// Checkpoint names and file names that become paths in an exported zip: an imported folder named '..' (or
// holding files named with separators or control characters) never yields an entry outside the zip's one
// folder, neither on import nor on export of an entry stored earlier under such a name.
import { describe, expect, it } from 'vitest';
import { configToJson } from '../../../src/model/config.ts';
import { tinyConfig } from '../../../src/model/init.ts';
import { nodeHost } from '../../../src/gpu/host/node.ts';
import { WorkerApi } from '../../../src/worker/api.ts';
import { BrowserCheckpoints, memoryBackend } from '../../../src/worker/checkpoint-store.ts';
import { isPlainFileName, safeName } from '../../../src/worker/names.ts';
import { readZip, writeZip } from '../../../src/worker/zip.ts';

const enc = new TextEncoder();
const folderFiles = (): [string, Uint8Array][] => [
  ['config.json', enc.encode(JSON.stringify(configToJson(tinyConfig({ vocabSize: 16, hidden: 8, layers: 1 }))))],
  ['model.safetensors', new Uint8Array(16)],
  ['tokenizer.json', enc.encode('{"model":{}}')],
  ['tokenizer_config.json', enc.encode('{}')],
];

/** A zip holding `files` under folder `top` (or at its root when top is null). */
async function zipOf(top: string | null, files: [string, Uint8Array][]): Promise<Uint8Array> {
  const blob = writeZip(files.map(([f, data]) => ({ name: top === null ? f : `${top}/${f}`, data })));
  return new Uint8Array(await blob.arrayBuffer());
}

/** Every entry of an exported zip sits inside one plain folder and is a plain file name. */
async function expectContained(blob: Blob): Promise<string[]> {
  const names = (await readZip(new Uint8Array(await blob.arrayBuffer()))).map((e) => e.name);
  for (const n of names) {
    const parts = n.split('/');
    expect(parts.length, n).toBe(2);
    expect(isPlainFileName(parts[0]!) && !parts[0]!.startsWith('.'), n).toBe(true);
    expect(isPlainFileName(parts[1]!), n).toBe(true);
  }
  return names;
}

describe('safeName and isPlainFileName', () => {
  it('leave no dots-only name, separator, control character or absolute path', () => {
    for (const bad of ['..', '.', '...', '', '/', '../..', '..\\..', '/etc', 'C:\\x', '\u0000', ' ', '\u001b[31m']) {
      const s = safeName(bad, 'fallback');
      expect(s === 'fallback' || !/^\.|[/\\\u0000-\u001f]/.test(s), JSON.stringify(bad)).toBe(true);
      expect(s.includes('..'), JSON.stringify(bad)).toBe(false);
    }
    expect(safeName('..', 'model')).toBe('model');
    expect(safeName('../x', 'model')).toBe('_x');
    expect(safeName('/abs/path', 'model')).toBe('_abs_path');
    expect(safeName('.hidden', 'model')).toBe('hidden');
    expect(safeName('my model: v1.2', 'model')).toBe('my_model_v1.2');
    expect(safeName('modèle-1', 'model')).toBe('modèle-1');
    expect(safeName('a\u0000b\nc', 'model')).toBe('a_b_c');
    for (const f of ['config.json', 'model-00001-of-00002.safetensors', 'tokenizer.json']) {
      expect(isPlainFileName(f)).toBe(true);
    }
    const unsafe = ['', '.', '..', '../config.json', '..\\model.safetensors', '/model.safetensors'];
    for (const f of [...unsafe, 'tokenizer\u0001.json', 'C:model.safetensors']) {
      expect(isPlainFileName(f), JSON.stringify(f)).toBe(false);
    }
  });
});

describe('import and export of checkpoint names', () => {
  it("a zip whose folder is '..' imports under a safe name and exports inside one folder", async () => {
    const api = new WorkerApi(nodeHost(), memoryBackend());
    const meta = await api.importCheckpoint({ kind: 'zip', name: 'x.zip', bytes: await zipOf('..', folderFiles()) });
    expect(meta.name).toBe('imported');
    const out = await api.exportCheckpoint(meta.name);
    expect(out.fileName).toBe('imported.zip');
    expect((await expectContained(out.blob)).sort()).toEqual(
      folderFiles()
        .map(([f]) => `imported/${f}`)
        .sort(),
    );
  });

  it('a zip file named with separators and dots, and entries with unsafe names, are cleaned on import', async () => {
    const api = new WorkerApi(nodeHost(), memoryBackend());
    const files: [string, Uint8Array][] = [
      ...folderFiles(),
      ['..\\model.safetensors', new Uint8Array(4)],
      ['tokenizer\u0001.json', new Uint8Array(1)],
    ];
    const meta = await api.importCheckpoint({ kind: 'zip', name: '../../evil.zip', bytes: await zipOf(null, files) });
    expect(meta.name).toBe('_evil');
    expect(meta.files!.sort()).toEqual(
      folderFiles()
        .map(([f]) => f)
        .sort(),
    );
    await expectContained((await api.exportCheckpoint(meta.name)).blob);
  });

  it("an entry stored earlier as '..' (with an unsafe file) still exports inside one folder", async () => {
    const kv = memoryBackend();
    const stored = new Map([...folderFiles(), ['../model.safetensors', new Uint8Array(4)]]);
    await new BrowserCheckpoints(kv).importModel('..', stored);
    const out = await new WorkerApi(nodeHost(), kv).exportCheckpoint('..');
    expect(out.fileName).toBe('model.zip');
    expect((await expectContained(out.blob)).sort()).toEqual(
      folderFiles()
        .map(([f]) => `model/${f}`)
        .sort(),
    );
  });
});
