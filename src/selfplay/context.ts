// What every stage of a run shares, and the small helpers they all use.
import type { Engine } from '../gpu/engine.ts';
import { Rng } from '../env/random.ts';
import type { RolloutOptions } from '../rl/rollout.ts';
import type { BaseModel } from './base-model.ts';
import { stopIdsOf } from './base-model.ts';
import type { SelfPlayConfig } from './config.ts';
import type { Environment } from './environment.ts';
import type { RunEvent, Stage } from './events.ts';
import type { Policies } from './policies.ts';

export interface RunContext {
  engine: Engine;
  config: SelfPlayConfig;
  base: BaseModel;
  env: Environment;
  policies: Policies;
  emit: (event: RunEvent) => void;
}

/**
 * The random stream of one unit of work, derived from the run's seed and the unit's labels only (not from
 * earlier draws), so a resumed run draws exactly what the uninterrupted run would have drawn.
 */
export function rngFor(seed: number, ...labels: (string | number)[]): Rng {
  return new Rng(`piplay/${seed}/${labels.join('/')}`);
}

/** A () => U(0, 1) function over an Rng, for GenerationSession. */
export function uniform(rng: Rng): () => number {
  return () => rng.next();
}

/**
 * A loss, metric or gradient norm that is NaN or infinite: the run stops before the optimizer step, so the
 * weights and the last checkpoint stay as they were. `what` names the value ('loss', 'gradient norm', ...).
 */
export class NonFiniteLossError extends Error {
  override name = 'NonFiniteLossError';
  constructor(
    readonly stage: Stage,
    readonly iteration: number,
    readonly step: number,
    readonly what: string,
    readonly value: number,
    /** The value was found after the optimizer step (the weights' norm): the step's weights are not saved. */
    readonly afterStep = false,
  ) {
    const when = afterStep ? 'after the optimizer step at' : 'at';
    const stopped = afterStep ? 'The run stopped before saving that step' : 'The run stopped before the optimizer step';
    super(
      `piplay: the ${policyOf(stage)}'s ${what} is ${value} ${when} the ${stage} stage, iteration ${iteration + 1}, ` +
        `step ${step}: training diverged. ${stopped}, so the last checkpoint is intact; resume from it (--resume), ` +
        `or start again with ${divergenceAdvice(stage, what)}`,
    );
  }
}

/**
 * What to change when `what` diverged in `stage`: the setting that scales that term first (the distillation's
 * --lambda, the reference KL's --beta or --examiner-beta), then the stage's own learning rate and the clip.
 */
export function divergenceAdvice(stage: Stage, what: string): string {
  const steps = `a lower learning rate (${lrFlagOf(stage)}) or a tighter --grad-clip`;
  if (what === 'distill') return `a smaller distillation weight (--lambda), ${steps}`;
  if (what === 'kl_ref')
    return `a smaller KL weight (${stage === 'examiner' ? '--examiner-beta' : '--beta'}), ${steps}`;
  return steps;
}

/** The policy a stage trains (the examiner stage trains the examiner, the others the student). */
export function policyOf(stage: Stage): 'examiner' | 'student' {
  return stage === 'examiner' ? 'examiner' : 'student';
}

/** The learning-rate option of the policy a stage trains. */
export function lrFlagOf(stage: Stage): string {
  return stage === 'examiner' ? '--examiner-lr' : '--lr';
}

export function checkFinite(value: number, stage: Stage, iteration: number, step: number, what: string): void {
  if (!Number.isFinite(value)) throw new NonFiniteLossError(stage, iteration, step, what, value);
}

/** Rollout settings of the config for a role. */
export function rolloutOptions(
  ctx: Pick<RunContext, 'config' | 'env' | 'base'>,
  role: 'student' | 'examiner',
  random: () => number,
  greedy = false,
): RolloutOptions {
  const c = ctx.config;
  return {
    role,
    search: c.retriever === 'dense' ? ctx.env.denseSearch(c.denseModel) : ctx.env.search,
    maxTurns: c.maxTurns,
    turnTokens: c.turnTokens,
    toolTokens: c.toolTokens,
    temperature: greedy ? 0 : c.temperature,
    topP: greedy ? 1 : c.topP,
    random,
    stopIds: stopIdsOf(ctx.base),
    kvBudgetBytes: c.kvBudget * 2 ** 20,
  };
}

/** Chunks of `items` of at most `size` (size 0: one chunk). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  if (size <= 0 || size >= items.length) return items.length ? [items.slice()] : [];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** `n` nearly equal consecutive parts of `items` (no empty part unless items is shorter than n). */
export function split<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let k = 0; k < n; k++) {
    const part = items.slice(Math.floor((k * items.length) / n), Math.floor(((k + 1) * items.length) / n));
    if (part.length) out.push(part);
  }
  return out;
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

export function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}
