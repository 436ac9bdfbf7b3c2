// How much GPU memory a run of a model will take, worked out from config.json and the run settings alone,
// BEFORE any weight is downloaded or allocated, and checked against the adapter's limits. WebGPU does not
// tell a page how much memory the GPU has, so the total is an estimate shown to the user; the hard limit
// it can check is the largest single buffer (maxStorageBufferBindingSize / maxBufferSize).
//
// The total is the high-water mark of the buffer pool (src/gpu/buffer-pool.ts) over the run's stages: what
// every stage keeps (weights, adapters, AdamW moments) plus the largest stage's transient memory. Inside a
// training forward pass every intermediate of every layer stays alive until the pass ends, and the
// backward pass keeps all of its gradients until it ends, so a pass costs tokens × layers × the floats one
// layer makes per token (counted from src/model/decoder.ts below); a pass without a tape (the teacher's,
// prefill) frees each layer's intermediates as it goes. Weights count in the dtype they are stored in
// (src/model/weight-storage.ts): trained copies in f32, frozen ones (the LoRA base, the k3 reference) in the
// checkpoint's dtype as config.json's torch_dtype names it. test/unit/selfplay/memory-plan-vs-pool.gpu.test.ts holds
// the total within 20% of a measured run's high-water mark.
import { chunkBytes } from '../gpu/ops/vocab_head.ts';
import { kvCacheBytes, PREFILL_TOKENS, rowsWithin } from '../model/generate.ts';
import { stateWords } from '../model/decode-state.ts';
import { memoryEstimate } from '../model/io.ts';
import { parameterCount, type ModelConfig } from '../model/config.ts';
import { weightBytes } from '../model/weight-storage.ts';
import { needsReference, type SelfPlayConfig } from './config.ts';

export interface MemoryLine {
  label: string;
  bytes: number;
  /** The setting that shrinks this term, for messages ("micro-batch", "LoRA policies", ...). */
  setting?: string;
}

export interface MemoryReport {
  arch: string;
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  vocab: number;
  params: number;
  /** f32 weights of one copy. */
  weightBytes: number;
  /** One frozen copy of the weights as stored (matrices in the checkpoint's dtype when F16/BF16). */
  frozenWeightBytes: number;
  largestTensorBytes: number;
  /** Sum of the breakdown. */
  totalBytes: number;
  breakdown: MemoryLine[];
  /** The largest line of the breakdown (what to shrink first). */
  largestTerm: MemoryLine;
  /** The prompt lengths the estimate assumed. */
  prompts: PromptLengths;
  /** min(maxStorageBufferBindingSize, maxBufferSize) of the adapter. */
  maxBinding: number;
  /** False when something certainly cannot be allocated (problems says what). */
  fits: boolean;
  problems: string[];
  warnings: string[];
}

export interface AdapterLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  /** The device's memory where it is known (a CPU driver's is the host's RAM); WebGPU does not say a GPU's. */
  deviceBytes?: number;
}

/** More memory than any device WebGPU reaches holds: an estimate past it is refused whatever the device. */
export const NO_DEVICE_BYTES = 256 * 2 ** 30;

/** Why `totalBytes` cannot be had on the device (its known memory, or any device's), or null. */
function deviceProblem(totalBytes: number, limits: AdapterLimits): string | null {
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;
  if (limits.deviceBytes !== undefined && totalBytes > limits.deviceBytes) {
    return `It needs about ${gib(totalBytes)}, more than this device's ${gib(limits.deviceBytes)}.`;
  }
  if (totalBytes > NO_DEVICE_BYTES) {
    return `It needs about ${gib(totalBytes)}, more than any GPU holds (${gib(NO_DEVICE_BYTES)}).`;
  }
  return null;
}

/** The longest prompt of each kind, in tokens of the model's tokenizer (with its chat template). */
export interface PromptLengths {
  student: number;
  /** The teacher's prompt with its privileged context (the question's construction path). */
  teacher: number;
  /** The examiner's prompt with its source passage. */
  examiner: number;
  /** True when these are guesses (no tokenizer yet), not counted from the run's prompts. */
  guessed?: boolean;
}

/** What the estimate needs of a run's settings (with recompute resolved: recomputes). */
type RunShape = Omit<RunSettings, 'recompute'> & { recompute: boolean };

