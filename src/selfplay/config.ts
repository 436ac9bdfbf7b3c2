// Every setting of a π-Play run (ALGORITHM.md), as one flat, JSON-able object. Each setting has the
// paper's value (PAPER) and a scaled-down value for a browser-sized model (DEMO); the presets 'smoke'
// (a minute on a CPU driver) and 'demo' start from DEMO. Settings have one name everywhere: here, on
// the command line (`--flag`), in the UI and in checkpoints.
import { PRIVILEGED_MODES, type PrivilegedMode } from '../env/prompts.ts';
import type { LambdaSchedule } from '../rl/schedule.ts';

export interface SelfPlayConfig {
  seed: number;

  // -- models
  /** 'random-tiny' (a freshly initialised tiny Llama with a BPE tokenizer trained on the corpus) or a
   *  model folder (HF config.json + safetensors + tokenizer files) that the host resolves. */
  model: string;
  /** Policies: three full copies of the base ('separate') or LoRA adapters on one frozen shared base. */
  policies: 'separate' | 'lora';
  loraRank: number;
  loraAlpha: number;
  /** random-tiny only: width, blocks, heads, key/value heads, context, tokenizer vocabulary. */
  tinyHidden: number;
  tinyLayers: number;
  tinyHeads: number;
  tinyKvHeads: number;
  tinyMaxPositions: number;
  tinyVocab: number;

  // -- corpus and held-out questions
  /** 'world' (the seeded fictional encyclopedia) or a corpus JSONL file the host reads. */
  corpus: string;
  /** A held-out question file (JSONL {question, answers, hops}); '' = the world's own held-out set. */
  evalSet: string;
  worldSeed: number;
  worldSize: number;
  /** The search tool: BM25 (no download) or dense E5-style retrieval with `denseModel` from the hub. */
  retriever: 'bm25' | 'dense';
  denseModel: string;
  /** Passages a search returns (top k). */
  retrievalTopK: number;
  /** Held-out questions per hop count, and the hop counts (world corpus only). */
  evalPerHop: number;
  evalHops: number[];

  // -- the loop
  iterations: number;
  /** W: examiner steps and student steps per iteration. */
  examinerSteps: number;
  studentSteps: number;

  // -- examiner stage (HRPO)
  /** Source documents (= examiner rollouts) per examiner step. */
  examinerBatch: number;
  /** Relative frequency of hop counts 1, 2, 3, 4, ... (paper 4:3:2:1). */
  hopWeights: number[];
  /** n: student rollouts per question (difficulty reward and GRPO group). */
  rolloutsPerQuestion: number;

  // -- data generation
  /** Questions to generate for the student stage (0: studentSteps x studentBatch). */
  trainQuestions: number;
  /** Data generation tries at most this many examiner batches per batch it needs (a model that rarely
   *  writes a valid question would otherwise never finish). */
  generationRounds: number;
  /** Project choice: when the examiner yields too few valid questions, top up with world-generated
   *  ones ('world', reported as fallback_share) or train on what there is ('none'). */
  fallbackQuestions: 'none' | 'world';
  /** Who writes the student's training set: the examiner ('examiner', self-play as ALGORITHM.md 1(b) has
   *  it) or the world generator ('world': an oracle examiner whose questions are all true, with QCPs
   *  shaped like the examiner's). A project ablation for a base model that cannot yet write true
   *  questions: it tests the student's side (GRPO, the teacher's distillation) apart from the examiner's
   *  skill. World corpus only; the examiner stage still runs unless --examiner-steps 0. */
  studentQuestions: 'examiner' | 'world';

  // -- student stage (GRPO + λ·D)
  /** Questions per student step (each gets n rollouts). */
  studentBatch: number;
  /** PPO epochs over a step's rollouts, and optimizer steps (minibatches) per epoch. */
  ppoEpochs: number;
  miniBatches: number;
  /** Rollouts per forward/backward pass inside a minibatch (0: the whole minibatch); a memory setting. */
  microBatch: number;

