// An experiment folder's report (results.md, results.json, per-question.jsonl, per-question-search.jsonl and the two
// plots), written from its finished runs' results; and a finished run's result read back from its folder. The
// runner (experiment-runner.ts) rewrites the report after every run; scripts/rewrite-report.ts rewrites it from the
// logs alone, with the report code of the checkout.
import { join } from 'node:path';
import { aggregate, driftClaims, signalOf, type DriftPoint, type SeedResult } from '../lab/experiment/aggregate.ts';
import { renderResults, type ResultsMeta } from '../lab/experiment/markdown.ts';
import { comparisons, perQuestionRows, type QuestionRow } from '../lab/experiment/paired.ts';
import { driftSvg, emByIterationSvg } from '../lab/experiment/plots.ts';
import { readInputJson } from '../node/input-file.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import type { StepMetrics } from '../selfplay/events.ts';
import { writeFileAtomically } from './atomic-folder.ts';
import { LOGS, readLog } from './run-folder.ts';

/** result.json of a finished run: what the report uses, and the settings it ran with. */
export interface StoredResult extends SeedResult {
  config: SelfPlayConfig;
}

/** A kept run's drift points with each question's outcome, read back from its drift.jsonl (where it has them). */
function driftOutcomes(r: SeedResult, dir: string): DriftPoint[] {
  const lines = readLog<{ iteration: number; answers?: { correct: boolean }[] }>(join(dir, 'drift.jsonl'));
  return r.drift.map((d) => {
    const answers = lines.find((l) => l.iteration === d.iteration)?.answers;
    return answers && answers.length === d.n ? { ...d, outcomes: answers.map((a) => a.correct) } : d;
  });
}

/** The result.json of the finished run in `dir`, with what older versions kept only in the run's logs. */
export function keptResult(dir: string): StoredResult {
  const kept = readInputJson(join(dir, 'result.json')) as StoredResult;
  // result.json of an older version lacks the training signal: its metrics.jsonl has it.
  if (kept.trained && !kept.signal)
    kept.signal = signalOf(readLog<StepMetrics>(join(dir, LOGS.metrics)), kept.iterations);
  // ... and the drift's per-question outcomes: its drift.jsonl has them.
  if (kept.trained && kept.drift.some((d) => d.n > 0 && !d.outcomes)) kept.drift = driftOutcomes(kept, dir);
  return kept;
}

/** A run's result without its per-question outcomes (per-question.jsonl and the run's result.json hold them). */
function withoutOutcomes(r: SeedResult): SeedResult {
  return {
    ...r,
    evals: r.evals.map(({ outcomes: _, ...e }) => e),
    drift: r.drift.map(({ outcomes: _, ...d }) => d),
  };
}

/** The report files of the experiment folder `out`, from its finished runs' results (in the plan's order). Every
 * file's text is made before the first is written, so a failure leaves the old report whole. */
export function writeExperimentReport(out: string, meta: ResultsMeta, results: readonly SeedResult[]): void {
  const summaries = aggregate(results, meta.arms, meta.iterations);
  const rows = perQuestionRows(results);
  const paired = comparisons(rows, meta.iterations - 1);
  const lines = (f: (r: QuestionRow) => object) => rows.map((r) => JSON.stringify(f(r)) + '\n').join('');
  const files: [string, string][] = [
    // Whether each question was answered; per-question-search.jsonl: how it searched.
    ['per-question.jsonl', lines(({ searches: _, repeats: __, ...r }) => r)],
  ];
  // Runs of older versions kept no search counts: no file of them.
  if (rows.some((r) => r.searches !== undefined))
    files.push([
      'per-question-search.jsonl',
      lines((r) => ({
        arm: r.arm,
        seed: r.seed,
        iteration: r.iteration,
        id: r.id,
        searches: r.searches,
        repeats: r.repeats,
      })),
    ]);
  files.push(
    ['results.md', renderResults(meta, summaries, paired, driftClaims(results))],
    // Each question's outcome is in per-question.jsonl, not repeated here; the paired comparisons are results.md's.
    [
      'results.json',
      JSON.stringify({ meta, summaries, comparisons: paired, runs: results.map(withoutOutcomes) }, null, 2) + '\n',
    ],
    ['em_by_iteration.svg', emByIterationSvg(summaries, meta.iterations)],
    ['drift.svg', driftSvg(summaries, meta.iterations)],
  );
  for (const [name, text] of files) writeFileAtomically(join(out, name), text, { replace: true });
}