type RunSettings = Pick<
  SelfPlayConfig,
  | 'policies'
  | 'loraRank'
  | 'beta'
  | 'examinerBeta'
  | 'privileged'
  | 'microBatch'
  | 'recompute'
  | 'kvBudget'
  | 'studentBatch'
  | 'rolloutsPerQuestion'
  | 'miniBatches'
  | 'maxTurns'
  | 'turnTokens'
  | 'toolTokens'
  | 'examinerBatch'
  | 'evalBatch'
>;

/** Guesses for before the tokenizer is known (the page's estimate ahead of a download). */
export const GUESSED_PROMPTS: PromptLengths = { student: 160, teacher: 512, examiner: 256, guessed: true };
const MiB = 2 ** 20;
/** Bytes in GiB from 1 GiB up, else in MiB: the plan's lines as printed. */
export const memorySize = (b: number): string =>
  b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : `${(b / 2 ** 20).toFixed(1)} MiB`;
const mib = (b: number) => `${(b / MiB).toFixed(b < 10 * MiB ? 1 : 0)} MiB`;

/** Parameters of rank-r adapters on every attention and MLP projection. */
export function loraParams(cfg: ModelConfig, rank: number): number {
  const q = cfg.heads * cfg.headDim;
  const kv = cfg.kvHeads * cfg.headDim;
  const pairs: [number, number][] = [
    [q, cfg.hidden],
    [kv, cfg.hidden],
    [kv, cfg.hidden],
    [cfg.hidden, q],
    [cfg.intermediate, cfg.hidden],
    [cfg.intermediate, cfg.hidden],
    [cfg.hidden, cfg.intermediate],
  ];
  return cfg.layers * pairs.reduce((s, [o, i]) => s + rank * (o + i), 0);
}

/**
 * f32 values one decoder layer allocates per token in a forward pass (src/model/decoder.ts): the two RMSNorm
 * outputs, q/k/v, q/k after RoPE (and after the Qwen3 q/k norms), the attention output (attention reads and
 * writes the projections' token-major layout: no head-major copies) and its log-sum-exp, o_proj, two residual
 * sums, gate, up, SwiGLU and down_proj. A LoRA projection makes x·A, its scaled copy, (s·x·A)·B and the sum
 * beside y.
 */
export function layerFloatsPerToken(cfg: ModelConfig, lora: { rank: number } | null): number {
  const D = cfg.hidden;
  const F = cfg.intermediate;
  const Q = cfg.heads * cfg.headDim;
  const K = cfg.kvHeads * cfg.headDim;
  let n = 6 * D + 3 * Q + 3 * K + cfg.heads + 3 * F + 2;
  if (cfg.qkNorm) n += Q + K;
  if (lora) n += 2 * (Q + 2 * K + 2 * D + 2 * F) + 14 * lora.rank;
  return n;
}

/**
 * Floats per token of the last decoder layer at a row no loss reads (CausalLM.hidden's keep): its input norm, its
 * keys and values (rotated, normed on Qwen3) and, on GPUs, its queries and attention output; the output projection
 * and the MLP run at the policy rows only.
 */
export function unreadLastLayerFloats(cfg: ModelConfig, lora: { rank: number } | null): number {
  const Q = cfg.heads * cfg.headDim;
  const K = cfg.kvHeads * cfg.headDim;
  let n = cfg.hidden + 3 * K + 3 * Q + cfg.heads;
  if (cfg.qkNorm) n += Q + K;
  if (lora) n += 2 * (Q + 2 * K) + 6 * lora.rank;
  return n;
}

/**
 * The backward pass allocates about this many floats per forward float: each op's input gradients, the
 * attention backward's row statistics, RMSNorm's temporaries, and the sums that
 * accumulate gradients reaching a tensor twice (the residual stream). Under LoRA the frozen projections'
 * weight gradients are skipped and the adapters' intermediates are narrow, so the ratio is lower. Measured
 * on piplay's decoder (peak live bytes of a forward + backward over the forward's own,
 * test/unit/selfplay/memory-plan-vs-pool.gpu.test.ts).
 */