  // -- losses
  epsLow: number;
  epsHigh: number;
  /** Weight of the k3 KL to the frozen base. */
  beta: number;
  /** λ per iteration, or one value. */
  lambda: LambdaSchedule;
  topK: number;
  tail: boolean;
  kl: 'reverse' | 'forward';
  /** Teacher EMA rate. */
  tau: number;
  privileged: PrivilegedMode;
  /** Share of the QCP's hops 'partial' drops. */
  partialDrop: number;

  // -- optimizer (AdamW)
  lr: number;
  examinerLr: number;
  weightDecay: number;
  gradClip: number;
  adamBeta1: number;
  adamBeta2: number;

  // -- rollouts
  temperature: number;
  topP: number;
  maxTurns: number;
  /** New tokens per assistant turn at most. */
  turnTokens: number;
  /** Tokens of one tool reply at most. */
  toolTokens: number;

  // -- evaluation and outputs
  evalAtStart: boolean;
  /** Greedy eval rollouts per batch. */
  evalBatch: number;
  /** Save a checkpoint every this many steps (and at every stage end); 0: stage ends only. */
  checkpointEvery: number;
  /** Student rollouts per step recorded token by token (rollouts.jsonl, the heatmap). */
  rolloutSamples: number;
}

/** The papers' settings (ALGORITHM.md sections 1, 3-5 and 8). Sizes that only fit a GPU cluster. */
export const PAPER: SelfPlayConfig = {
  seed: 0,
  // The paper's Qwen3-4B/8B bases do not fit here; any HF folder can be given.
  model: 'random-tiny',
  policies: 'separate',
  loraRank: 16,
  loraAlpha: 32,
  tinyHidden: 96,
  tinyLayers: 3,
  tinyHeads: 4,
  tinyKvHeads: 2,
  tinyMaxPositions: 4096,
  tinyVocab: 1024,
  corpus: 'world',
  evalSet: '',
  worldSeed: 1,
  worldSize: 400,
  retriever: 'bm25',
  denseModel: 'Xenova/e5-base-v2',
  retrievalTopK: 3,
  evalPerHop: 25,
  evalHops: [1, 2, 3, 4],
  iterations: 3,
  examinerSteps: 50,
  studentSteps: 50,
  examinerBatch: 256,
  hopWeights: [4, 3, 2, 1],
  rolloutsPerQuestion: 5,
  trainQuestions: 0,
  generationRounds: 4,
  fallbackQuestions: 'none',
  studentQuestions: 'examiner',
  studentBatch: 256,
  ppoEpochs: 1,
  miniBatches: 1,
  microBatch: 0,
  epsLow: 0.2,
  epsHigh: 0.2,
  beta: 0,
  lambda: [0.1, 0.03, 0.03],
  topK: 50,
  tail: true,
  kl: 'reverse',
  tau: 0.05,
  privileged: 'full',
  partialDrop: 0.5,
  lr: 1e-6,
  examinerLr: 1e-6,
  weightDecay: 0.01,
  gradClip: 0.1,
  adamBeta1: 0.9,
  adamBeta2: 0.999,
  temperature: 1,
  topP: 1,
  maxTurns: 5,
  turnTokens: 500,
  toolTokens: 500,
  evalAtStart: true,
  evalBatch: 64,
  checkpointEvery: 10,
  rolloutSamples: 1,
};

