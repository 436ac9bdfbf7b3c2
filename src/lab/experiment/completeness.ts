// Whether an experiment's logs hold what a claim needs (pure): every arm, enough seeds (the same in every arm),
// every trained arm evaluated after each iteration, enough held-out questions per evaluation and the same ones in
// every evaluation, and every run stamped with the commit that made it. scripts/check-experiment.ts runs it on a
// folder; the defaults are what issue 47's experiment must show.
import type { QuestionRow } from './paired.ts';

/** What a run's result.json says about the code that made it (null: it does not say). */
export interface RunStamp {
  arm: string;
  seed: number;
  commit: string | null;
  dirty: boolean | null;
}

export interface Requirements {
  /** Every arm that must be there; `base` is evaluated once (iteration -1), the others after each iteration. */
  arms: readonly string[];
  minSeeds: number;
  /** Iterations every trained arm must have been evaluated after (0 .. iterations - 1). */
  iterations: number;
  /** Held-out questions per evaluation, at least. */
  minQuestions: number;
}

export const ISSUE_47: Requirements = {
  arms: ['base', 'drzero', 'self', 'piplay', 'gt'],
  minSeeds: 5,
  iterations: 3,
  minQuestions: 400,
};

export interface Completeness {
  /** What is missing or inconsistent; empty when the logs hold everything required. */
  problems: string[];
  /** What is there: arms, seeds, evaluations, questions, commits. */
  summary: string[];
}

const evalKey = (arm: string, seed: number, iteration: number) => `${arm} seed ${seed} iteration ${iteration}`;

export function checkCompleteness(
  lines: readonly QuestionRow[],
  stamps: readonly RunStamp[],
  req: Requirements,
): Completeness {
  const problems: string[] = [];
  const evals = new Map<string, Set<string>>();
  const seedsOf = new Map<string, Set<number>>();
  let repeats = 0;
  for (const l of lines) {
    const key = evalKey(l.arm, l.seed, l.iteration);
    const ids = evals.get(key) ?? new Set<string>();
    if (ids.has(l.id)) repeats++;
    ids.add(l.id);
    evals.set(key, ids);
    seedsOf.set(l.arm, (seedsOf.get(l.arm) ?? new Set<number>()).add(l.seed));
  }
  if (repeats) problems.push(`${repeats} lines repeat a question of their evaluation`);

  const sorted = (s: Set<number> | undefined) => [...(s ?? [])].sort((a, b) => a - b);
  const allSeeds = sorted(new Set(lines.map((l) => l.seed)));
  for (const arm of req.arms) {
    const seeds = sorted(seedsOf.get(arm));
    if (seeds.length === 0) {
      problems.push(`arm ${arm} has no outcomes`);
      continue;
    }
    if (seeds.length < req.minSeeds)
      problems.push(`arm ${arm} has ${seeds.length} seeds (${seeds}), not ${req.minSeeds}`);
    const lacking = allSeeds.filter((s) => !seeds.includes(s));
    if (lacking.length) problems.push(`arm ${arm} lacks seeds ${lacking.join(', ')} that other arms have`);
    const iterations = arm === 'base' ? [-1] : Array.from({ length: req.iterations }, (_, i) => i);
    for (const seed of seeds) {
      for (const it of iterations) {
        const n = evals.get(evalKey(arm, seed, it))?.size ?? 0;
        if (n === 0) problems.push(`${evalKey(arm, seed, it)}: not evaluated`);
        else if (n < req.minQuestions)
          problems.push(`${evalKey(arm, seed, it)}: ${n} questions, not ${req.minQuestions}`);
      }
    }
  }
  const extra = [...seedsOf.keys()].filter((a) => !req.arms.includes(a));

  // The same questions in every evaluation, so that differences pair question by question.
  const idSets = [...evals.entries()];
  const [reference] = idSets;
  if (reference) {
    const [refKey, refIds] = reference;
    const differ = idSets.filter(([, ids]) => ids.size !== refIds.size || [...ids].some((id) => !refIds.has(id)));
    const [first] = differ;
    if (first) problems.push(`${differ.length} evaluations hold other questions than ${refKey} (e.g. ${first[0]})`);
  }

  const example = (rs: readonly RunStamp[]) => (rs[0] ? ` (e.g. ${rs[0].arm} seed ${rs[0].seed})` : '');
  const unstamped = stamps.filter((s) => !s.commit);
  if (unstamped.length) problems.push(`${unstamped.length} runs do not name their commit${example(unstamped)}`);
  const dirty = stamps.filter((s) => s.dirty);
  if (dirty.length)
    problems.push(`${dirty.length} runs were made from a tree with uncommitted changes${example(dirty)}`);
  const silent = stamps.filter((s) => !evals.has(evalKey(s.arm, s.seed, s.arm === 'base' ? -1 : 0)));
  if (silent.length) problems.push(`${silent.length} runs have no outcomes in per-question.jsonl${example(silent)}`);

  const commits = [...new Set(stamps.map((s) => s.commit ?? 'unknown'))];
  const sizes = [...new Set(idSets.map(([, ids]) => ids.size))].sort((a, b) => a - b);
  const summary = [
    `arms: ${[...seedsOf.keys()].join(', ')}${extra.length ? ` (not required: ${extra.join(', ')})` : ''}`,
    `seeds: ${allSeeds.join(', ')}`,
    `evaluations: ${evals.size}, of ${sizes.join(' or ')} questions each`,
    `runs: ${stamps.length}, from commit${commits.length === 1 ? '' : 's'} ${commits.map((c) => c.slice(0, 12)).join(', ')}`,
  ];
  return { problems, summary };
}