const BACKWARD_PER_FORWARD = { full: 1.6, lora: 1.15 };
/**
 * The same with activation recompute, over the forward floats of the one layer recomputed: full training
 * also makes that layer's weight gradients and their sums into `.grad`. Measured the same way (LoRA again at
 * 23ae9e6, once the last layer ran its MLP at the policy rows only: the peak's backward took 0.6-1.0 of the layer's
 * forward floats, where the last layer's had taken more).
 */
const BACKWARD_PER_LAYER = { full: 2.2, lora: 1.0 };
/** The pool rounds each buffer up to its size class (quarter powers of two): about 10% on average. */
const POOL_ROUNDING = 1.1;

/** What a training pass costs per token and how many tokens it holds, the same for every stage's terms. */
interface Pass {
  /**
   * Bytes a training forward keeps per token (its last layer at a row no loss reads), and more per policy token (the
   * last layer whole there); a pass without a tape; the backward's, per token and more per policy token.
   */
  perToken: number;
  perPolicyToken: number;
  /** Of perToken, with recompute: the one layer the forward runs, freed before the teacher's forward. */
  runningPerToken: number;
  perTokenNoGrad: number;
  backwardPerToken: number;
  backwardPerPolicyToken: number;
  /** Tokens of a rollout's turns and tool replies after its prompt. */
  response: number;
  /** Rollouts of a student step, and of one forward/backward. */
  rollouts: number;
  rows: number;
  policyTokens: number;
  maxBinding: number;
  /** Whether the logits are read chunk by chunk over rows, and the bytes of the logits that live at once. */
  chunked: boolean;
  logits: number;
  /** Bytes of the trained parameters' gradients. */
  grads: number;
}

const MICRO = 'micro-batch (--micro-batch)';

/** What every stage keeps: the weights (trained copies, a frozen base or reference), adapters, AdamW moments. */
function keptTerms(cfg: ModelConfig, run: RunShape): { kept: MemoryLine[]; trained: number } {
  const params = parameterCount(cfg);
  const { paramBytes } = memoryEstimate(cfg);
  const frozenBytes = weightBytes(cfg, true);
  const stored = frozenBytes < paramBytes ? ` (matrices in ${cfg.torchDtype})` : '';
  const teacher = run.privileged !== 'none';
  const reference = needsReference(run);
  const lora = run.policies === 'lora' ? { rank: run.loraRank } : null;
  const kept: MemoryLine[] = [];
  let trained: number;
  if (!lora) {
    const copies = 2 + (teacher ? 1 : 0);
    kept.push({
      label: `weights: ${copies} full f32 copies (examiner, student${teacher ? ', teacher' : ''})`,
      bytes: copies * paramBytes,
      setting: 'LoRA policies (--policies lora)',
    });
    if (reference) {
      kept.push({
        label: `weights: the frozen reference${stored}`,
        bytes: frozenBytes,
        setting: '--beta 0 and --examiner-beta 0',
      });
    }
    trained = params;
  } else {
    kept.push({ label: `weights: one shared frozen base${stored}`, bytes: frozenBytes, setting: 'a smaller model' });
    trained = loraParams(cfg, lora.rank);
    const adapters = 2 + (teacher ? 1 : 0);
    kept.push({
      label: `LoRA adapters (rank ${lora.rank}) ×${adapters}`,
      bytes: adapters * trained * 4,
      setting: 'LoRA rank',
    });
  }
  kept.push({
    label: 'AdamW moments (examiner and student)',
    bytes: 2 * 2 * trained * 4,
    setting: lora ? 'LoRA rank' : 'LoRA policies (--policies lora)',
  });
  return { kept, trained };
}

/**
 * What one rollout may hold past its prompt, as the plan sizes a pass (and src/selfplay/micro-batches.ts bounds
 * one): a student's every turn and tool reply, its sampled (policy) tokens, and an examiner's (one turn).
 */
export function rolloutBudget(run: Pick<RunShape, 'maxTurns' | 'turnTokens' | 'toolTokens'>): {
  response: number;
  policy: number;
  examiner: number;
} {
  return {
    response: run.maxTurns * (run.turnTokens + run.toolTokens),
    policy: run.maxTurns * run.turnTokens,
    examiner: run.turnTokens,
  };
}

