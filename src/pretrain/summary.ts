// What a finished pretraining run reports: the numbers the page shows, and the TRAINING.md written next to
// the weights (as `npm run pretrain` writes one), so a stored or exported model says how it was made.
import type { ModelConfig } from '../model/config.ts';
import type { PretrainStats } from './run.ts';
import type { PretrainSettings } from './settings.ts';
import type { StepLog } from './train.ts';

export interface PretrainSummary {
  /** The stored model's name. */
  name: string;
  params: number;
  /** Tokens seen (inputs), and how many of them were loss targets. */
  tokens: number;
  targets: number;
  seconds: number;
  finalLoss: number;
  firstLoss: number;
  /** Mean loss of the last (up to) five logs. */
  tailLoss: number;
  steps: number;
  hidden: number;
  layers: number;
  vocab: number;
  /** The model training continued from, or null for a fresh one. */
  from: string | null;
  /** The adapter it ran on. */
  device: string;
}

export function summarisePretrain(o: {
  name: string;
  cfg: ModelConfig;
  params: number;
  stats: PretrainStats;
  logs: readonly StepLog[];
  seconds: number;
  from: string | null;
  device: string;
}): PretrainSummary {
  const last = o.logs[o.logs.length - 1];
  const tail = o.logs.slice(-5);
  return {
    name: o.name,
    params: o.params,
    tokens: o.stats.tokens,
    targets: o.stats.targets,
    seconds: o.seconds,
    finalLoss: last?.loss ?? NaN,
    firstLoss: o.logs[0]?.loss ?? NaN,
    tailLoss: tail.length ? tail.reduce((a, l) => a + l.loss, 0) / tail.length : NaN,
    steps: last?.step ?? 0,
    hidden: o.cfg.hidden,
    layers: o.cfg.layers,
    vocab: o.cfg.vocabSize,
    from: o.from,
    device: o.device,
  };
}

function duration(s: number): string {
  return s >= 60 ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${s.toFixed(0)}s`;
}

/** TRAINING.md: the settings, the model, the data and the loss curve (at most ~20 logged steps). */
export function trainingMarkdown(
  sum: PretrainSummary,
  s: PretrainSettings,
  cfg: ModelConfig,
  stats: PretrainStats,
  logs: readonly StepLog[],
): string {
  const every = Math.max(1, Math.floor(logs.length / 20));
  return [
    `# ${sum.name}: a base model pretrained in the browser`,
    '',
    'A LlamaForCausalLM trained by piplay’s page (the recipe of `npm run pretrain`, src/pretrain/) on generated',
    'text only: encyclopedia passages of generated worlds other than the default one (seed 1), plus tool-format',
    'transcripts of a scripted student and a scripted examiner on those worlds.',
    '',
    '| | |',
    '|---|---|',
    `| seed | ${s.seed} |`,
    ...(sum.from
      ? [`| started from | the weights and tokenizer of ${sum.from} |`]
      : [`| tokenizer | byte-level BPE trained on the text of ${s.tokenizerWorlds} generated worlds |`]),
    `| steps | ${sum.steps} (batch ${s.batch} x seq ${s.seq}, peak lr ${s.lr}, warm-up + cosine) |`,
    `| data | worlds of ${s.worldSize} entities, passage share ${s.passageShare}, ${s.drills} copying drills per ` +
      'world |',
    `| model | hidden ${cfg.hidden}, layers ${cfg.layers}, heads ${cfg.heads}/${cfg.kvHeads} kv, MLP ` +
      `${cfg.intermediate}, vocab ${cfg.vocabSize}, tied embeddings |`,
    `| parameters | ${sum.params} |`,
    `| tokens seen | ${stats.tokens} (${stats.targets} loss targets; ${stats.passageTokens} passage, ` +
      `${stats.transcriptTokens} transcript${stats.copyTokens ? `, ${stats.copyTokens} copy-task` : ''} tokens; ` +
      `${stats.dropped} transcripts longer than a row left out) |`,
    `| wall time | ${duration(sum.seconds)} (${Math.round(stats.tokens / Math.max(sum.seconds, 1e-9))} tokens/s) on ` +
      `${sum.device} |`,
    `| final loss | ${sum.finalLoss.toFixed(3)} (last logged step); mean of the last ${Math.min(5, logs.length)} ` +
      `logs ${sum.tailLoss.toFixed(3)}; first ${sum.firstLoss.toFixed(3)} |`,
    '',
    '## Loss curve (logged steps)',
    '',
    '| step | loss | lr |',
    '|---|---|---|',
    ...logs
      .filter((_, i, a) => i % every === 0 || i === a.length - 1)
      .map((l) => `| ${l.step} | ${l.loss.toFixed(3)} | ${l.lr.toExponential(2)} |`),
    '',
  ].join('\n');
}
