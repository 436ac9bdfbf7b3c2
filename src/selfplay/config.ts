// Every setting of a π-Play run (ALGORITHM.md), as one flat, JSON-able object, declared once in SETTINGS in the
// project's settings schema (src/settings/schema.ts, which pretraining's table uses too): its command-line flag,
// the values it takes, its help, the papers' value and, where it differs, the scaled-down value for a
// browser-sized model (demo), and how the page shows it. The config type, the presets (paper, demo, and smoke on
// top of demo), parsing, checks, --help, the page's fields and its address are all derived from that table, so a
// new setting is one entry there. Settings have one name everywhere: here, on the command line (`--flag`), in
// the UI and in checkpoints.
import { NOTES_RENDERINGS, PRIVILEGED_MODES } from '../env/prompts.ts';
import {
  bool,
  ConfigError,
  describeKind,
  flagValue,
  int,
  kindAccepts,
  lambdas,
  num,
  nums,
  ints,
  oneOf,
  parseNumber,
  type Setting,
  setting,
  text,
} from '../settings/schema.ts';

export {
  ConfigError,
  flagValue,
  valueText,
  type PageGroup,
  type Setting,
  type Suggestion,
} from '../settings/schema.ts';

// ---------------------------------------------------------------------------------------------------
// The table

/** The longest question a run asks or writes, in hops (the world's chains are far shorter). */
const MAX_HOPS = 16;