function passOf(cfg: ModelConfig, run: RunShape, limits: AdapterLimits, trained: number): Pass {
  const lora = run.policies === 'lora' ? { rank: run.loraRank } : null;
  const layerFloats = layerFloatsPerToken(cfg, lora);
  // A training forward keeps every layer's intermediates (the last layer's whole at the policy tokens only), or with
  // recompute (src/gpu/recompute.ts) each layer's input and output only, plus the one layer it is running.
  const unread = unreadLastLayerFloats(cfg, lora);
  const perToken =
    (run.recompute ? (cfg.layers + 1) * cfg.hidden + layerFloats : layerFloats * (cfg.layers - 1) + unread) * 4;
  const perPolicyToken = run.recompute ? 0 : (layerFloats - unread) * 4;
  const runningPerToken = run.recompute ? layerFloats * 4 : 0;
  // A pass without a tape (teacher, prefill) frees each layer's intermediates and its input when the layer
  // ends: it holds one layer's and the residual stream of two.
  const perTokenNoGrad = (layerFloats + 2 * cfg.hidden) * 4;
  const backwardPerForward = BACKWARD_PER_FORWARD[lora ? 'lora' : 'full'];
  // The backward pass per token: the gradients of every intermediate; with recompute, the gradients of the
  // one layer run again (its intermediates are the forward's one layer, counted there) beside the gradient of
  // each layer's input (kept until the pass ends).
  const backwardPerToken = run.recompute
    ? (BACKWARD_PER_LAYER[lora ? 'lora' : 'full'] * layerFloats + cfg.layers * cfg.hidden) * 4
    : backwardPerForward * perToken;
  const backwardPerPolicyToken = backwardPerForward * perPolicyToken;
  const budget = rolloutBudget(run);
  const response = budget.response;
  const rollouts = run.studentBatch * run.rolloutsPerQuestion;
  // Rows of one forward/backward: a micro-batch of rollouts (0 = the whole minibatch).
  const rows = run.microBatch > 0 ? Math.min(run.microBatch, rollouts) : Math.ceil(rollouts / run.miniBatches);
  const policyTokens = rows * budget.policy;
  const maxBinding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  // Logits past one chunk (a binding, at most LOGITS_CHUNK_BYTES) are read chunk by chunk over rows
  // (src/gpu/ops/vocab_head.ts): one chunk lives.
  const chunk = chunkBytes(maxBinding);
  const chunked = policyTokens * cfg.vocabSize * 4 > chunk;
  const logits = chunked
    ? Math.max(1, Math.floor(chunk / (4 * cfg.vocabSize))) * cfg.vocabSize * 4
    : policyTokens * cfg.vocabSize * 4;
  return {
    perToken,
    perPolicyToken,
    runningPerToken,
    perTokenNoGrad,
    backwardPerToken,
    backwardPerPolicyToken,
    response,
    rollouts,
    rows,
    policyTokens,
    maxBinding,
    chunked,
    logits,
    grads: trained * 4,
  };
}

/** The student step's pass: forward, backward (or the teacher's forward, whichever is larger) and the logits. */
function studentTerms(cfg: ModelConfig, run: RunShape, prompts: PromptLengths, p: Pass): MemoryLine[] {
  const { perToken, perTokenNoGrad, backwardPerToken, response, rows, policyTokens, chunked, logits, grads } = p;
  const { perPolicyToken, backwardPerPolicyToken } = p;
  const teacher = run.privileged !== 'none';
  const studentTokens = rows * (prompts.student + response);
  const micro = MICRO;
  const studentFwd = studentTokens * perToken + policyTokens * perPolicyToken;
  const studentStage: MemoryLine[] = [
    {
      label:
        `student forward: ${rows} rollouts × ${prompts.student + response} tokens, ` +
        (run.recompute ? "each layer's input (recomputed on the backward pass)" : "every layer's intermediates"),
      bytes: studentFwd,
      setting: run.recompute ? micro : 'activation recompute (--recompute)',
    },
    {
      label: run.recompute
        ? 'student backward: one layer recomputed, its gradients'
        : 'student backward: its gradients',
      bytes: studentTokens * backwardPerToken + policyTokens * backwardPerPolicyToken + grads,
      setting: micro,
    },
    // Student logits and log-probs, their gradients (the teacher's are freed before the backward pass).
    {
      label: chunked
        ? `logits of one chunk of rows (${logits / (4 * cfg.vocabSize)} of ${policyTokens} tokens × ` +
          `${cfg.vocabSize}) and their gradients`
        : `logits of one micro-batch (${policyTokens} tokens × ${cfg.vocabSize}) and their gradients`,
      bytes: 3 * logits,
      setting: micro,
    },
  ];
  if (teacher) {
    // The teacher's forward runs beside the student's, before the backward pass: whichever phase is larger. With
    // recompute the student's forward has freed the layer it ran by then: only each layer's input is beside it.
    const teacherFwd = rows * (prompts.teacher + response) * perTokenNoGrad + 2 * logits;
    const running = studentTokens * p.runningPerToken;
    const backward = studentStage[1]!.bytes + logits;
    if (teacherFwd > backward + running) {
      studentStage[0] = { ...studentStage[0]!, bytes: studentFwd - running };
      studentStage[1] = {
        label:
          `teacher forward: ${rows} rollouts × ${prompts.teacher + response} tokens (privileged prompt), a ` +
          'layer at a time',
        bytes: teacherFwd,
        setting: micro,
      };
    }
  }
  return studentStage;
}