/** Scaled down for a model of a few hundred thousand parameters on one (possibly CPU) WebGPU device. */
export const DEMO: SelfPlayConfig = {
  ...PAPER,
  // The embedded base model (npm run pretrain) and its held-out default world (seed 1, 400 passages).
  model: 'public/models/piplay-tiny',
  evalPerHop: 10,
  examinerSteps: 8,
  studentSteps: 8,
  examinerBatch: 8,
  studentBatch: 4,
  miniBatches: 2,
  microBatch: 10,
  fallbackQuestions: 'world',
  lr: 1e-4,
  examinerLr: 1e-4,
  gradClip: 1,
  // A student turn that quotes the retrieved fact before answering takes up to ~64 tokens, an examiner's
  // turn (the quoted fact, the chain so far, then a search or the question and its answer) up to ~115;
  // three passages of the default world take 75-300 (so a tool reply is rarely cut).
  turnTokens: 128,
  toolTokens: 320,
  // The paper samples at 1.0; the tiny base model then answers 5% of 1-hop training questions (22.5%
  // greedily; `npm run probe` on world-generated training questions), so nearly every GRPO group scores
  // all 0 and has no advantage. At 0.6 it answers 20%, and in the oracle experiment of results/demo-t06 a
  // quarter to a third of the student's groups differ.
  temperature: 0.6,
  evalBatch: 20,
  checkpointEvery: 4,
};

/** One full iteration in about a minute on a CPU driver: every code path, nothing learned. */
export const SMOKE: SelfPlayConfig = {
  ...DEMO,
  model: 'random-tiny',
  tinyHidden: 32,
  tinyLayers: 1,
  tinyHeads: 2,
  tinyKvHeads: 1,
  tinyMaxPositions: 2048,
  tinyVocab: 1024,
  worldSize: 40,
  // A random model learns nothing either way; sampling at 1 spreads its rollouts (the tests rely on groups that differ).
  temperature: 1,
  evalPerHop: 1,
  evalHops: [1, 2],
  iterations: 1,
  examinerSteps: 1,
  studentSteps: 1,
  examinerBatch: 2,
  rolloutsPerQuestion: 2,
  studentBatch: 2,
  generationRounds: 1,
  miniBatches: 1,
  microBatch: 0,
  topK: 8,
  maxTurns: 2,
  turnTokens: 8,
  toolTokens: 32,
  evalBatch: 8,
  checkpointEvery: 1,
};

export const PRESETS = { paper: PAPER, demo: DEMO, smoke: SMOKE } as const;
export type PresetName = keyof typeof PRESETS;

// ---------------------------------------------------------------------------------------------------
// The option table: how each setting is written on a command line and what values it takes.

type Kind =
  | { t: 'int'; min: number }
  | { t: 'number'; min: number; max?: number; above?: boolean }
  | { t: 'bool' }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'string'; empty?: boolean }
  | { t: 'ints'; min: number }
  | { t: 'numbers'; min: number }
  | { t: 'lambda' };

interface OptionSpec {
  flag: string;
  kind: Kind;
  help: string;
}

const int = (min: number): Kind => ({ t: 'int', min });
const num = (min: number, max?: number, above = false): Kind => ({ t: 'number', min, ...(max !== undefined ? { max } : {}), above });