export const SETTINGS = {
  seed: setting({ flag: 'seed', kind: int(0, 2 ** 32 - 1), help: 'seed of every random choice of the run', paper: 0 }),

  // -- models
  /** 'random-tiny' (a freshly initialised tiny Llama with a BPE tokenizer trained on the corpus) or a
   *  model folder (HF config.json + safetensors + tokenizer files) that the host resolves. */
  // paper: the papers' Qwen3-4B/8B bases do not fit here (any HF folder can be given); demo: the embedded
  // base model (npm run pretrain) and its held-out default world (seed 1, 400 passages).
  model: setting({
    flag: 'model',
    group: 'source',
    kind: text(),
    help: "'random-tiny', a model folder, or hf:owner/name[@revision] (kept in the Hugging Face cache; $HF_ENDPOINT, $HF_TOKEN, $HF_HUB_OFFLINE)",
    paper: 'random-tiny',
    demo: 'public/models/piplay-tiny',
  }),
  /** Policies: three full copies of the base ('separate') or LoRA adapters on one frozen shared base. */
  policies: setting({
    flag: 'policies',
    group: 'main',
    kind: oneOf(['separate', 'lora']),
    help: 'three full models, or LoRA on one shared base',
    paper: 'separate',
  }),
  loraRank: setting({ flag: 'lora-rank', kind: int(1, 4096), help: 'LoRA rank', paper: 16 }),
  loraAlpha: setting({ flag: 'lora-alpha', kind: num(0, 1e6, true), help: 'LoRA alpha', paper: 32 }),
  /** random-tiny only: width, blocks, heads, key/value heads, context, tokenizer vocabulary. */
  tinyHidden: setting({
    flag: 'tiny-hidden',
    group: 'tiny',
    kind: int(2, 65536),
    help: 'random-tiny: model width',
    paper: 96,
  }),
  tinyLayers: setting({
    flag: 'tiny-layers',
    group: 'tiny',
    kind: int(1, 256),
    help: 'random-tiny: decoder blocks',
    paper: 3,
  }),
  tinyHeads: setting({
    flag: 'tiny-heads',
    group: 'tiny',
    kind: int(1, 1024),
    help: 'random-tiny: query heads',
    paper: 4,
  }),
  tinyKvHeads: setting({
    flag: 'tiny-kv-heads',
    group: 'tiny',
    kind: int(1, 1024),
    help: 'random-tiny: key/value heads',
    paper: 2,
  }),
  tinyMaxPositions: setting({
    flag: 'tiny-max-positions',
    group: 'tiny',
    kind: int(16, 1 << 20),
    help: 'random-tiny: context length',
    paper: 4096,
  }),
  tinyVocab: setting({
    flag: 'tiny-vocab',
    group: 'tiny',
    kind: int(300, 1 << 20),
    help: 'random-tiny: BPE vocabulary size',
    paper: 1024,
  }),

  // -- corpus and held-out questions
  /** 'world' (the seeded fictional encyclopedia) or a corpus JSONL file the host reads. */
  corpus: setting({
    flag: 'corpus',
    group: 'source',
    kind: text(),
    help: "'world' or a corpus JSONL file ({id,title,text} per line)",
    paper: 'world',
  }),
  /** A held-out question file (JSONL {question, answers, hops}); '' = the world's own held-out set. */
  evalSet: setting({
    flag: 'eval-set',
    group: 'source',
    kind: text(true),
    help: "held-out questions JSONL ({question,answers,hops}); '' = the world's",
    paper: '',
  }),
  worldSeed: setting({
    flag: 'world-seed',
    group: 'corpus',
    kind: int(0, 2 ** 32 - 1),
    help: 'seed of the fictional world',
    paper: 1,
  }),
  worldSize: setting({
    flag: 'world-size',
    group: 'corpus',
    kind: int(20, 100_000),
    help: 'entities (= passages) of the world',
    paper: 400,
  }),
  /** The search tool: BM25 (no download) or dense E5-style retrieval with `denseModel` from the hub. */
  retriever: setting({
    flag: 'retriever',
    kind: oneOf(['bm25', 'dense']),
    help: 'search tool: bm25 (default, no download) or dense (E5, from the hub)',
    paper: 'bm25',
  }),
  denseModel: setting({
    flag: 'dense-model',
    kind: text(),
    help: 'hub id of the E5-style embedding model for --retriever dense',
    paper: 'Xenova/e5-base-v2',
  }),
  /** Passages a search returns (top k). */
  retrievalTopK: setting({
    flag: 'retrieval-top-k',
    group: 'corpus',
    kind: int(1, 100),
    help: 'passages per search',
    paper: 3,
  }),
  /** Held-out questions per hop count, and the hop counts (world corpus only). */
  evalPerHop: setting({
    flag: 'eval-per-hop',
    group: 'corpus',
    kind: int(0, 100_000),
    help: 'held-out questions per hop count',
    paper: 25,
    demo: 10,
  }),
  evalHops: setting({
    flag: 'eval-hops',
    group: 'corpus',
    kind: ints(1, MAX_HOPS, MAX_HOPS),
    help: 'hop counts of the held-out set, e.g. 1,2,3,4',
    paper: [1, 2, 3, 4],
  }),
  /** Where the world corpus's held-out questions come from (src/env/world/yardstick.ts): a world that neither
   *  pretraining nor self-play draws, searched through its own corpus ('dev' to choose settings, 'test' to report),
   *  or the training world's own held-out set ('train'). A corpus file uses its --eval-set instead. */
  evalWorld: setting({
    flag: 'eval-world',
    group: 'corpus',
    kind: oneOf(['test', 'dev', 'train']),
    help:
      "held-out questions of the world corpus: from an unseen world searched through its own corpus ('test' to " +
      "report, 'dev' to choose settings) or from the training world ('train')",
    paper: 'test',
  }),

  // -- the loop
  // demo 2: on two CPU cores an iteration of the demo takes about 14 minutes; two show a trend on the page's charts
  // and keep the decisive experiment (15 runs) within a few working sessions.
  iterations: setting({
    flag: 'iterations',
    group: 'main',
    kind: int(1, 10_000),
    help: 'π-Play iterations',
    paper: 3,
    demo: 2,
  }),
  /** W: examiner steps and student steps per iteration. */
  examinerSteps: setting({
    flag: 'examiner-steps',
    label: 'W examiner steps',
    group: 'main',
    kind: int(0, 1_000_000),
    help: 'W: examiner steps per iteration',
    paper: 50,
    demo: 8,
  }),
  studentSteps: setting({
    flag: 'student-steps',
    label: 'W student steps',
    group: 'main',
    kind: int(0, 1_000_000),
    help: 'W: student steps per iteration',
    paper: 50,
    demo: 8,
  }),

  // -- examiner stage (HRPO)
  /** Source documents (= examiner rollouts) per examiner step. */
  examinerBatch: setting({
    flag: 'examiner-batch',
    label: 'examiner batch',
    group: 'main',
    kind: int(1, 65_536),
    help: 'source documents per examiner step',
    paper: 256,
    demo: 8,
  }),
  /** Relative frequency of hop counts 1, 2, 3, 4, ... (paper 4:3:2:1). */
  hopWeights: setting({
    flag: 'hop-weights',
    label: 'hop ratio',
    group: 'main',
    kind: nums(0, MAX_HOPS),
    help: 'relative frequency of hops 1,2,3,4 (e.g. 4,3,2,1)',
    paper: [4, 3, 2, 1],
  }),
  /** n: student rollouts per question (difficulty reward and GRPO group). */
  rolloutsPerQuestion: setting({
    flag: 'n',
    label: 'n rollouts',
    group: 'main',
    kind: int(2, 1024),
    help: 'student rollouts per question',
    paper: 5,
  }),

  // -- data generation
  /** Questions to generate for the student stage (0: studentSteps x studentBatch). */
  trainQuestions: setting({
    flag: 'train-questions',
    kind: int(0, 10_000_000),
    help: 'questions generated for the student stage (0: steps x batch)',
    paper: 0,
  }),
  /** Data generation tries at most this many examiner batches per batch it needs (a model that rarely
   *  writes a valid question would otherwise never finish). */
  generationRounds: setting({
    flag: 'generation-rounds',
    kind: int(1, 1000),
    help: 'examiner batches per needed batch at most in data generation',
    paper: 4,
  }),
  /** Project choice: when the examiner yields too few valid questions, top up with world-generated
   *  ones ('world', reported as fallback_share) or train on what there is ('none'). */
  fallbackQuestions: setting({
    flag: 'fallback-questions',
    kind: oneOf(['none', 'world']),
    help: 'top up too few valid questions from the world generator',
    paper: 'none',
    demo: 'world',
  }),
  /** Dr. Zero's data generation: examiner rollouts per source document, the best-formatted kept (highest format
   *  reward; the first of equals), so the student trains on fewer broken questions. The examiner stage's own
   *  HRPO rollouts stay one per document, as the paper's. */
  examinerSamples: setting({
    flag: 'examiner-samples',
    kind: int(1, 64),
    help: 'data generation: examiner rollouts per source document, the best-formatted kept',
    paper: 1,
    demo: 4,
  }),
  /** Who writes the student's training set: the examiner ('examiner', self-play as ALGORITHM.md 1(b) has
   *  it) or the world generator ('world': an oracle examiner whose questions are all true, with QCPs
   *  shaped like the examiner's). A project ablation for a base model that cannot yet write true
   *  questions: it tests the student's side (GRPO, the teacher's distillation) apart from the examiner's
   *  skill. World corpus only; the examiner stage still runs unless --examiner-steps 0. */
  studentQuestions: setting({
    flag: 'student-questions',
    kind: oneOf(['examiner', 'world']),
    help: "who writes the student's questions: the examiner, or the world generator (an oracle examiner; an ablation)",
    paper: 'examiner',
  }),

  // -- student stage (GRPO + λ·D)
  /** Questions per student step (each gets n rollouts). */
  studentBatch: setting({
    flag: 'student-batch',
    label: 'student batch',
    group: 'main',
    kind: int(1, 65_536),
    help: 'questions per student step',
    paper: 256,
    demo: 8,
  }),
  /** PPO epochs over a step's rollouts, and optimizer steps (minibatches) per epoch. */
  ppoEpochs: setting({ flag: 'ppo-epochs', kind: int(1, 1000), help: "passes over each step's rollouts", paper: 1 }),
  miniBatches: setting({
    flag: 'mini-batches',
    kind: int(1, 65_536),
    help: 'optimizer steps per PPO epoch',
    paper: 1,
  }),
  /** Rollouts per forward/backward pass inside a minibatch (0: the whole minibatch); a memory setting: a pass holds
   *  at most this many rollouts of the largest size the turn budgets allow, and shorter rollouts share a pass
   *  within that (src/selfplay/micro-batches.ts). demo 1: micro-batches only split a minibatch's gradient into
   *  parts weighted by their token shares, and one rollout of the demo's budgets (up to 2400 tokens) per pass
   *  keeps a real model's training pass within a laptop GPU's memory (src/selfplay/memory-plan.ts). */
  microBatch: setting({
    flag: 'micro-batch',
    kind: int(0, 65_536),
    help: 'rollouts of the longest possible size per forward pass, shorter ones sharing (0: whole minibatch)',
    paper: 0,
    demo: 1,
  }),
  /** Recompute each decoder layer's activations on the backward pass instead of keeping them (a memory
   *  setting: a training pass keeps one [tokens, hidden] tensor per layer; it costs one more forward of each
   *  layer and changes no result, src/gpu/recompute.ts). 'auto' recomputes only where keeping them would take
   *  the run past a gibibyte (recomputes in memory-plan.ts). paper: on, as verl's recipes enable gradient
   *  checkpointing; demo: auto (the embedded model keeps them and trains a fifth faster). */
  recompute: setting({
    flag: 'recompute',
    kind: oneOf(['auto', 'on', 'off']),
    help: "recompute each layer's activations on the backward pass (less memory, one more forward); auto: where the run would need over 1 GiB without",
    paper: 'on',
    demo: 'auto',
    notes: {
      auto: 'only where the run would need over 1 GiB without',
      on: 'least memory',
      off: 'fastest',
    },
  }),

  // -- losses
  epsLow: setting({ flag: 'eps-low', kind: num(0, 0.999), help: 'clip range below 1', paper: 0.2 }),
  epsHigh: setting({ flag: 'eps-high', kind: num(0), help: 'clip range above 1', paper: 0.2 }),
  /** Weight of the student's k3 KL to the frozen base. */
  beta: setting({ flag: 'beta', kind: num(0), help: "weight of the student's k3 KL to the frozen base", paper: 0 }),
  /** Weight of the examiner's k3 KL to the frozen base (Dr. Zero's eq. 2). */
  examinerBeta: setting({
    flag: 'examiner-beta',
    kind: num(0),
    help: "weight of the examiner's k3 KL to the frozen base (Dr. Zero's eq. 2)",
    paper: 0,
  }),
  /** λ per iteration, or one value. */
  lambda: setting({
    flag: 'lambda',
    label: 'λ schedule',
    group: 'main',
    suggestions: [
      { label: 'instruct', value: '0.1,0.03,0.03', note: 'the paper’s decaying λ for instruct bases' },
      { label: 'base', value: '0.03,0.003,0.002', note: 'the paper’s λ for base models' },
      { label: 'fixed', value: '0.03', note: 'one λ for every iteration (the paper found decaying better)' },
      { label: 'off', value: '0', note: 'no distillation' },
    ],
    kind: lambdas(),
    help: 'distillation weight per iteration, e.g. 0.1,0.03,0.03 or 0.05',
    paper: [0.1, 0.03, 0.03],
    // demo: π-Play's choice in issue 47's dev-world search (results/dev-search-47: with lr 1e-4, the higher of the
    // two schedules tried had the best mean dev EM over both seeds, 47.3 against 42.8).
    demo: [0.3, 0.1, 0.1],
  }),
  topK: setting({
    flag: 'topk',
    label: 'top-K',
    group: 'main',
    kind: int(1, 256),
    help: 'K of the top-K distillation',
    paper: 50,
  }),
  tail: setting({
    flag: 'tail',
    label: 'tail bucket',
    group: 'main',
    kind: bool(),
    help: 'tail bucket (on) or renormalised over K (off)',
    paper: true,
  }),
  kl: setting({
    flag: 'kl',
    label: 'KL direction',
    group: 'main',
    kind: oneOf(['reverse', 'forward']),
    help: 'direction of the distillation KL',
    paper: 'reverse',
  }),
  /** Teacher EMA rate. */
  tau: setting({
    flag: 'tau',
    label: 'τ teacher EMA',
    group: 'main',
    kind: num(0, 1),
    help: 'teacher EMA rate',
    paper: 0.05,
  }),
  privileged: setting({
    flag: 'privileged',
    label: 'privileged context',
    group: 'main',
    notes: {
      full: 'full construction path (paper default)',
      partial: 'a random part of the hops dropped',
      gt: 'the answer only',
      'gt-hop': 'the answer and the hop count',
      none: 'no teacher: Dr. Zero',
      self: "control: the same EMA teacher with the student's own prompt (no privileged information)",
    },
    kind: oneOf(PRIVILEGED_MODES),
    help: "teacher's privileged context (none = Dr. Zero; self = the teacher without privileged information)",
    paper: 'full',
  }),
  /** How the teacher's notes show the path's documents: the papers' whole passages, or compact notes, which
   *  fit a small model's reach; the embedded default reads them best opened by the answer
   *  (public/models/piplay-tiny/TRAINING.md, stage 18: answer-first). */
  notes: setting({
    flag: 'notes',
    kind: oneOf(NOTES_RENDERINGS),
    help:
      "how the teacher's full and partial notes show the path's documents: whole passages, " +
      'compact (each cut to the sentence that leads to the next step), or answer-first (compact, opened by ' +
      "the answer in the GT notes' words)",
    paper: 'passages',
    demo: 'answer-first',
  }),
  /** Share of the QCP's content (words of its source and search results) 'partial' removes. */
  partialDrop: setting({
    flag: 'partial-drop',
    kind: num(0, 1),
    help: "share of the construction path's content (words of its source and search results) 'partial' removes",
    paper: 0.5,
  }),

  // -- optimizer (AdamW)
  lr: setting({ flag: 'lr', kind: num(0), help: 'student learning rate', paper: 1e-6, demo: 1e-4 }),
  examinerLr: setting({ flag: 'examiner-lr', kind: num(0), help: 'examiner learning rate', paper: 1e-6, demo: 1e-4 }),
  weightDecay: setting({ flag: 'weight-decay', kind: num(0), help: 'AdamW weight decay', paper: 0.01 }),
  gradClip: setting({
    flag: 'grad-clip',
    kind: num(0),
    help: 'global gradient-norm clip (0: off)',
    paper: 0.1,
  }),
  /** verl's warm-up ratio: the learning rate of each policy rises linearly over this share of its optimizer steps
   *  in the run (step k of W uses lr·k/W), then stays. Steps skipped for want of evidence do not count. */
  lrWarmup: setting({
    flag: 'lr-warmup',
    kind: num(0, 1),
    help: "share of each policy's optimizer steps over which its learning rate rises linearly from 0",
    paper: 0.03,
    demo: 0.1,
  }),
  /** An update with no evidence: every rollout in it has advantage 0 (no question with both right and wrong
   *  answers, no hop group with differing rewards). 'apply' steps anyway, as verl does: Adam's momentum moves the
   *  weights, and π-Play's λ·D alone, which Adam scales to a full step whatever λ is. 'skip' leaves the weights, the
   *  optimizer state and the teacher as they were. */
  emptyUpdates: setting({
    flag: 'empty-updates',
    kind: oneOf(['apply', 'skip']),
    help: "an update whose rollouts all have advantage 0: 'apply' it (momentum and λ·D still move the weights) or 'skip' it",
    paper: 'apply',
    demo: 'skip',
  }),
  adamBeta1: setting({ flag: 'adam-beta1', kind: num(0, 0.999999), help: 'AdamW beta1', paper: 0.9 }),
  adamBeta2: setting({ flag: 'adam-beta2', kind: num(0, 0.999999), help: 'AdamW beta2', paper: 0.999 }),

  // -- rollouts
  // demo 0.6: the paper's 1.0 is for 4B models; sampled at 1.0 the tiny base model answers so few training
  // questions that nearly every GRPO group scores all 0 and has no advantage (docs/experiments/README.md,
  // "Sampling at 0.6").
  temperature: setting({
    flag: 'temperature',
    kind: num(0, undefined, true),
    help: 'rollout sampling temperature',
    paper: 1,
    demo: 0.6,
  }),
  topP: setting({ flag: 'top-p', kind: num(0, 1, true), help: 'rollout nucleus mass', paper: 1 }),
  maxTurns: setting({ flag: 'max-turns', kind: int(1, 100), help: 'assistant turns per rollout at most', paper: 5 }),
  /** New tokens per assistant turn at most. */
  // demo 128: a student turn that quotes the retrieved fact before answering takes up to ~64 tokens, an examiner's
  // turn (the quoted fact, the chain so far, then a search or the question and its answer) up to ~115;
  // three passages of the default world take 75-300 (so a tool reply is rarely cut).
  turnTokens: setting({
    flag: 'turn-tokens',
    kind: int(1, 1 << 20),
    help: 'new tokens per turn at most',
    paper: 500,
    demo: 128,
  }),
  /** Tokens of one tool reply at most. */
  toolTokens: setting({
    flag: 'tool-tokens',
    kind: int(8, 1 << 20),
    help: 'tokens per tool reply at most',
    paper: 500,
    demo: 320,
  }),
  /** MiB the KV cache of one decoding batch may take; a batch of rollouts past it decodes in parts, one cache
   *  at a time (a memory setting: real models' caches are large, a tiny model's batches never split).
   *  0: no limit. */
  kvBudget: setting({
    flag: 'kv-budget',
    kind: int(0, 1 << 24),
    help: 'MiB of KV cache one decoding batch may take (more rollouts decode in parts; 0: no limit)',
    paper: 0,
    demo: 1024,
  }),

  // -- evaluation and outputs
  evalAtStart: setting({
    flag: 'eval-at-start',
    kind: bool(),
    help: 'evaluate before the first iteration',
    paper: true,
  }),
  /** Greedy eval rollouts per batch. */
  evalBatch: setting({
    flag: 'eval-batch',
    kind: int(1, 65_536),
    help: 'greedy eval rollouts per batch',
    paper: 64,
    demo: 20,
  }),
  /** Save a checkpoint every this many steps (and at every stage end); 0: stage ends only. */
  checkpointEvery: setting({
    flag: 'checkpoint-every',
    kind: int(0, 1_000_000),
    help: 'steps between checkpoints (0: stage ends only)',
    paper: 10,
    demo: 4,
  }),
  /** Student rollouts per step recorded token by token (rollouts.jsonl, the heatmap). */
  rolloutSamples: setting({
    flag: 'rollout-samples',
    kind: int(0, 65_536),
    help: 'student rollouts per step recorded token by token',
    paper: 1,
  }),
} as const;