/** The examiner step's pass, forward and backward. */
function examinerTerms(run: RunShape, prompts: PromptLengths, p: Pass): MemoryLine[] {
  const { perToken, perPolicyToken, backwardPerToken, backwardPerPolicyToken, grads } = p;
  const micro = MICRO;
  const examinerRows = run.microBatch > 0 ? Math.min(run.microBatch, run.examinerBatch) : run.examinerBatch;
  const examinerLength = prompts.examiner + rolloutBudget(run).examiner;
  const examinerTokens = examinerRows * examinerLength;
  const examinerPolicy = examinerRows * rolloutBudget(run).examiner;
  const examinerFwd = examinerTokens * perToken + examinerPolicy * perPolicyToken;
  const examinerStage: MemoryLine[] = [
    {
      label: `examiner forward + backward: ${examinerRows} rollouts × ${examinerLength} tokens`,
      bytes: examinerFwd + examinerTokens * backwardPerToken + examinerPolicy * backwardPerPolicyToken + grads,
      setting: micro,
    },
  ];
  return examinerStage;
}

/** What decoding `batchRows` rows together holds. */
interface Decode {
  /** Rows decoded at once (within the KV budget), and the lines of their cache and prefill. */
  rows: number;
  lines: MemoryLine[];
}

/**
 * Decoding `batchRows` rows (rollouts, or held-out questions: `noun`) together: the KV cache (within the KV
 * budget) and the prompt's prefill; `setting` is what lowers them when the budget does not.
 */
function decodeTerms(
  cfg: ModelConfig,
  run: Pick<RunShape, 'kvBudget' | 'maxTurns' | 'turnTokens' | 'toolTokens'>,
  prompts: PromptLengths,
  perTokenNoGrad: number,
  batch: { rows: number; noun: string; setting: string },
  adapterFloats: number,
): Decode {
  const response = rolloutBudget(run).response;
  // Each turn decodes with a cache of the prompt, the turns and tool replies so far and the turn's own tokens
  // (the last turn's cache laid out anew, one layer at a time, src/model/generate.ts): the last turn's is the
  // largest (no tool reply after it). Rows past the KV budget decode in parts.
  const capacity = Math.max(prompts.student, prompts.examiner) + response - run.toolTokens;
  const rows = rowsWithin(cfg, run.kvBudget * MiB, capacity, batch.rows);
  // A turn prefills what is new since the last (the first, its prompt), at most the history, in chunks of time
  // steps (src/model/generate.ts).
  const history = capacity - run.turnTokens;
  const prefillSteps = Math.min(history, Math.max(1, Math.floor(PREFILL_TOKENS / rows)));
  const lines: MemoryLine[] = [
    {
      label:
        `KV cache: ${rows} ${batch.noun} × ${capacity} positions` +
        (rows < batch.rows ? ` (${batch.rows} decode in parts under --kv-budget ${run.kvBudget})` : ''),
      bytes: kvCacheBytes(cfg, rows, capacity),
      setting: rows < batch.rows ? 'KV budget (--kv-budget)' : batch.setting,
    },
    {
      label: `prompt prefill: ${rows} ${batch.noun} × ${prefillSteps} of up to ${history} tokens at a time`,
      bytes: rows * prefillSteps * perTokenNoGrad,
      setting: batch.setting,
    },
    {
      // src/model/decode-state.ts; a few stop ids.
      label: 'fused decoding: the norms, biases and adapters of the decoding policy, packed',
      bytes: 4 * stateWords(cfg, rows, 8, adapterFloats),
      setting: batch.setting,
    },
    {
      // What a decoding call holds from its first step to its last (src/model/decode-program.ts, DecodeState.rowsX).
      label: `one decoding step: ${rows} rows' embeddings, attention output, MLP activations and logits`,
      bytes: 4 * rows * (cfg.hidden + cfg.heads * cfg.headDim + cfg.intermediate + cfg.vocabSize),
      setting: batch.setting,
    },
    {
      // The prefill's logits of the rows prefilled, and every row's copy of its twin's (src/model/generate.ts).
      label: `the prefill's last logits, and their copy for rows that share a prompt (2 × ${rows} × ${cfg.vocabSize})`,
      bytes: 4 * 2 * rows * cfg.vocabSize,
      setting: batch.setting,
    },
    {
      // A turn's kept cache is laid out anew one layer at a time (KVCache.relayout, src/model/decoder.ts).
      label: "a turn's cache laid out anew: one layer's new keys and values beside the old cache",
      bytes: kvCacheBytes(cfg, rows, capacity) / cfg.layers,
      setting: batch.setting,
    },
  ];
  return { rows, lines };
}

