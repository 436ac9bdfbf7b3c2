// How much GPU memory a run of a model will take, worked out from config.json and the run settings alone,
// BEFORE any weight is downloaded or allocated, and checked against the adapter's limits. WebGPU does not
// tell a page how much memory the GPU has, so the total is an estimate shown to the user; the hard limit
// it can check is the largest single buffer (maxStorageBufferBindingSize / maxBufferSize).
import { memoryEstimate } from '../model/io.ts';
import { parameterCount, type ModelConfig } from '../model/config.ts';
import { needsReference, type SelfPlayConfig } from '../selfplay/config.ts';

export interface MemoryLine {
  label: string;
  bytes: number;
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
  largestTensorBytes: number;
  /** Sum of the breakdown. */
  totalBytes: number;
  breakdown: MemoryLine[];
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
}

type RunShape = Pick<
  SelfPlayConfig,
  'policies' | 'loraRank' | 'beta' | 'examinerBeta' | 'privileged' | 'microBatch' | 'studentBatch' | 'rolloutsPerQuestion' | 'miniBatches' | 'maxTurns' | 'turnTokens' | 'toolTokens'
>;

const MiB = 2 ** 20;
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
 * The memory a π-Play run of `cfg` needs: the policies' weights, the two trained policies' gradients and
 * AdamW moments, the KV cache of generation and the logits of one training micro-batch.
 */
export function estimateRun(cfg: ModelConfig, run: RunShape, limits: AdapterLimits): MemoryReport {
  const params = parameterCount(cfg);
  const { paramBytes, largestTensorBytes } = memoryEstimate(cfg);
  const teacher = run.privileged !== 'none';
  const reference = needsReference(run);
  const lines: MemoryLine[] = [];
  let trained: number;
  if (run.policies === 'separate') {
    const copies = 2 + (teacher ? 1 : 0) + (reference ? 1 : 0);
    lines.push({ label: `weights: ${copies} full copies (examiner, student${teacher ? ', teacher' : ''}${reference ? ', reference' : ''})`, bytes: copies * paramBytes });
    trained = params;
  } else {
    lines.push({ label: 'weights: one shared frozen base', bytes: paramBytes });
    trained = loraParams(cfg, run.loraRank);
    const adapters = 2 + (teacher ? 1 : 0);
    lines.push({ label: `LoRA adapters (rank ${run.loraRank}) ×${adapters}`, bytes: adapters * trained * 4 });
  }
  lines.push({ label: 'gradients + AdamW moments (examiner and student)', bytes: 2 * 3 * trained * 4 });
  // Rows of one forward/backward: a micro-batch of rollouts (0 = the whole minibatch).
  const rolloutsPerStep = run.studentBatch * run.rolloutsPerQuestion;
  const rows = run.microBatch > 0 ? run.microBatch : Math.ceil(rolloutsPerStep / run.miniBatches);
  const seq = run.maxTurns * (run.turnTokens + run.toolTokens) + 256; // + a prompt of a few hundred tokens
  const kv = 2 * cfg.layers * cfg.kvHeads * cfg.headDim * seq * rolloutsPerStep * 4;
  lines.push({ label: `KV cache: ${rolloutsPerStep} rollouts × ${seq} positions`, bytes: kv });
  const policyTokens = rows * run.maxTurns * run.turnTokens;
  const logits = policyTokens * cfg.vocabSize * 4;
  lines.push({ label: `logits of one micro-batch (${policyTokens} tokens × ${cfg.vocabSize})`, bytes: 2 * logits });
  const acts = rows * seq * cfg.layers * (4 * cfg.hidden + 2 * cfg.intermediate) * 4;
  lines.push({ label: 'activations kept for the backward pass', bytes: acts });
  const totalBytes = lines.reduce((s, l) => s + l.bytes, 0);

  const maxBinding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const problems: string[] = [];
  const warnings: string[] = [];
  if (largestTensorBytes > maxBinding) {
    problems.push(
      `The model's largest weight takes ${mib(largestTensorBytes)} in f32, more than this GPU's largest buffer (${mib(maxBinding)}). ` +
        'Pick a smaller model, or a browser/GPU with larger limits.',
    );
  }
  if (logits > maxBinding) {
    problems.push(
      `The logits of one training micro-batch (${policyTokens} tokens × vocabulary ${cfg.vocabSize}) take ${mib(logits)}, more than ` +
        `the largest buffer (${mib(maxBinding)}). Lower micro-batch, turn tokens or max turns.`,
    );
  }
  if (totalBytes > 8 * 2 ** 30) {
    warnings.push(`About ${(totalBytes / 2 ** 30).toFixed(1)} GiB in all: more than most GPUs give a browser tab. Consider LoRA policies or a smaller model.`);
  } else if (totalBytes > 3 * 2 ** 30) {
    warnings.push(`About ${(totalBytes / 2 ** 30).toFixed(1)} GiB in all: needs a GPU with plenty of free memory; LoRA policies need far less.`);
  }
  return {
    arch: cfg.arch,
    layers: cfg.layers,
    hidden: cfg.hidden,
    heads: cfg.heads,
    kvHeads: cfg.kvHeads,
    vocab: cfg.vocabSize,
    params,
    weightBytes: paramBytes,
    largestTensorBytes,
    totalBytes,
    breakdown: lines,
    maxBinding,
    fits: problems.length === 0,
    problems,
    warnings,
  };
}