type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type SelfPlayConfig = { -readonly [K in keyof typeof SETTINGS]: ValueOf<(typeof SETTINGS)[K]> };
export type SettingKey = keyof SelfPlayConfig;
const KEYS = Object.keys(SETTINGS) as SettingKey[];

/** A copy of a setting's value (lists are not shared between presets). */
const copy = <T>(v: T): T => (Array.isArray(v) ? ([...v] as T) : v);
const valuesOf = (pick: (s: Setting) => unknown) =>
  Object.fromEntries(KEYS.map((k) => [k, copy(pick(SETTINGS[k]))])) as SelfPlayConfig;

/** The papers' settings (ALGORITHM.md sections 1, 3-5 and 8). Sizes that only fit a GPU cluster. */
export const PAPER: SelfPlayConfig = valuesOf((s) => s.paper);

/** Scaled down for a model of a few hundred thousand parameters on one (possibly CPU) WebGPU device. */
export const DEMO: SelfPlayConfig = valuesOf((s) => ('demo' in s ? s.demo : s.paper));

/** Whether a run needs the frozen reference: the student's or the examiner's k3 KL is on. */
export function needsReference(c: Pick<SelfPlayConfig, 'beta' | 'examinerBeta'>): boolean {
  return c.beta > 0 || c.examinerBeta > 0;
}

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
  evalWorld: 'train',
  // A random model has no learnable group: skipping would leave every smoke run's weights untouched.
  emptyUpdates: 'apply',
  examinerSamples: 1,
  // A random model learns nothing either way; sampling at 1 spreads its rollouts (the tests rely on groups that
  // differ).
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

