// Whether an experiment folder's logs hold what its claims need (src/lab/experiment/completeness.ts): by default
// what issue 47 asks of results/experiment-47 (arms base, drzero, self, piplay, gt; 5 seeds; 3 iterations; 400
// test-world questions per evaluation, the same in each; every run finished and naming its one clean commit).
// Exits 1 and lists what is missing.
//   npx tsx scripts/check-experiment.ts results/experiment-47 [--arms a,b] [--min-seeds N] [--iterations N]
//     [--min-questions N] [--world NAME]
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readLog } from '../src/cli/run-folder.ts';
import type { StoredResult } from '../src/cli/experiment-report.ts';
import { checkCompleteness, ISSUE_47, type RunStamp } from '../src/lab/experiment/completeness.ts';
import type { QuestionRow } from '../src/lab/experiment/paired.ts';
import { formatCodeVersion } from '../src/node/code-version.ts';
import { readInputJson } from '../src/node/input-file.ts';
import type { SelfPlayConfig } from '../src/selfplay/config.ts';

const [dir, ...rest] = process.argv.slice(2);
const usage =
  'usage: npx tsx scripts/check-experiment.ts DIR [--arms a,b] [--min-seeds N] [--iterations N] [--min-questions N] ' +
  '[--world NAME]';
if (!dir || !existsSync(join(dir, 'per-question.jsonl'))) {
  console.error(`${usage}\n(DIR must hold per-question.jsonl: an experiment folder of npm run experiment)`);
  process.exit(2);
}
const flags = new Map<string, string>();
for (let i = 0; i < rest.length; i += 2) {
  const [flag, value] = [rest[i]!, rest[i + 1]];
  if (!['--arms', '--min-seeds', '--iterations', '--min-questions', '--world'].includes(flag) || value === undefined) {
    console.error(`${usage}\n(not understood: ${flag}${value === undefined ? ' without a value' : ''})`);
    process.exit(2);
  }
  flags.set(flag, value);
}
const count = (flag: string, fallback: number) => {
  const v = flags.get(flag);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) {
    console.error(`${flag} ${v}: a whole number is needed`);
    process.exit(2);
  }
  return Number(v);
};
const req = {
  arms: flags.get('--arms')?.split(',') ?? ISSUE_47.arms,
  minSeeds: count('--min-seeds', ISSUE_47.minSeeds),
  iterations: count('--iterations', ISSUE_47.iterations),
  minQuestions: count('--min-questions', ISSUE_47.minQuestions),
  world: flags.get('--world') ?? ISSUE_47.world,
};

const lines = readLog<QuestionRow>(join(dir, 'per-question.jsonl'));
/** A run's settings but its seed, keys in order. */
function settingsText(config: SelfPlayConfig): string {
  const { seed: _, ...rest } = config;
  return JSON.stringify(Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b))));
}
// Each run's result.json, in its folder <arm>-seed<seed> (other entries, such as a copy on its way in, are not runs).
const runsDir = join(dir, 'runs');
const stamps: RunStamp[] = [];
for (const name of existsSync(runsDir) ? readdirSync(runsDir) : []) {
  const path = join(runsDir, name, 'result.json');
  if (!existsSync(path)) continue;
  const r = readInputJson(path) as StoredResult;
  if (name !== `${r.arm}-seed${r.seed}`) {
    console.error(`${path}: arm ${r.arm} seed ${r.seed} in a folder named ${name}; not counted`);
    continue;
  }
  stamps.push({
    arm: r.arm,
    seed: r.seed,
    commit: r.code?.commit ?? null,
    dirty: r.code?.dirty ?? null,
    startedAt: r.codeAtStart ? formatCodeVersion(r.codeAtStart) : null,
    error: r.error ?? null,
    iterations: r.iterations,
    evalWorld: r.config.evalWorld,
    settings: settingsText(r.config),
  });
}
const { problems, summary } = checkCompleteness(lines, stamps, req);
for (const s of summary) console.log(s);
if (problems.length) {
  console.log(`\nmissing or inconsistent (${problems.length}):`);
  for (const p of problems) console.log(`  ${p}`);
  process.exit(1);
}
console.log('\ncomplete: every requirement holds');