export const OPTIONS: { [K in keyof SelfPlayConfig]: OptionSpec } = {
  seed: { flag: 'seed', kind: int(0), help: 'seed of every random choice of the run' },
  model: { flag: 'model', kind: { t: 'string' }, help: "'random-tiny' or a model folder" },
  policies: { flag: 'policies', kind: { t: 'enum', values: ['separate', 'lora'] }, help: 'three full models, or LoRA on one shared base' },
  loraRank: { flag: 'lora-rank', kind: int(1), help: 'LoRA rank' },
  loraAlpha: { flag: 'lora-alpha', kind: num(0, undefined, true), help: 'LoRA alpha' },
  tinyHidden: { flag: 'tiny-hidden', kind: int(2), help: 'random-tiny: model width' },
  tinyLayers: { flag: 'tiny-layers', kind: int(1), help: 'random-tiny: decoder blocks' },
  tinyHeads: { flag: 'tiny-heads', kind: int(1), help: 'random-tiny: query heads' },
  tinyKvHeads: { flag: 'tiny-kv-heads', kind: int(1), help: 'random-tiny: key/value heads' },
  tinyMaxPositions: { flag: 'tiny-max-positions', kind: int(16), help: 'random-tiny: context length' },
  tinyVocab: { flag: 'tiny-vocab', kind: int(300), help: 'random-tiny: BPE vocabulary size' },
  corpus: { flag: 'corpus', kind: { t: 'string' }, help: "'world' or a corpus JSONL file ({id,title,text} per line)" },
  evalSet: { flag: 'eval-set', kind: { t: 'string', empty: true }, help: "held-out questions JSONL ({question,answers,hops}); '' = the world's" },
  worldSeed: { flag: 'world-seed', kind: int(0), help: 'seed of the fictional world' },
  worldSize: { flag: 'world-size', kind: int(20), help: 'entities (= passages) of the world' },
  retriever: { flag: 'retriever', kind: { t: 'enum', values: ['bm25', 'dense'] }, help: 'search tool: bm25 (default, no download) or dense (E5, from the hub)' },
  denseModel: { flag: 'dense-model', kind: { t: 'string' }, help: 'hub id of the E5-style embedding model for --retriever dense' },
  retrievalTopK: { flag: 'retrieval-top-k', kind: int(1), help: 'passages per search' },
  evalPerHop: { flag: 'eval-per-hop', kind: int(0), help: 'held-out questions per hop count' },
  evalHops: { flag: 'eval-hops', kind: { t: 'ints', min: 1 }, help: 'hop counts of the held-out set, e.g. 1,2,3,4' },
  iterations: { flag: 'iterations', kind: int(1), help: 'π-Play iterations' },
  examinerSteps: { flag: 'examiner-steps', kind: int(0), help: 'W: examiner steps per iteration' },
  studentSteps: { flag: 'student-steps', kind: int(0), help: 'W: student steps per iteration' },
  examinerBatch: { flag: 'examiner-batch', kind: int(1), help: 'source documents per examiner step' },
  hopWeights: { flag: 'hop-weights', kind: { t: 'numbers', min: 0 }, help: 'relative frequency of hops 1,2,3,4 (e.g. 4,3,2,1)' },
  rolloutsPerQuestion: { flag: 'n', kind: int(2), help: 'student rollouts per question' },
  trainQuestions: { flag: 'train-questions', kind: int(0), help: 'questions generated for the student stage (0: steps x batch)' },
  generationRounds: { flag: 'generation-rounds', kind: int(1), help: 'examiner batches per needed batch at most in data generation' },
  fallbackQuestions: { flag: 'fallback-questions', kind: { t: 'enum', values: ['none', 'world'] }, help: 'top up too few valid questions from the world generator' },
  studentQuestions: { flag: 'student-questions', kind: { t: 'enum', values: ['examiner', 'world'] }, help: "who writes the student's questions: the examiner, or the world generator (an oracle examiner; an ablation)" },
  studentBatch: { flag: 'student-batch', kind: int(1), help: 'questions per student step' },
  ppoEpochs: { flag: 'ppo-epochs', kind: int(1), help: 'passes over each step\'s rollouts' },
  miniBatches: { flag: 'mini-batches', kind: int(1), help: 'optimizer steps per PPO epoch' },
  microBatch: { flag: 'micro-batch', kind: int(0), help: 'rollouts per forward pass (0: whole minibatch)' },
  epsLow: { flag: 'eps-low', kind: num(0, 0.999), help: 'clip range below 1' },
  epsHigh: { flag: 'eps-high', kind: num(0), help: 'clip range above 1' },
  beta: { flag: 'beta', kind: num(0), help: 'weight of the k3 KL to the frozen base' },
  lambda: { flag: 'lambda', kind: { t: 'lambda' }, help: 'distillation weight per iteration, e.g. 0.1,0.03,0.03 or 0.05' },
  topK: { flag: 'topk', kind: int(1), help: 'K of the top-K distillation' },
  tail: { flag: 'tail', kind: { t: 'bool' }, help: 'tail bucket (on) or renormalised over K (off)' },
  kl: { flag: 'kl', kind: { t: 'enum', values: ['reverse', 'forward'] }, help: 'direction of the distillation KL' },
  tau: { flag: 'tau', kind: num(0, 1), help: 'teacher EMA rate' },
  privileged: { flag: 'privileged', kind: { t: 'enum', values: PRIVILEGED_MODES }, help: "teacher's privileged context (none = Dr. Zero)" },
  partialDrop: { flag: 'partial-drop', kind: num(0, 1), help: "share of hops 'partial' drops" },
  lr: { flag: 'lr', kind: num(0), help: 'student learning rate' },
  examinerLr: { flag: 'examiner-lr', kind: num(0), help: 'examiner learning rate' },
  weightDecay: { flag: 'weight-decay', kind: num(0), help: 'AdamW weight decay' },
  gradClip: { flag: 'grad-clip', kind: num(0), help: 'global gradient-norm clip (0: off)' },
  adamBeta1: { flag: 'adam-beta1', kind: num(0, 0.999999), help: 'AdamW beta1' },
  adamBeta2: { flag: 'adam-beta2', kind: num(0, 0.999999), help: 'AdamW beta2' },
  temperature: { flag: 'temperature', kind: num(0, undefined, true), help: 'rollout sampling temperature' },
  topP: { flag: 'top-p', kind: num(0, 1, true), help: 'rollout nucleus mass' },
  maxTurns: { flag: 'max-turns', kind: int(1), help: 'assistant turns per rollout at most' },
  turnTokens: { flag: 'turn-tokens', kind: int(1), help: 'new tokens per turn at most' },
  toolTokens: { flag: 'tool-tokens', kind: int(8), help: 'tokens per tool reply at most' },
  evalAtStart: { flag: 'eval-at-start', kind: { t: 'bool' }, help: 'evaluate before the first iteration' },
  evalBatch: { flag: 'eval-batch', kind: int(1), help: 'greedy eval rollouts per batch' },
  checkpointEvery: { flag: 'checkpoint-every', kind: int(0), help: 'steps between checkpoints (0: stage ends only)' },
  rolloutSamples: { flag: 'rollout-samples', kind: int(0), help: 'student rollouts per step recorded token by token' },
};

