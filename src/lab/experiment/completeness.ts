// Whether an experiment's logs hold what a claim needs (pure): every arm, enough seeds (the same in every arm),
// every trained arm evaluated after each iteration and after no other, enough held-out questions per evaluation and
// the same ones in every evaluation, and every run present once, finished, on the required world, stamped with the
// one clean commit that made it from start to end. scripts/check-experiment.ts runs it on a folder; the defaults
// are what issue 47's experiment must show.
import type { QuestionRow } from './paired.ts';

/** What a run's result.json says about itself (null: it does not say). */
export interface RunStamp {
  arm: string;
  seed: number;
  commit: string | null;
  dirty: boolean | null;
  /** The commit a resumed run started from, where it differs from the one that finished it. */
  startedAt: string | null;
  /** Why the run stopped early, if it did. */
  error: string | null;
  /** Its settings: iterations and the held-out world; and all of them but the seed, as text (runs of one arm match). */
  iterations: number;
  evalWorld: string;
  settings: string;
}

export interface Requirements {
  /** Every arm that must be there; `base` is evaluated once (iteration -1), the others after each iteration. */
  arms: readonly string[];
  minSeeds: number;
  /** Iterations every trained arm must have been evaluated after (0 .. iterations - 1), and no others. */
  iterations: number;
  /** Held-out questions per evaluation, at least. */
  minQuestions: number;
  /** The world the held-out questions come from. */
  world: string;
}

export const ISSUE_47: Requirements = {
  arms: ['base', 'drzero', 'self', 'piplay', 'gt'],
  minSeeds: 5,
  iterations: 3,
  minQuestions: 400,
  world: 'test',
};

export interface Completeness {
  /** What is missing or inconsistent; empty when the logs hold everything required. */
  problems: string[];
  /** What is there: arms, seeds, evaluations, questions, commits. */
  summary: string[];
}

const evalKey = (arm: string, seed: number, iteration: number) => `${arm} seed ${seed} iteration ${iteration}`;
const runKey = (arm: string, seed: number) => `${arm} seed ${seed}`;
const list = (xs: Iterable<number | string>) => [...xs].join(', ');

/** Iterations an arm is evaluated after: the base model once before training, a trained arm after each. */
function expectedIterations(arm: string, req: Requirements): number[] {
  return arm === 'base' ? [-1] : Array.from({ length: req.iterations }, (_, i) => i);
}

