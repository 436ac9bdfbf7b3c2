// A pretraining run in the worker: the page's settings checked, the model trained by src/pretrain/run.ts
// (the recipe of `npm run pretrain`) with its step logs turned into the run events the page already shows
// (stage 'pretrain': progress with ETA, loss metrics), and the resulting folder plus a TRAINING.md stored
// as a model entry under a name no other entry has.
import type { Engine } from '../gpu/engine.ts';
import { pretrain, pretrainMemory, type PretrainOptions } from '../pretrain/run.ts';
import { refusal } from '../selfplay/memory-plan.ts';
import { pickPretrainSettings, pretrainProblems, settingsToOptions } from '../pretrain/settings.ts';
import { summarisePretrain, trainingMarkdown, type PretrainSummary } from '../pretrain/summary.ts';
import type { StepLog } from '../pretrain/train.ts';
import type { RunEvent } from '../selfplay/events.ts';
import type { BrowserCheckpoints, CheckpointMeta } from './checkpoint-store.ts';
import { resolveSource } from './model-source.ts';
import type { PretrainRequest } from './protocol.ts';

/** Settings that cannot be used (its name makes the page report it as a settings problem). */
export class PretrainConfigError extends Error {
  override name = 'ConfigError';
}

export interface PretrainJob {
  engine: Engine;
  store: BrowserCheckpoints;
  /** Aborted by Stop: the training loop throws the signal's reason before its next step. */
  signal: AbortSignal;
  emit: (ev: RunEvent) => void;
}

export interface PretrainOutcome {
  summary: PretrainSummary;
  /** The model folder (config, weights, tokenizer, TRAINING.md). */
  files: Map<string, Uint8Array>;
  /** The stored entry, or null when storing failed (saveError says why; `files` can still be downloaded). */
  saved: CheckpointMeta | null;
  saveError?: string;
}

/** Throws a PretrainConfigError naming every bad setting. */
export function checkPretrainRequest(req: PretrainRequest): void {
  const problems = pretrainProblems(req);
  if (problems.size) throw new PretrainConfigError(`pretraining settings: ${[...problems.values()].join('; ')}`);
}

/** The name to store the model under: the one asked for (refused when taken), else pretrained-<date>[-k]. */
export async function pretrainedName(store: BrowserCheckpoints, wanted?: string, now = new Date()): Promise<string> {
  const taken = new Set((await store.list()).map((c) => c.name));
  const asked = wanted?.trim();
  if (asked) {
    if (taken.has(asked))
      throw new PretrainConfigError(
        `a checkpoint named '${asked}' exists already; choose another name (nothing was replaced)`,
      );
    return asked;
  }
  const base = `pretrained-${now.toISOString().slice(0, 19).replace(/[:T]/g, '-')}`;
  let name = base;
  for (let k = 2; taken.has(name); k++) name = `${base}-${k}`;
  return name;
}

/** Trains, then stores the model as `name` (or a fresh name if an import took it meanwhile). */
export async function runPretrainJob(req: PretrainRequest, name: string, job: PretrainJob): Promise<PretrainOutcome> {
  const s = pickPretrainSettings(req);
  const started = performance.now();
  const from = req.from ? resolveSource(req.from, job.store) : null;
  job.emit({
    type: 'progress',
    stage: 'pretrain',
    iteration: 0,
    done: 0,
    total: s.steps,
    label: from ? `loading ${from.where}` : 'generating text and training the tokenizer',
  });
  // Tokenizer training holds the worker's thread for seconds; let the message above reach the page first.
  await new Promise((r) => setTimeout(r, 50));
  job.signal.throwIfAborted();
  const options: PretrainOptions = {
    ...settingsToOptions(s),
    train: { signal: job.signal },
    ...(from ? { from: { files: from.readFile, source: from.where } } : {}),
  };
  // A step no device holds is refused from the model's config alone, before minutes of text generation.
  const refused = refusal(await pretrainMemory(options, job.engine.info.limits), 'this pretraining');
  if (refused) throw new PretrainConfigError(refused);
  const result = await pretrain(job.engine, options, (log) => report(job.emit, log)).catch((e: unknown) => {
    throw forPage(e);
  });
  try {
    // An import may have taken the name while this trained: never replace an entry.
    const final = (await job.store.entry(name)) ? await pretrainedName(job.store) : name;
    const summary = summarisePretrain({
      name: final,
      cfg: result.cfg,
      params: result.params,
      stats: result.stats,
      logs: result.logs,
      seconds: (performance.now() - started) / 1000,
      from: from?.where ?? null,
      device: adapterName(job.engine),
    });
    const files = new Map(result.files).set(
      'TRAINING.md',
      new TextEncoder().encode(trainingMarkdown(summary, s, result.cfg, result.stats, result.logs)),
    );
    try {
      const renamed = final !== name ? ` (stored as '${final}': '${name}' was taken meanwhile)` : '';
      const note = `${summary.steps} steps, ${summary.tokens} tokens${renamed}`;
      const saved = await job.store.importModel(final, files, note, {
        origin: 'pretrained',
        base: from?.where ?? 'a new tiny model',
        metrics: { loss: summary.finalLoss },
      });
      return { summary, files, saved };
    } catch (e) {
      return { summary, files, saved: null, saveError: (e as Error).message };
    }
  } finally {
    result.model.dispose();
  }
}

/**
 * The adapter, named as the page's status line does (SwiftShader has no description: its vendor and
 * architecture).
 */
function adapterName(e: Engine): string {
  const i = e.info;
  const name = i.description || [i.vendor, i.architecture].filter(Boolean).join(' ') || 'an unnamed adapter';
  return `${name}${i.isCpu ? ' (software)' : ''}`;
}

/** One logged step as the events the page shows: progress (with ETA) and the loss curve's point. */
function report(emit: (ev: RunEvent) => void, log: StepLog): void {
  const rate = log.tokens / Math.max(log.seconds, 1e-9);
  const eta = (log.seconds / log.step) * (log.steps - log.step);
  emit({
    type: 'progress',
    stage: 'pretrain',
    iteration: 0,
    done: log.step,
    total: log.steps,
    etaSeconds: eta,
    label: `loss ${log.loss.toFixed(3)} · ${Math.round(rate)} tokens/s`,
  });
  emit({
    type: 'metrics',
    metrics: { stage: 'pretrain', iteration: 0, step: log.step, loss: log.loss, lr: log.lr, tokens_per_s: rate },
  });
}

/** The recipe's errors name command-line flags; on the page they name the form's fields. */
function forPage(e: unknown): unknown {
  if (!(e instanceof Error) || !/--(lr|seq)\b/.test(e.message)) return e;
  return new Error(
    e.message
      .replace(/--lr\b/g, 'the learning rate (lr)')
      .replace(/a longer --seq\b/g, 'a longer seq or a larger vocab'),
  );
}