/** A bad setting; the message names the option (as its --flag) and what it accepts. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeKind(k: Kind): string {
  switch (k.t) {
    case 'int':
      return `an integer >= ${k.min}`;
    case 'number':
      return `a number ${k.above ? '>' : '>='} ${k.min}${k.max !== undefined ? ` and <= ${k.max}` : ''}`;
    case 'bool':
      return 'on or off';
    case 'enum':
      return `one of ${k.values.join(', ')}`;
    case 'string':
      return k.empty ? 'a string' : 'a non-empty string';
    case 'ints':
      return `a comma-separated list of integers >= ${k.min}`;
    case 'numbers':
      return `a comma-separated list of numbers >= ${k.min}`;
    case 'lambda':
      return 'a number >= 0 or a comma-separated list of them (one per iteration)';
  }
}

function checkValue(key: keyof SelfPlayConfig, v: unknown): void {
  const spec = OPTIONS[key];
  const k = spec.kind;
  const bad = () => new ConfigError(`--${spec.flag}: ${JSON.stringify(v)} is not allowed; use ${describeKind(k)}`);
  const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  switch (k.t) {
    case 'int':
      if (!isNum(v) || !Number.isInteger(v) || v < k.min) throw bad();
      return;
    case 'number':
      if (!isNum(v) || (k.above ? v <= k.min : v < k.min) || (k.max !== undefined && v > k.max)) throw bad();
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw bad();
      return;
    case 'enum':
      if (typeof v !== 'string' || !k.values.includes(v)) throw bad();
      return;
    case 'string':
      if (typeof v !== 'string' || (!k.empty && v.trim() === '')) throw bad();
      return;
    case 'ints':
      if (!Array.isArray(v) || v.length === 0 || !v.every((x) => isNum(x) && Number.isInteger(x) && x >= k.min)) throw bad();
      return;
    case 'numbers':
      if (!Array.isArray(v) || v.length === 0 || !v.every((x) => isNum(x) && x >= k.min)) throw bad();
      return;
    case 'lambda':
      if (isNum(v) ? v < 0 : !Array.isArray(v) || v.length === 0 || !v.every((x) => isNum(x) && x >= 0)) throw bad();
      return;
  }
}

/** Checks every setting and the relations between them; throws a ConfigError naming the option. */
export function validateConfig(c: SelfPlayConfig): SelfPlayConfig {
  for (const key of Object.keys(OPTIONS) as (keyof SelfPlayConfig)[]) {
    if (!(key in c)) throw new ConfigError(`--${OPTIONS[key].flag} is missing from the configuration`);
    checkValue(key, c[key]);
  }
  const unknown = Object.keys(c).filter((k) => !(k in OPTIONS));
  if (unknown.length) throw new ConfigError(`unknown setting(s): ${unknown.join(', ')}`);
  if (!c.hopWeights.some((w) => w > 0)) throw new ConfigError('--hop-weights: at least one weight must be > 0');
  if (c.tinyHidden % c.tinyHeads !== 0) throw new ConfigError(`--tiny-heads: ${c.tinyHeads} must divide --tiny-hidden ${c.tinyHidden}`);
  if (c.tinyHeads % c.tinyKvHeads !== 0) throw new ConfigError(`--tiny-kv-heads: ${c.tinyKvHeads} must divide --tiny-heads ${c.tinyHeads}`);
  if ((c.tinyHidden / c.tinyHeads) % 2 !== 0) throw new ConfigError('--tiny-hidden / --tiny-heads must be even (RoPE)');
  if (c.model === 'random-tiny') {
    checkTinySize(c);
    checkContext(c, c.tinyMaxPositions, '--tiny-max-positions');
  }
  if (c.topK > 256) throw new ConfigError(`--topk: ${c.topK} exceeds the kernel's maximum of 256`);
  const rollouts = c.studentBatch * c.rolloutsPerQuestion;
  if (c.miniBatches > rollouts) {
    throw new ConfigError(`--mini-batches: ${c.miniBatches} is more than the ${rollouts} rollouts of a student step (student-batch x n)`);
  }
  if (c.studentQuestions === 'world' && c.corpus !== 'world') {
    throw new ConfigError(`--student-questions: 'world' needs the world corpus (--corpus world), not ${c.corpus}: only the world generator knows its questions' answers`);
  }
  if (c.privileged === 'none' && (typeof c.lambda === 'number' ? c.lambda > 0 : c.lambda.some((l) => l > 0))) {
    // Dr. Zero: no teacher, so no distillation term whatever lambda says.
    throw new ConfigError("--lambda: must be 0 with --privileged none (no teacher, no distillation: Dr. Zero)");
  }
  return c;
}