/**
 * A few minutes on a laptop GPU with rollouts worth looking at: the demo's model and turn lengths (the student
 * thinks, searches a few times and answers), fewer and smaller steps, two iterations so the charts have a trend.
 */
export const QUICK: SelfPlayConfig = {
  ...DEMO,
  iterations: 2,
  examinerSteps: 2,
  studentSteps: 4,
  examinerBatch: 4,
  studentBatch: 2,
  rolloutsPerQuestion: 4,
  hopWeights: [3, 1],
  evalPerHop: 5,
  evalHops: [1, 2],
  checkpointEvery: 2,
  rolloutSamples: 2,
  // One examiner sample per document: data generation is most of a short run's time.
  examinerSamples: 1,
};

export const PRESETS = { paper: PAPER, demo: DEMO, quick: QUICK, smoke: SMOKE } as const;
export type PresetName = keyof typeof PRESETS;

/** What each preset is for, in a few words (the page's preset help and `--help`). */
export const PRESET_HELP: Record<PresetName, string> = {
  smoke: 'one step of everything, a random tiny model (seconds on a CPU driver)',
  quick: 'real rollouts with searches in a few minutes on a laptop GPU',
  demo: 'browser scale',
  paper: 'the paper’s values',
};

/** The error of setting `key`: its flag, then what is wrong. */
function settingError(key: SettingKey, what: string): ConfigError {
  return new ConfigError(`--${SETTINGS[key].flag}: ${what}`, key);
}

