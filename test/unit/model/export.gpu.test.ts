// Export of a model folder's student: the checkpoint's dtype (BF16 stays BF16), every config.json field that
// was read (pad_token_id, head_dim, fields piplay does not know), generation_config.json as it was, and a chat
// template kept in chat_template.jinja (as transformers 5 saves it).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import { configToJson } from '../../../src/model/config.ts';
import { CausalLM } from '../../../src/model/decoder.ts';
import { filesFromMap } from '../../../src/model/files.ts';
import { initWeights, tinyConfig } from '../../../src/model/init.ts';
import { exportModel } from '../../../src/model/io.ts';
import { loadTokenizer } from '../../../src/model/tokenizer.ts';
import { fromFloat32, parseSafetensors, writeSafetensors } from '../../../src/model/safetensors.ts';
import { tokenizerFiles, trainTokenizer } from '../../../src/model/tokenizer-train.ts';
import { folderBase } from '../../../src/selfplay/base-model.ts';
import { testEngine } from '../../helpers/engine.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

let e: Engine;
beforeAll(async () => {
  e = await testEngine();
});

/** An HF folder in memory: a tiny Llama in BF16 with extra config fields and a generation_config.json. */
function bf16Folder(): { files: Map<string, Uint8Array>; config: Record<string, unknown>; generation: Uint8Array } {
  const tok = trainTokenizer(['hello world, the tiny model says hello'], { vocabSize: 300 });
  const cfg = {
    ...tinyConfig({ vocabSize: tok.vocabSize, hidden: 32, layers: 1, heads: 2, kvHeads: 1 }),
    torchDtype: 'bfloat16' as const,
  };
  const config = {
    ...configToJson(cfg),
    head_dim: 16,
    pad_token_id: 3,
    initializer_range: 0.02,
    my_field: { a: [1, 2] },
  };
  const weights = initWeights(cfg, { seed: 5 });
  const tensors = [...weights].map(([name, t]) => ({
    name,
    dtype: 'BF16' as const,
    shape: t.shape,
    data: fromFloat32(t.data, 'BF16'),
  }));
  const generation = enc.encode(
    JSON.stringify({ bos_token_id: 1, eos_token_id: [2, 3], temperature: 0.6, top_p: 0.95 }),
  );
  const files = new Map<string, Uint8Array>([
    ['config.json', enc.encode(JSON.stringify(config))],
    ['model.safetensors', writeSafetensors(tensors)],
    ['generation_config.json', generation],
    ...Object.entries(tokenizerFiles(tok)),
  ]);
  return { files, config, generation };
}

describe('exportModel of a model folder', () => {
  it('writes BF16 weights, keeps every config field it read and copies generation_config.json', async () => {
    const { files, config, generation } = bf16Folder();
    const base = await folderBase(e, filesFromMap(files), 'bf16 folder');
    const model = CausalLM.fromHost(e, base.cfg, (n) => base.weights.get(n));
    const out = await exportModel(model, { extraFiles: base.tokenizerFiles, config: base.configJson });
    model.dispose();

    const written = JSON.parse(dec.decode(out.get('config.json'))) as Record<string, unknown>;
    for (const [k, v] of Object.entries(config)) expect(written[k], k).toEqual(v);
    expect(written['torch_dtype']).toBe('bfloat16');
    expect(out.get('generation_config.json')).toEqual(generation);

    // BF16 values go through f32 on the GPU unchanged, so the weights come back byte for byte.
    const before = parseSafetensors(files.get('model.safetensors')!, 'input');
    const after = parseSafetensors(out.get('model.safetensors')!, 'export');
    expect([...after.tensors.keys()].sort()).toEqual([...before.tensors.keys()].sort());
    for (const [name, t] of after.tensors) {
      expect(t.dtype, name).toBe('BF16');
      expect(Buffer.from(t.data).equals(Buffer.from(before.tensors.get(name)!.data)), name).toBe(true);
    }
  });

  it('keeps a chat template that lives in chat_template.jinja, so the export is prompted as its base was', async () => {
    const { files } = bf16Folder();
    // As transformers 5 saves a tokenizer: the template in its own file, none in tokenizer_config.json.
    const config = JSON.parse(dec.decode(files.get('tokenizer_config.json'))) as Record<string, unknown>;
    const template = config['chat_template'] as string;
    expect(template).toContain('<|im_start|>');
    delete config['chat_template'];
    files.set('tokenizer_config.json', enc.encode(JSON.stringify(config)));
    files.set('chat_template.jinja', enc.encode(template));
    const base = await folderBase(e, filesFromMap(files), 'jinja folder');
    expect(base.tokenizer.hasChatTemplate).toBe(true);
    const model = CausalLM.fromHost(e, base.cfg, (n) => base.weights.get(n));
    const out = await exportModel(model, { extraFiles: base.tokenizerFiles, config: base.configJson });
    model.dispose();
    expect(dec.decode(out.get('chat_template.jinja'))).toBe(template);
    const exported = await loadTokenizer(filesFromMap(out), { where: 'export' });
    expect(exported.hasChatTemplate).toBe(true);
    const turn = [{ role: 'user', content: 'hello world' }];
    expect(exported.encodeChat(turn, { addGenerationPrompt: true })).toEqual(
      base.tokenizer.encodeChat(turn, { addGenerationPrompt: true }),
    );
  });

  it('an explicit dtype still wins (F32 for a bit-exact copy of trained weights)', async () => {
    const { files } = bf16Folder();
    const base = await folderBase(e, filesFromMap(files), 'bf16 folder');
    const model = CausalLM.fromHost(e, base.cfg, (n) => base.weights.get(n));
    const out = await exportModel(model, { dtype: 'F32', config: base.configJson });
    model.dispose();
    const st = parseSafetensors(out.get('model.safetensors')!, 'export');
    expect(new Set([...st.tensors.values()].map((t) => t.dtype))).toEqual(new Set(['F32']));
    expect((JSON.parse(dec.decode(out.get('config.json'))) as Record<string, unknown>)['torch_dtype']).toBe('float32');
  });
});