/** Generation: the rollouts of a step (or the held-out batch, whichever is more) decoded together. */
function generationTerms(cfg: ModelConfig, run: RunShape, prompts: PromptLengths, p: Pass): MemoryLine[] {
  const rows = Math.max(p.rollouts, run.evalBatch);
  const setting = 'student batch or rollouts per question';
  const adapters = run.policies === 'lora' ? loraParams(cfg, run.loraRank) : 0;
  return decodeTerms(cfg, run, prompts, p.perTokenNoGrad, { rows, noun: 'rollouts', setting }, adapters).lines;
}

/**
 * The memory a π-Play run of `cfg` needs: what every stage keeps (weights, adapters, AdamW moments) and the
 * largest stage's passes (training forward and backward, the teacher's forward, generation's KV cache).
 * `prompts` are the longest prompts in the model's tokens (GUESSED_PROMPTS before the tokenizer is known).
 */
export function estimateRun(
  cfg: ModelConfig,
  settings: RunSettings,
  limits: AdapterLimits,
  prompts: PromptLengths = GUESSED_PROMPTS,
): MemoryReport {
  return estimate(cfg, { ...settings, recompute: recomputes(cfg, settings) }, limits, prompts);
}

/** With --recompute 'auto', a run keeps every layer's activations where it then needs at most this much. */
export const KEEP_ACTIVATIONS_BYTES = 2 ** 30;

/** WebGPU's default limits: what 'auto' assumes, so that it decides the same on every device. */
const DEFAULT_LIMITS: AdapterLimits = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 256 * MiB };

/**
 * Whether a run's training passes recompute each layer's activations (--recompute): 'on', 'off', or 'auto':
 * off where the run's estimate without recompute (guessed prompt lengths, WebGPU's default limits: the same
 * answer on every host) is at most KEEP_ACTIVATIONS_BYTES. Configs written before 'auto' hold a boolean.
 */
export function recomputes(cfg: ModelConfig, settings: RunSettings): boolean {
  const r: unknown = settings.recompute;
  if (r === 'auto') {
    return (
      estimate(cfg, { ...settings, recompute: false }, DEFAULT_LIMITS, GUESSED_PROMPTS).totalBytes >
      KEEP_ACTIVATIONS_BYTES
    );
  }
  return r === 'on' || r === true;
}