function checkValue(key: keyof SelfPlayConfig, v: unknown): void {
  const k = SETTINGS[key].kind;
  if (!kindAccepts(k, v)) throw settingError(key, `${JSON.stringify(v)} is not allowed; use ${describeKind(k)}`);
}

/** A stored configuration in today's terms: those written before --recompute took 'auto' hold a boolean. */
export function upgradeConfig<T extends Partial<SelfPlayConfig>>(c: T): T {
  const recompute: unknown = c.recompute;
  return typeof recompute === 'boolean' ? { ...c, recompute: recompute ? 'on' : 'off' } : c;
}

/** Checks every setting and the relations between them; throws a ConfigError naming the option. */
export function validateConfig(c: SelfPlayConfig): SelfPlayConfig {
  Object.assign(c, upgradeConfig(c));
  for (const key of Object.keys(SETTINGS) as (keyof SelfPlayConfig)[]) {
    if (!(key in c)) throw new ConfigError(`--${SETTINGS[key].flag} is missing from the configuration`, key);
    checkValue(key, c[key]);
  }
  const unknown = Object.keys(c).filter((k) => !(k in SETTINGS));
  if (unknown.length) throw new ConfigError(`unknown setting(s): ${unknown.join(', ')}`);
  if (!c.hopWeights.some((w) => w > 0)) throw settingError('hopWeights', 'at least one weight must be > 0');
  if (c.tinyHidden % c.tinyHeads !== 0)
    throw settingError('tinyHeads', `${c.tinyHeads} must divide --tiny-hidden ${c.tinyHidden}`);
  if (c.tinyHeads % c.tinyKvHeads !== 0)
    throw settingError('tinyKvHeads', `${c.tinyKvHeads} must divide --tiny-heads ${c.tinyHeads}`);
  if ((c.tinyHidden / c.tinyHeads) % 2 !== 0)
    throw new ConfigError('--tiny-hidden / --tiny-heads must be even (RoPE)', 'tinyHidden');
  if (c.model === 'random-tiny') {
    checkTinySize(c);
    checkContext(c, c.tinyMaxPositions, '--tiny-max-positions');
  }
  const rollouts = c.studentBatch * c.rolloutsPerQuestion;
  if (c.miniBatches > rollouts) {
    throw settingError(
      'miniBatches',
      `${c.miniBatches} is more than the ${rollouts} rollouts of a student step (student-batch x n)`,
    );
  }
  if (c.studentQuestions === 'world' && c.corpus !== 'world') {
    throw settingError(
      'studentQuestions',
      `'world' needs the world corpus (--corpus world), not ${c.corpus}: ` +
        "only the world generator knows its questions' answers",
    );
  }
  if (c.privileged === 'none' && (typeof c.lambda === 'number' ? c.lambda > 0 : c.lambda.some((l) => l > 0))) {
    // Dr. Zero: no teacher, so no distillation term whatever lambda says.
    throw settingError('lambda', 'must be 0 with --privileged none (no teacher, no distillation: Dr. Zero)');
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
    `--tiny-hidden ${c.tinyHidden}, --tiny-layers ${c.tinyLayers}, --tiny-vocab ${c.tinyVocab}: ` +
      `random-tiny would have ${(n / 1e6).toFixed(0)}M parameters per policy, ` +
      `more than the ${TINY_MAX_PARAMS / 1e6}M a random test model may have; ` +
      'lower these settings, or give a model folder with --model',
    'tinyHidden',
  );
}

