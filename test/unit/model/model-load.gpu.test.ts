// Loading a model folder refuses weights and tokenizers the model cannot use, before anything reaches the
// GPU, with messages that name the tensor or the numbers and the files: NaN/Inf weights, a weight stored
// as an integer, a tokenizer whose ids go beyond the model's vocabulary.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { configToJson } from '../../../src/model/config.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { loadModel } from '../../../src/model/io.ts';
import { fromFloat32, nonFiniteValues, writeSafetensors } from '../../../src/model/safetensors.ts';
import type { Dtype, TensorToWrite } from '../../../src/model/safetensors.ts';
import { folderBase } from '../../../src/selfplay/base-model.ts';
import { testEngine } from '../../helpers/engine.ts';

const enc = new TextEncoder();
const TOKENIZER = new URL('../../assets/tiny-sp-tokenizer/', import.meta.url).pathname;
const UP = 'model.layers.0.mlp.up_proj.weight';

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

/** A tiny model folder; `edit` may change a tensor's values or dtype before it is written. */
// biome-ignore lint/suspicious/noConfusingVoidType: an edit that changes only values returns nothing
type Edit = (name: string, data: Float32Array) => Dtype | void;
function folder(vocabSize: number, edit: Edit = () => {}): Map<string, Uint8Array> {
  const cfg = tinyConfig({ vocabSize, hidden: 8, layers: 1, heads: 2, kvHeads: 1 });
  const tensors: TensorToWrite[] = [];
  for (const [name, t] of initWeights(cfg, { seed: 1 })) {
    const dtype = edit(name, t.data) ?? 'F32';
    const float = dtype as 'F32' | 'F16' | 'BF16';
    const data = dtype === 'I64' ? new Uint8Array(t.data.length * 8) : fromFloat32(t.data, float);
    tensors.push({ name, dtype, shape: t.shape, data });
  }
  return new Map([
    ['config.json', enc.encode(JSON.stringify(configToJson(cfg)))],
    ['model.safetensors', writeSafetensors(tensors)],
    ['tokenizer.json', readFileSync(TOKENIZER + 'tokenizer.json')],
    ['tokenizer_config.json', readFileSync(TOKENIZER + 'tokenizer_config.json')],
  ]);
}

describe('weights that are not finite', () => {
  it('a NaN in one tensor is refused at load, naming the tensor, the file and what to do', async () => {
    const files = folder(300, (name, d) => {
      if (name === UP) d[5] = NaN;
    });
    await expect(loadModel(e, filesFromMap(files), { source: 'my-model' })).rejects.toThrow(
      new RegExp(
        `my-model: the weights are not finite: tensor "${UP}" in model\\.safetensors holds 1 NaN or infinite values ` +
          'of \\d+ \\(the first at index 5\\).*earlier checkpoint',
      ),
    );
  });

  it('infinities in F16 and BF16 weights and in a shard are found and the shard is named', async () => {
    for (const dtype of ['F16', 'BF16'] as const) {
      const files = folder(300, (name, d) => {
        if (name === UP) d.fill(Infinity, 2, 5);
        return dtype;
      });
      const want = new RegExp(`${UP}" in model\\.safetensors holds 3 NaN`);
      await expect(loadModel(e, filesFromMap(files), { source: dtype })).rejects.toThrow(want);
    }
    // The same folder as two shards: the message names the shard that holds the tensor.
    const cfg = tinyConfig({ vocabSize: 300, hidden: 8, layers: 1, heads: 2, kvHeads: 1 });
    const w = [...initWeights(cfg, { seed: 1 })];
    w.find(([n]) => n === UP)![1].data[0] = -Infinity;
    const half = Math.ceil(w.length / 2);
    const shard = (part: typeof w) =>
      writeSafetensors(part.map(([name, t]) => ({ name, dtype: 'F32' as const, shape: t.shape, data: t.data })));
    const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    const weightMap = Object.fromEntries(w.map(([n], i) => [n, names[i < half ? 0 : 1]]));
    const sharded = filesFromMap({
      'config.json': JSON.stringify(configToJson(cfg)),
      'model.safetensors.index.json': JSON.stringify({ weight_map: weightMap }),
      [names[0]!]: shard(w.slice(0, half)),
      [names[1]!]: shard(w.slice(half)),
    });
    const want = new RegExp(`"${UP}" in ${weightMap[UP]!.replace(/\./g, '\\.')} holds 1`);
    await expect(loadModel(e, sharded, { source: 'sharded' })).rejects.toThrow(want);
  });

  it('a finite model loads, and nonFiniteValues counts NaN, +Inf and -Inf from the raw bits', async () => {
    const model = await loadModel(e, filesFromMap(folder(300)), { source: 'ok' });
    model.dispose();
    const vals = [1, NaN, -2, Infinity, 65504, -Infinity, 0];
    for (const dtype of ['F32', 'F16', 'BF16'] as const) {
      const data = fromFloat32(vals, dtype);
      expect(nonFiniteValues({ dtype, shape: [vals.length], data })).toEqual({ count: 3, first: 1 });
    }
    const f64 = new Uint8Array(Float64Array.from(vals).buffer);
    expect(nonFiniteValues({ dtype: 'F64', shape: [vals.length], data: f64 })).toEqual({ count: 3, first: 1 });
    // Unaligned views are read too.
    const shifted = new Uint8Array(1 + 4 * vals.length);
    shifted.set(fromFloat32(vals, 'F32'), 1);
    const unaligned = { dtype: 'F32' as const, shape: [vals.length], data: shifted.subarray(1) };
    expect(nonFiniteValues(unaligned)).toEqual({ count: 3, first: 1 });
  });
});

describe('weights that are not floats', () => {
  it('an I64 weight is refused naming the tensor, the file and what to do', async () => {
    const files = folder(300, (name) => (name === UP ? 'I64' : undefined));
    await expect(loadModel(e, filesFromMap(files), { source: 'int-model' })).rejects.toThrow(
      new RegExp(`int-model: tensor "${UP}" in model\\.safetensors: dtype I64 is not a float type.*Re-save the model`),
    );
  });
});

describe('a tokenizer beyond the model vocabulary', () => {
  it('is refused at load with both sizes and both files named', async () => {
    // The test tokenizer has 277 ids; a model with 200 embedding rows cannot take them.
    await expect(folderBase(e, filesFromMap(folder(200)), 'small-vocab')).rejects.toThrow(
      /small-vocab: the tokenizer \(tokenizer\.json, tokenizer_config\.json\) has 277 ids \(0 to 276.*_size is 200/,
    );
    // A model vocabulary at least as large as the tokenizer's is fine (padded embeddings are common).
    for (const v of [277, 300]) {
      expect((await folderBase(e, filesFromMap(folder(v)), 'fits')).tokenizer.vocabSize).toBe(277);
    }
  });
});