function estimate(cfg: ModelConfig, run: RunShape, limits: AdapterLimits, prompts: PromptLengths): MemoryReport {
  const { largestTensorBytes } = memoryEstimate(cfg);
  const teacher = run.privileged !== 'none';
  const lora = run.policies === 'lora';
  const { kept, trained } = keptTerms(cfg, run);
  const pass = passOf(cfg, run, limits, trained);
  const { rows, response, maxBinding } = pass;
  // Each stage's transient memory, as terms; the largest stage counts.
  const studentStage = studentTerms(cfg, run, prompts, pass);
  const examinerStage = examinerTerms(run, prompts, pass);
  const generationStage = generationTerms(cfg, run, prompts, pass);
  const sum = (ls: MemoryLine[]) => ls.reduce((t, l) => t + l.bytes, 0);
  const stages = [studentStage, examinerStage, generationStage];
  const largest = stages.reduce((a, b) => (sum(b) > sum(a) ? b : a));
  const lines = [...kept, ...largest];
  const rounding = (POOL_ROUNDING - 1) * sum(lines);
  lines.push({ label: 'buffer pool rounding to size classes', bytes: rounding });
  const totalBytes = sum(lines);
  // The largest single activation: gate/up of the longest pass, [rows · tokens, intermediate].
  const longest = rows * ((teacher ? Math.max(prompts.teacher, prompts.student) : prompts.student) + response);
  const widest = Math.max(cfg.intermediate, cfg.heads * cfg.headDim) * 4;

  const problems: string[] = [];
  const warnings: string[] = [];
  if (largestTensorBytes > maxBinding) {
    problems.push(
      `The model's largest weight takes ${mib(largestTensorBytes)} in f32, more than this GPU's largest buffer ` +
        `(${mib(maxBinding)}). Pick a smaller model, or a browser/GPU with larger limits.`,
    );
  }
  if (longest * widest > maxBinding) {
    problems.push(
      `One activation of a training micro-batch (${longest} tokens × ${widest / 4}) takes ${mib(longest * widest)}, ` +
        `more than the largest buffer (${mib(maxBinding)}). Lower micro-batch, turn tokens or max turns.`,
    );
  }
  const device = deviceProblem(totalBytes, limits);
  if (device) problems.push(device);
  else if (totalBytes > 8 * 2 ** 30) {
    const advice = lora
      ? 'Consider a smaller micro-batch or a smaller model.'
      : 'Consider LoRA policies or a smaller model.';
    warnings.push(
      `About ${(totalBytes / 2 ** 30).toFixed(1)} GiB in all: more than most GPUs give a browser tab. ${advice}`,
    );
  } else if (totalBytes > 3 * 2 ** 30) {
    const advice = lora ? 'a smaller micro-batch needs less' : 'LoRA policies need far less';
    warnings.push(
      `About ${(totalBytes / 2 ** 30).toFixed(1)} GiB in all: needs a GPU with plenty of free memory; ${advice}.`,
    );
  }
  return report(cfg, lines, prompts, maxBinding, problems, warnings);
}

/**
 * The memory of evaluating (or probing) `copies` copies of `cfg` without training: the weights (as stored for a
 * model folder, f32 for a run's trained policies), and generation's KV cache, prefill and decoding step over the
 * held-out batch (--eval-batch rows, under --kv-budget).
 */
export function estimateInference(
  cfg: ModelConfig,
  run: Pick<RunShape, 'kvBudget' | 'evalBatch' | 'maxTurns' | 'turnTokens' | 'toolTokens'>,
  limits: AdapterLimits,
  opts: { prompts?: PromptLengths; copies?: number; trained?: boolean } = {},
): MemoryReport {
  const prompts = opts.prompts ?? GUESSED_PROMPTS;
  const copies = opts.copies ?? 1;
  const { paramBytes, largestTensorBytes } = memoryEstimate(cfg);
  const frozenBytes = weightBytes(cfg, true);
  const each = opts.trained ? paramBytes : frozenBytes;
  const perTokenNoGrad = (layerFloatsPerToken(cfg, null) + 2 * cfg.hidden) * 4;
  const setting = 'held-out batch (--eval-batch)';
  const batch = { rows: run.evalBatch, noun: 'questions', setting };
  const decode = decodeTerms(cfg, run, prompts, perTokenNoGrad, batch, 0);
  const lines: MemoryLine[] = [
    {
      label: `weights: ${copies === 1 ? 'the model' : `${copies} models`}${opts.trained ? ' in f32' : ''}`,
      bytes: copies * each,
      setting: 'a smaller model',
    },
    ...decode.lines,
  ];
  const sum = lines.reduce((t, l) => t + l.bytes, 0);
  lines.push({ label: 'buffer pool rounding to size classes', bytes: (POOL_ROUNDING - 1) * sum });
  const totalBytes = sum * POOL_ROUNDING;
  const maxBinding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const problems: string[] = [];
  if (largestTensorBytes > maxBinding) {
    problems.push(
      `The model's largest weight takes ${mib(largestTensorBytes)} in f32, more than this GPU's largest buffer ` +
        `(${mib(maxBinding)}). Pick a smaller model, or a browser/GPU with larger limits.`,
    );
  }
  const device = deviceProblem(totalBytes, limits);
  if (device) problems.push(device);
  return report(cfg, lines, prompts, maxBinding, problems, []);
}