/**
 * Refuses a turn budget the model's context cannot hold: a turn of --turn-tokens after the prompt must fit
 * in `maxPositions` (else every rollout stops for context and the loss runs over no tokens). `source` names
 * where the context length comes from.
 */
export function checkContext(c: Pick<SelfPlayConfig, 'turnTokens'>, maxPositions: number, source: string): void {
  if (c.turnTokens < maxPositions) return;
  throw settingError(
    'turnTokens',
    `${c.turnTokens} tokens per turn do not fit ` +
      `in the model's context of ${maxPositions} tokens (${source}); ` +
      'lower --turn-tokens: the prompt, the turns and the tool replies of a rollout must all fit in the context',
  );
}

/** The roles whose prompts a command runs: evaluation the student's, training and probes every role's. */
export type PromptRole = 'student' | 'teacher' | 'examiner';

/**
 * Refuses prompts the model's context cannot hold with a turn after them (`prompts`: the longest of each role, in
 * tokens; `source` names where the context length comes from): every rollout would stop at once for context, so an
 * evaluation would report 0% and training would learn from nothing.
 */
export function checkPromptsFit(
  c: Pick<SelfPlayConfig, 'turnTokens'>,
  prompts: Record<PromptRole, number>,
  roles: readonly PromptRole[],
  maxPositions: number,
  source: string,
): void {
  for (const role of roles) {
    const p = prompts[role];
    if (p + c.turnTokens <= maxPositions) continue;
    const context = `the model's context of ${maxPositions} tokens (${source})`;
    throw new ConfigError(
      p >= maxPositions
        ? `the ${role}'s prompt takes up to ${p} tokens, more than ${context}: no answer could be written; use a model ` +
            'with a longer context (or shorter passages)'
        : `the ${role}'s prompt (up to ${p} tokens) and a turn of --turn-tokens ${c.turnTokens} do not fit in ` +
            `${context}; lower --turn-tokens to at most ${maxPositions - p}, or use a model with a longer context`,
      'turnTokens',
    );
  }
}