export function checkCompleteness(
  lines: readonly QuestionRow[],
  stamps: readonly RunStamp[],
  req: Requirements,
): Completeness {
  const problems: string[] = [];
  const evals = new Map<string, Set<string>>();
  const seedsOf = new Map<string, Set<number>>();
  const itersOf = new Map<string, Set<number>>();
  let repeats = 0;
  for (const l of lines) {
    const key = evalKey(l.arm, l.seed, l.iteration);
    const ids = evals.get(key) ?? new Set<string>();
    if (ids.has(l.id)) repeats++;
    ids.add(l.id);
    evals.set(key, ids);
    seedsOf.set(l.arm, (seedsOf.get(l.arm) ?? new Set<number>()).add(l.seed));
    const run = runKey(l.arm, l.seed);
    itersOf.set(run, (itersOf.get(run) ?? new Set<number>()).add(l.iteration));
  }
  if (repeats) problems.push(`${repeats} lines repeat a question of their evaluation`);

  const sorted = (s: Iterable<number> | undefined) => [...(s ?? [])].sort((a, b) => a - b);
  const requiredSeeds = sorted(new Set(req.arms.flatMap((a) => [...(seedsOf.get(a) ?? [])])));
  for (const arm of req.arms) {
    const seeds = sorted(seedsOf.get(arm));
    if (seeds.length === 0) {
      problems.push(`arm ${arm} has no outcomes`);
      continue;
    }
    if (seeds.length < req.minSeeds)
      problems.push(`arm ${arm} has ${seeds.length} seeds (${list(seeds)}), fewer than ${req.minSeeds}`);
    const lacking = requiredSeeds.filter((s) => !seeds.includes(s));
    if (lacking.length) problems.push(`arm ${arm} lacks seeds ${list(lacking)} that other arms have`);
    const expected = expectedIterations(arm, req);
    for (const seed of seeds) {
      for (const it of expected) {
        const n = evals.get(evalKey(arm, seed, it))?.size ?? 0;
        if (n === 0) problems.push(`${evalKey(arm, seed, it)}: not evaluated`);
        else if (n < req.minQuestions)
          problems.push(`${evalKey(arm, seed, it)}: ${n} questions, fewer than ${req.minQuestions}`);
      }
      const others = sorted(itersOf.get(runKey(arm, seed))).filter((it) => !expected.includes(it));
      if (others.length) problems.push(`${runKey(arm, seed)}: evaluated after iterations ${list(others)} as well`);
    }
  }
  const extra = [...seedsOf.keys()].filter((a) => !req.arms.includes(a));

  // The same questions in every evaluation, so that differences pair question by question: the most common set is
  // the reference, and every evaluation holding another is named.
  const setKey = (ids: Set<string>) => [...ids].sort().join('\n');
  const bySet = new Map<string, string[]>();
  for (const [key, ids] of evals) bySet.set(setKey(ids), [...(bySet.get(setKey(ids)) ?? []), key]);
  const groups = [...bySet.values()].sort((a, b) => b.length - a.length);
  const odd = groups.slice(1).flat();
  if (odd.length)
    problems.push(
      `${odd.length} evaluations hold other questions than the other ${groups[0]?.length} (${odd.slice(0, 3).join('; ')}${odd.length > 3 ? '; ...' : ''})`,
    );

  // One finished result per run, on the required world, from one clean commit.
  const example = (rs: readonly RunStamp[]) => (rs[0] ? ` (e.g. ${runKey(rs[0].arm, rs[0].seed)})` : '');
  const stamped = new Map<string, number>();
  for (const s of stamps) stamped.set(runKey(s.arm, s.seed), (stamped.get(runKey(s.arm, s.seed)) ?? 0) + 1);
  const twice = [...stamped].filter(([, n]) => n > 1).map(([k]) => k);
  if (twice.length) problems.push(`${twice.length} runs have more than one result.json (${list(twice)})`);
  const unstamped = [...itersOf.keys()].filter((k) => !stamped.has(k));
  if (unstamped.length)
    problems.push(`${unstamped.length} runs have outcomes but no result.json in runs/ (e.g. ${unstamped[0]})`);
  const silent = stamps.filter((s) => !itersOf.has(runKey(s.arm, s.seed)));
  if (silent.length) problems.push(`${silent.length} runs have no outcomes in per-question.jsonl${example(silent)}`);
  const failed = stamps.filter((s) => s.error);
  if (failed.length)
    problems.push(`${failed.length} runs stopped with an error${example(failed)}: ${failed[0]?.error}`);
  const otherWorld = stamps.filter((s) => s.evalWorld !== req.world);
  if (otherWorld.length)
    problems.push(`${otherWorld.length} runs were evaluated on another world than ${req.world}${example(otherWorld)}`);
  const otherLength = stamps.filter((s) => s.arm !== 'base' && s.iterations !== req.iterations);
  if (otherLength.length)
    problems.push(
      `${otherLength.length} runs were set to other than ${req.iterations} iterations${example(otherLength)}`,
    );
  for (const arm of new Set(stamps.map((s) => s.arm))) {
    const mine = stamps.filter((s) => s.arm === arm);
    if (new Set(mine.map((s) => s.settings)).size > 1)
      problems.push(
        `the runs of arm ${arm} differ in settings other than the seed (seeds ${list(mine.map((s) => s.seed))})`,
      );
  }
  const unknown = stamps.filter((s) => !s.commit);
  if (unknown.length) problems.push(`${unknown.length} runs do not name their commit${example(unknown)}`);
  const dirty = stamps.filter((s) => s.dirty);
  if (dirty.length)
    problems.push(`${dirty.length} runs were made from a tree with uncommitted changes${example(dirty)}`);
  const resumedAcross = stamps.filter((s) => s.startedAt);
  if (resumedAcross.length)
    problems.push(
      `${resumedAcross.length} runs were started by other code than finished them${example(resumedAcross)}`,
    );

  const commits = [...new Set(stamps.map((s) => s.commit ?? 'unknown'))];
  const sizes = [...new Set([...evals.values()].map((ids) => ids.size))].sort((a, b) => a - b);
  const summary = [
    `arms: ${list(seedsOf.keys())}${extra.length ? ` (not required: ${list(extra)})` : ''}`,
    `seeds: ${list(sorted(new Set(lines.map((l) => l.seed))))}`,
    `evaluations: ${evals.size}, of ${sizes.join(' or ')} questions each`,
    `runs: ${stamps.length}, from commit${commits.length === 1 ? '' : 's'} ${list(commits.map((c) => c.slice(0, 12)))}`,
  ];
  return { problems, summary };
}
