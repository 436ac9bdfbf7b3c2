import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import {
  configToJson,
  expectedTensors,
  parameterCount,
  parseConfig,
  type ModelConfig,
} from '../../../src/model/config.ts';

const FIXTURES = new URL('../../../../shared/fixtures/', import.meta.url).pathname;
const MODELS = ['llama_tiny_bf16', 'qwen2_tiny_f16', 'qwen3_tiny_f32'].filter((m) => existsSync(FIXTURES + m));
const ASSETS = new URL('../../../bench/configs/', import.meta.url).pathname;

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

const llamaBase = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  vocab_size: 256,
  hidden_size: 64,
  intermediate_size: 160,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  hidden_act: 'silu',
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
};

describe('parseConfig on the fixture checkpoints', () => {
  it.skipIf(MODELS.length < 3)('parses all three fixture configs', () => {
    const llama = parseConfig(readFileSync(FIXTURES + 'llama_tiny_bf16/config.json', 'utf8'));
    expect(llama).toEqual<ModelConfig>({
      arch: 'llama',
      vocabSize: 256,
      hidden: 64,
      intermediate: 160,
      layers: 2,
      heads: 4,
      kvHeads: 2,
      headDim: 16,
      ropeTheta: 10000,
      rmsEps: 1e-5,
      tieEmbeddings: true,
      attentionBias: false,
      qkNorm: false,
      maxPositions: 256,
      bosId: 1,
      eosIds: [2],
      torchDtype: 'bfloat16',
    });
    const qwen2 = parseConfig(readJson(FIXTURES + 'qwen2_tiny_f16/config.json'));
    expect(qwen2).toMatchObject({
      arch: 'qwen2',
      attentionBias: true,
      qkNorm: false,
      tieEmbeddings: false,
      headDim: 16,
      ropeTheta: 1e6,
      rmsEps: 1e-6,
      torchDtype: 'float16',
    });
    const qwen3 = parseConfig(readJson(FIXTURES + 'qwen3_tiny_f32/config.json'));
    expect(qwen3).toMatchObject({
      arch: 'qwen3',
      attentionBias: false,
      qkNorm: true,
      tieEmbeddings: true,
      headDim: 32,
      heads: 4,
      kvHeads: 1,
      torchDtype: 'float32',
    });
  });

  it.each(MODELS)('configToJson(%s) parses back to the same config and keeps unknown fields', (name) => {
    const raw = readJson(FIXTURES + name + '/config.json');
    const cfg = parseConfig(raw);
    const out = configToJson(cfg, { ...raw, transformers_version: '4.51.0' });
    expect(parseConfig(JSON.parse(JSON.stringify(out)))).toEqual(cfg);
    expect(out['transformers_version']).toBe('4.51.0');
    expect(out['architectures']).toEqual(raw['architectures']);
    // Without a base it is complete on its own.
    expect(parseConfig(configToJson(cfg))).toEqual(cfg);
  });
});

describe('parseConfig on real-model configs (bench/configs)', () => {
  it('Qwen3-0.6B', () => {
    const c = parseConfig(readJson(ASSETS + 'qwen3-0.6b.json'));
    expect(c).toMatchObject({
      arch: 'qwen3',
      hidden: 1024,
      heads: 16,
      kvHeads: 8,
      headDim: 128,
      layers: 28,
      qkNorm: true,
      tieEmbeddings: true,
      eosIds: [151645],
      bosId: 151643,
      vocabSize: 151936,
    });
    expect(c.heads * c.headDim).not.toBe(c.hidden); // Qwen3's explicit head_dim
  });
  it('Qwen2.5-0.5B-Instruct (sliding window present but off)', () => {
    const c = parseConfig(readJson(ASSETS + 'qwen2.5-0.5b-instruct.json'));
    expect(c).toMatchObject({
      arch: 'qwen2',
      hidden: 896,
      heads: 14,
      kvHeads: 2,
      headDim: 64,
      attentionBias: true,
      tieEmbeddings: true,
      ropeTheta: 1e6,
    });
  });
  it('SmolLM2-135M (llama)', () => {
    const c = parseConfig(readJson(ASSETS + 'smollm2-135m.json'));
    expect(c).toMatchObject({
      arch: 'llama',
      hidden: 576,
      heads: 9,
      kvHeads: 3,
      headDim: 64,
      layers: 30,
      tieEmbeddings: true,
      ropeTheta: 100000,
    });
    expect(parameterCount(c)).toBe(134_515_008);
  });
});