/** Where a run's model's context length comes from, for messages. */
export function contextSource(c: Pick<SelfPlayConfig, 'model'>): string {
  return c.model === 'random-tiny' ? '--tiny-max-positions' : `max_position_embeddings in ${c.model}'s config.json`;
}

/** A preset, with overrides applied and checked. */
export function makeConfig(preset: PresetName = 'demo', overrides: Partial<SelfPlayConfig> = {}): SelfPlayConfig {
  if (!(preset in PRESETS))
    throw new ConfigError(
      `--preset: '${String(preset)}' is not allowed; use one of ${Object.keys(PRESETS).join(', ')}`,
    );
  const base = PRESETS[preset];
  const c = { ...base, ...overrides } as SelfPlayConfig;
  // Dr. Zero is "the same loop with λ = 0 and no teacher": --privileged none alone means that.
  if (overrides.privileged === 'none' && overrides.lambda === undefined) c.lambda = 0;
  return validateConfig(c);
}

/** The setting a command-line flag names, or null. */
export function keyOfFlag(flag: string): keyof SelfPlayConfig | null {
  for (const [key, spec] of Object.entries(SETTINGS)) if (spec.flag === flag) return key as keyof SelfPlayConfig;
  return null;
}

/** Parses a command-line value for a setting; throws a ConfigError naming the flag and allowed values. */
export function parseOptionValue<K extends keyof SelfPlayConfig>(key: K, text: string): SelfPlayConfig[K] {
  const spec = SETTINGS[key];
  const k = spec.kind;
  const bad = () => settingError(key, `'${text}' is not allowed; use ${describeKind(k)}`);
  const list = () => text.split(',').map((s) => parseNumber(s.trim()));
  let v: unknown;
  switch (k.t) {
    case 'int':
    case 'number':
      v = parseNumber(text.trim());
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

/**
 * The flags that make `preset` into `c` (each setting that differs, in the table's order), so that
 * `npm run train -- --preset <preset> <flags>` runs with `c`; values with shell characters are quoted.
 */
export function flagsFor(c: SelfPlayConfig, preset: PresetName = 'paper'): string[] {
  const from = PRESETS[preset];
  const quote = (s: string) => (/^[\w.,:/@+-]+$/.test(s) || s === "''" ? s : `'${s.replace(/'/g, "'\\''")}'`);
  return (Object.keys(SETTINGS) as SettingKey[])
    .filter((k) => JSON.stringify(c[k]) !== JSON.stringify(from[k]))
    .map((k) => `--${SETTINGS[k].flag} ${quote(flagValue(c[k]))}`);
}

/** Help lines for the command line: `--flag  help (paper: x, demo: y)`. */
export function optionHelp(): string[] {
  const show = flagValue;
  return (Object.keys(SETTINGS) as (keyof SelfPlayConfig)[]).map((key) => {
    const s = SETTINGS[key];
    return `  --${s.flag.padEnd(20)} ${s.help} (paper ${show(PAPER[key])}, demo ${show(DEMO[key])})`;
  });
}