/**
 * The memory of a pretraining step (src/pretrain/train.ts): the f32 weights, their gradients and AdamW's two moments,
 * and one forward and backward over `rows` × `seq` tokens (every layer's activations kept; the logits are read chunk
 * by chunk). A batch no device holds is refused here, before any text is generated for it.
 */
export function estimatePretrain(cfg: ModelConfig, rows: number, seq: number, limits: AdapterLimits): MemoryReport {
  const tokens = rows * seq;
  const { paramBytes } = memoryEstimate(cfg);
  const forward = tokens * layerFloatsPerToken(cfg, null) * cfg.layers * 4;
  const setting = 'rows or tokens per step (--batch, --seq)';
  const lines: MemoryLine[] = [
    { label: 'weights in f32', bytes: paramBytes, setting: 'a smaller model (--size)' },
    { label: 'gradients and AdamW moments', bytes: 3 * paramBytes, setting: 'a smaller model (--size)' },
    { label: `forward: ${rows} rows × ${seq} tokens, every layer's activations`, bytes: forward, setting },
    { label: 'backward', bytes: BACKWARD_PER_FORWARD.full * forward, setting },
  ];
  const sum = lines.reduce((t, l) => t + l.bytes, 0);
  lines.push({ label: 'buffer pool rounding to size classes', bytes: (POOL_ROUNDING - 1) * sum });
  const maxBinding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const problems: string[] = [];
  // The widest activation of a layer is the MLP's, [tokens, intermediate], in one buffer.
  const widest = tokens * Math.max(cfg.intermediate, cfg.hidden) * 4;
  if (widest > maxBinding)
    problems.push(
      `A layer's activation of ${rows} × ${seq} tokens takes ${mib(widest)}, more than this GPU's largest buffer ` +
        `(${mib(maxBinding)}).`,
    );
  const device = deviceProblem(sum * POOL_ROUNDING, limits);
  if (device) problems.push(device);
  const none = { student: 0, teacher: 0, examiner: 0 };
  return report(cfg, lines, none, maxBinding, problems, []);
}

/** The report of a plan: the model's shape and sizes beside the terms, their total and what it found. */
function report(
  cfg: ModelConfig,
  lines: MemoryLine[],
  prompts: PromptLengths,
  maxBinding: number,
  problems: string[],
  warnings: string[],
): MemoryReport {
  const { paramBytes, largestTensorBytes } = memoryEstimate(cfg);
  return {
    arch: cfg.arch,
    layers: cfg.layers,
    hidden: cfg.hidden,
    heads: cfg.heads,
    kvHeads: cfg.kvHeads,
    vocab: cfg.vocabSize,
    params: parameterCount(cfg),
    weightBytes: paramBytes,
    frozenWeightBytes: weightBytes(cfg, true),
    largestTensorBytes,
    totalBytes: lines.reduce((t, l) => t + l.bytes, 0),
    breakdown: lines,
    largestTerm: lines.reduce((a, b) => (b.bytes > a.bytes ? b : a)),
    prompts,
    maxBinding,
    fits: problems.length === 0,
    problems,
    warnings,
  };
}

/**
 * Null when the plan fits; else the refusal of `what` (a run, a pretraining): the problems, the largest term and the
 * setting that shrinks it.
 */
export function refusal(m: MemoryReport, what = 'this run'): string | null {
  if (m.fits) return null;
  const t = m.largestTerm;
  return (
    `${what} cannot fit this GPU: ${m.problems.join(' ')} The estimate's largest term is ${t.label} ` +
    `(${memorySize(t.bytes)})${t.setting ? `; lower it with ${t.setting}` : ''}.`
  );
}
