// The dev-world search's choice: reads every finished run under a search folder (results/dev-search-47/run.sh
// makes one), and writes README.md (the rule, every point's dev EM per seed, the choice so far) into it, and
// choice.json (each trained arm's chosen settings, as `npm run experiment --arm-settings` reads them) only once the
// whole grid has run: a choice.json of part of the grid is removed, so the test experiment cannot start from it.
//   npx tsx scripts/dev-search-choice.ts results/dev-search-47
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { SeedResult } from '../src/lab/experiment/aggregate.ts';
import { chooseSettings, unfinished, type SearchGrid, type SearchRun } from '../src/lab/experiment/choice.ts';
import { armLabel } from '../src/lab/experiment/plan.ts';
import { flagValue, type SelfPlayConfig } from '../src/selfplay/config.ts';
import { table } from '../src/lab/experiment/markdown.ts';

/** The settings a point of the search varies, by flag. */
const VARIED: [keyof SelfPlayConfig, string][] = [
  ['lr', 'lr'],
  ['examinerLr', 'examiner-lr'],
  ['lambda', 'lambda'],
  ['beta', 'beta'],
];
const ARMS = ['drzero', 'self', 'piplay', 'gt', 'partial'];
/** The grid run.sh's loops run: its arms, 3 learning rates x 2 (lambda or beta) per arm, seeds 11 and 12. */
const GRID: SearchGrid = { arms: ['drzero', 'self', 'piplay', 'gt'], points: 6, seeds: [11, 12] };

function resultFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return resultFiles(p);
    return name === 'result.json' ? [p] : [];
  });
}

const root = process.argv[2];
if (!root || !existsSync(root)) {
  console.error('usage: npx tsx scripts/dev-search-choice.ts SEARCH_FOLDER');
  process.exit(2);
}
let base: SeedResult | undefined;
const runs: SearchRun[] = [];
for (const file of resultFiles(root)) {
  const result = JSON.parse(readFileSync(file, 'utf8')) as SeedResult & { config: SelfPlayConfig };
  if (!result.trained) {
    base = result;
    continue;
  }
  const c = result.config;
  const point = Object.fromEntries(
    VARIED.filter(([k]) => (c.privileged === 'none' ? k !== 'lambda' : k !== 'beta')).map(([k, flag]) => [
      flag,
      flagValue(c[k]),
    ]),
  );
  runs.push({ arm: result.arm, seed: result.seed, point, result });
}
const choices = chooseSettings(runs, ARMS);
const notDone = unfinished(choices, GRID);
const allSeeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
const iterations = Math.max(0, ...runs.map((r) => r.result.iterations));
const pct = (x: number) => (Number.isNaN(x) ? '—' : (100 * x).toFixed(1));
const lines = [
  '# The dev-world search (issue 47)',
  '',
  'Every trained arm got the same search on the **dev** world (never the test world): the demo preset, 2 ' +
    `iterations (${iterations} in the runs read), seeds 11 and 12 (read: ${allSeeds.join(', ') || 'none'}), ` +
    'held-out EM on 200 dev questions (100 of 1 and 2 hops) after each iteration. The grid: `--lr` (with ' +
    "`--examiner-lr` the same) 5e-5, 1e-4, 2e-4; for the arms with a teacher `--lambda` 0.1,0.03,0.03 (the papers' " +
    "instruct schedule, the demo preset's until this search chose π-Play's) and 0.3,0.1,0.1; for Dr. Zero `--beta` 0 " +
    '(its paper: KL-free) and 0.01. The commands: `run.sh`.',
  '',
  '**Choice rule**, fixed before the search ran: per arm, the point with the highest mean dev EM over the seeds ' +
    'after the last iteration, among the points every seed finished; a tie goes to the smaller learning rate. ' +
    "`choice.json` holds each arm's choice as `npm run experiment -- --arm-settings` reads it.",
  '',
  base ? `The base model on the same dev questions: ${pct(base.evals[0]!.em)}%.` : '',
  '',
];
const choice: Record<string, Record<string, string>> = {};
for (const a of choices) {
  lines.push(`## ${armLabel(a.arm)}`, '');
  const seeds = [...new Set(a.points.flatMap((p) => p.final.map((f) => f.seed)))].sort((x, y) => x - y);
  lines.push(
    table(
      [
        'settings',
        ...seeds.map((s) => `seed ${s}`),
        'mean after it 1',
        'mean after it 2',
        notDone ? 'best so far' : 'chosen',
      ],
      a.points.map((p) => [
        Object.entries(p.point)
          .map(([f, v]) => `--${f} ${v}`)
          .join(' '),
        ...seeds.map((s) => pct(p.final.find((f) => f.seed === s)?.em ?? Number.NaN)),
        pct(p.byIteration[0] ?? Number.NaN),
        pct(p.mean),
        p.point === a.chosen ? '**yes**' : p.complete ? '' : 'incomplete',
      ]),
    ),
    '',
  );
  if (a.chosen) choice[a.arm] = a.chosen;
}
lines.push(
  notDone
    ? `**Not a choice yet: ${notDone}.** The best so far is among the points every seed finished; choice.json is ` +
        'written when every arm has every point on every seed.'
    : '',
  '',
  `Runs read: ${runs.length} (${relative(process.cwd(), root)}).`,
  '',
);
writeFileSync(join(root, 'README.md'), lines.join('\n'));
const choicePath = join(root, 'choice.json');
if (notDone) {
  rmSync(choicePath, { force: true });
  console.log(`dev-search: ${runs.length} runs; ${notDone}: no choice.json (README.md lists the points so far)`);
} else {
  writeFileSync(choicePath, `${JSON.stringify(choice, null, 2)}\n`);
  console.log(`dev-search: ${runs.length} runs; choice ${JSON.stringify(choice)} -> ${choicePath}`);
}