/** The most parameters random-tiny may have: it is a test model, and three copies plus AdamW state are made. */
export const TINY_MAX_PARAMS = 100_000_000;

/** Parameters of one random-tiny policy (src/model/init.ts tinyConfig: tied embeddings, SwiGLU). */
export function tinyParams(
  c: Pick<SelfPlayConfig, 'tinyHidden' | 'tinyLayers' | 'tinyHeads' | 'tinyKvHeads' | 'tinyVocab'>,
): number {
  const h = c.tinyHidden;
  const inter = Math.max(16, Math.round((h * 8) / 3 / 16) * 16);
  const kv = (h / c.tinyHeads) * c.tinyKvHeads;
  return c.tinyVocab * h + h + c.tinyLayers * (2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h);
}

/** Refuses a random-tiny model too large to build, before anything is allocated. */
function checkTinySize(c: SelfPlayConfig): void {
  const n = tinyParams(c);
  if (n <= TINY_MAX_PARAMS) return;
  throw new ConfigError(
    `--tiny-hidden ${c.tinyHidden}, --tiny-layers ${c.tinyLayers}, --tiny-vocab ${c.tinyVocab}: random-tiny would have ` +
      `${(n / 1e6).toFixed(0)}M parameters per policy, more than the ${TINY_MAX_PARAMS / 1e6}M a random test model may have; ` +
      'lower these settings, or give a model folder with --model',
  );
}