describe('parseConfig normalisation', () => {
  it('fills HF defaults: kvHeads = heads, eos list, dtype, rope_theta', () => {
    const { num_key_value_heads: _omit, rope_theta: _omit2, ...raw } = llamaBase;
    const c = parseConfig({ ...raw, eos_token_id: [2, 7], dtype: 'bfloat16' });
    expect(c.kvHeads).toBe(4);
    expect(c.eosIds).toEqual([2, 7]);
    expect(c.bosId).toBeNull();
    expect(c.torchDtype).toBe('bfloat16');
    expect(c.ropeTheta).toBe(10000);
    expect(c.tieEmbeddings).toBe(false);
    expect(c.maxPositions).toBe(2048);
    expect(parseConfig({ ...llamaBase, eos_token_id: null }).eosIds).toEqual([]);
  });

  it('uses head_dim when given, and transformers v5 rope_parameters', () => {
    const c = parseConfig({
      ...llamaBase,
      head_dim: 32,
      rope_parameters: { rope_type: 'default', rope_theta: 500000 },
    });
    expect(c.headDim).toBe(32);
    expect(c.ropeTheta).toBe(500000);
    expect(expectedTensors(c).find((t) => t.name === 'model.layers.0.self_attn.q_proj.weight')!.shape).toEqual([
      128, 64,
    ]);
    expect(parseConfig(configToJson(c))).toEqual(c);
  });

  it('falls back on model_type when architectures is absent', () => {
    const { architectures: _a, ...raw } = llamaBase;
    expect(parseConfig({ ...raw, model_type: 'qwen3', head_dim: 16 }).arch).toBe('qwen3');
  });
});