/**
 * Refuses a turn budget the model's context cannot hold: a turn of --turn-tokens after the prompt must fit
 * in `maxPositions` (else every rollout stops for context and the loss runs over no tokens). `source` names
 * where the context length comes from.
 */
export function checkContext(c: Pick<SelfPlayConfig, 'turnTokens'>, maxPositions: number, source: string): void {
  if (c.turnTokens < maxPositions) return;
  throw new ConfigError(
    `--turn-tokens: ${c.turnTokens} tokens per turn do not fit in the model's context of ${maxPositions} tokens (${source}); ` +
      'lower --turn-tokens: the prompt, the turns and the tool replies of a rollout must all fit in the context',
  );
}

/** A preset, with overrides applied and checked. */
export function makeConfig(preset: PresetName = 'demo', overrides: Partial<SelfPlayConfig> = {}): SelfPlayConfig {
  if (!(preset in PRESETS)) throw new ConfigError(`--preset: '${String(preset)}' is not allowed; use one of ${Object.keys(PRESETS).join(', ')}`);
  const base = PRESETS[preset];
  const c = { ...base, ...overrides } as SelfPlayConfig;
  // Dr. Zero is "the same loop with λ = 0 and no teacher": --privileged none alone means that.
  if (overrides.privileged === 'none' && overrides.lambda === undefined) c.lambda = 0;
  return validateConfig(c);
}

/** The setting a command-line flag names, or null. */
export function keyOfFlag(flag: string): keyof SelfPlayConfig | null {
  for (const [key, spec] of Object.entries(OPTIONS)) if (spec.flag === flag) return key as keyof SelfPlayConfig;
  return null;
}

/** Parses a command-line value for a setting; throws a ConfigError naming the flag and allowed values. */
export function parseOptionValue<K extends keyof SelfPlayConfig>(key: K, text: string): SelfPlayConfig[K] {
  const spec = OPTIONS[key];
  const k = spec.kind;
  const bad = () => new ConfigError(`--${spec.flag}: '${text}' is not allowed; use ${describeKind(k)}`);
  const list = () => text.split(',').map((s) => (s.trim() === '' ? NaN : Number(s.trim())));
  let v: unknown;
  switch (k.t) {
    case 'int':
    case 'number':
      v = text.trim() === '' ? NaN : Number(text);
      break;
    case 'bool':
      if (['on', 'true', 'yes', '1'].includes(text)) v = true;
      else if (['off', 'false', 'no', '0'].includes(text)) v = false;
      else throw bad();
      break;
    case 'enum':
    case 'string':
      v = text;
      break;
    case 'ints':
    case 'numbers':
      v = list();
      break;
    case 'lambda': {
      const l = list();
      v = l.length === 1 ? l[0] : l;
      break;
    }
  }
  try {
    checkValue(key, v);
  } catch {
    throw bad();
  }
  return v as SelfPlayConfig[K];
}

/** Help lines for the command line: `--flag  help (paper: x, demo: y)`. */
export function optionHelp(): string[] {
  const show = (v: unknown) => (Array.isArray(v) ? v.join(',') : typeof v === 'boolean' ? (v ? 'on' : 'off') : v === '' ? "''" : String(v));
  return (Object.keys(OPTIONS) as (keyof SelfPlayConfig)[]).map((key) => {
    const s = OPTIONS[key];
    return `  --${s.flag.padEnd(20)} ${s.help} (paper ${show(PAPER[key])}, demo ${show(DEMO[key])})`;
  });
}