describe('parseConfig refuses what piplay cannot run, naming field and value', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      'unsupported architecture',
      { architectures: ['MistralForCausalLM'], model_type: 'mistral' },
      /architectures.*MistralForCausalLM.*LlamaForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM/,
    ],
    ['rope_scaling (llama3)', { rope_scaling: { rope_type: 'llama3', factor: 8 } }, /rope_scaling.*llama3/],
    ['rope_scaling (yarn, old key)', { rope_scaling: { type: 'yarn', factor: 4 } }, /rope_scaling.*yarn/],
    [
      'rope_parameters (linear)',
      { rope_parameters: { rope_type: 'linear', factor: 2, rope_theta: 1e4 } },
      /rope_parameters\.rope_type.*linear/,
    ],
    ['sliding window', { use_sliding_window: true }, /use_sliding_window = true.*sliding-window/],
    ['sliding layers', { layer_types: ['full_attention', 'sliding_attention'] }, /layer_types = "sliding_attention"/],
    ['gelu', { hidden_act: 'gelu_pytorch_tanh' }, /hidden_act = "gelu_pytorch_tanh".*silu/],
    ['mlp bias', { mlp_bias: true }, /mlp_bias = true/],
    ['o_proj bias', { attention_bias: true }, /attention_bias = true.*o_proj/],
    ['kv heads', { num_key_value_heads: 3 }, /num_key_value_heads = 3 does not divide num_attention_heads = 4/],
    [
      'heads vs hidden',
      { num_attention_heads: 5, num_key_value_heads: 5 },
      /num_attention_heads = 5 does not divide hidden_size = 64/,
    ],
    ['missing field', { hidden_size: undefined }, /required field hidden_size is missing/],
    ['bad number', { num_hidden_layers: 2.5 }, /num_hidden_layers = 2\.5 must be a positive integer/],
    ['bad dtype', { torch_dtype: 'float8_e4m3fn' }, /torch_dtype = "float8_e4m3fn".*float32, float16 and bfloat16/],
    ['model_type mismatch', { model_type: 'qwen2' }, /model_type = "qwen2"/],
    ['bad eos', { eos_token_id: 'two' }, /eos_token_id = "two"/],
    [
      'eos outside the vocabulary',
      { eos_token_id: 5000 },
      /eos_token_id = 5000 is not supported; a token id must be below vocab_size = /,
    ],
    ['eos list outside the vocabulary', { eos_token_id: [1, 99999] }, /eos_token_id\[1\] = 99999 is not supported/],
    ['bos outside the vocabulary', { bos_token_id: 1e6 }, /bos_token_id = 1000000 is not supported/],
    [
      'a million layers (refused at once, before sizes are computed)',
      { num_hidden_layers: 1000000 },
      /num_hidden_layers = 1000000 is not supported; piplay takes at most 1024 \(far past any model/,
    ],
    [
      'a huge vocabulary',
      { vocab_size: 1e9 },
      /vocab_size = 1000000000 is not supported; piplay takes at most 4194304/,
    ],
  ];
  it.each(cases)('%s', (_name, patch, re) => {
    const raw: Record<string, unknown> = { ...llamaBase, ...patch };
    for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
    expect(() => parseConfig(raw)).toThrow(re);
  });

  it('malformed JSON text', () => {
    expect(() => parseConfig('{"hidden_size": 64,')).toThrow(/config\.json is not valid JSON/);
    expect(() => parseConfig('[1, 2]')).toThrow(/JSON object/);
  });
});

describe('expectedTensors', () => {
  it('lists HF names and shapes per architecture', () => {
    const llama = parseConfig({ ...llamaBase, tie_word_embeddings: true });
    const names = expectedTensors(llama).map((t) => t.name);
    expect(names.length).toBe(1 + 2 * 9 + 1);
    expect(names).not.toContain('lm_head.weight');
    expect(names.some((n) => n.endsWith('.bias'))).toBe(false);

    const qwen2 = parseConfig({ ...llamaBase, architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2' });
    const q2 = new Map(expectedTensors(qwen2).map((t) => [t.name, t.shape]));
    expect(q2.get('model.layers.1.self_attn.q_proj.bias')).toEqual([64]);
    expect(q2.get('model.layers.1.self_attn.k_proj.bias')).toEqual([32]);
    expect(q2.get('model.layers.1.self_attn.v_proj.bias')).toEqual([32]);
    expect(q2.has('model.layers.1.self_attn.o_proj.bias')).toBe(false);
    expect(q2.get('lm_head.weight')).toEqual([256, 64]);
    expect(q2.get('model.layers.0.mlp.down_proj.weight')).toEqual([64, 160]);
    expect(q2.get('model.layers.0.mlp.gate_proj.weight')).toEqual([160, 64]);

    const qwen3 = parseConfig({ ...llamaBase, architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', head_dim: 32 });
    const q3 = new Map(expectedTensors(qwen3).map((t) => [t.name, t.shape]));
    expect(q3.get('model.layers.0.self_attn.q_norm.weight')).toEqual([32]);
    expect(q3.get('model.layers.0.self_attn.k_norm.weight')).toEqual([32]);
    expect(q3.get('model.layers.0.self_attn.q_proj.weight')).toEqual([128, 64]);
    expect(q3.get('model.layers.0.self_attn.o_proj.weight')).toEqual([64, 128]);
    expect(q3.get('model.layers.0.self_attn.k_proj.weight')).toEqual([64, 64]);
  });
});
