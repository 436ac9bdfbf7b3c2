// Rewrites an experiment folder's report (results.md, results.json, per-question.jsonl, the plots) from its finished
// runs' logs alone, with the report code of this checkout: no model, no GPU, nothing run. The settings, the world and
// the probes are read from the folder's own results.json (what `npm run experiment` wrote); each run from its
// runs/<arm>-seed<k>/result.json. results.md then names the commit that rewrote it beside the runs' own. It refuses a
// folder whose runs' logs are fewer than its report holds (a report is never shrunk to the runs that were copied).
//   npx tsx scripts/rewrite-report.ts results/experiment-47
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../src/cli/command.ts';
import { keptResult, type StoredResult, writeExperimentReport } from '../src/cli/experiment-report.ts';
import { lockFolder } from '../src/cli/folder-lock.ts';
import { codeVersions } from '../src/lab/experiment/aggregate.ts';
import type { ResultsMeta } from '../src/lab/experiment/markdown.ts';
import { codeVersion, formatCodeVersion } from '../src/node/code-version.ts';
import { readInputJson } from '../src/node/input-file.ts';

const USAGE =
  'usage: npx tsx scripts/rewrite-report.ts DIR\n(DIR must hold results.json: an experiment folder of npm run experiment)';

/** results.json's meta, checked for what the report needs. */
function readMeta(path: string): ResultsMeta {
  const meta = (readInputJson(path) as { meta?: Partial<ResultsMeta> } | null)?.meta;
  const lists = meta && ['seeds', 'arms', 'settings'].every((k) => Array.isArray(meta[k as keyof ResultsMeta]));
  if (!meta || !lists || typeof meta.iterations !== 'number' || typeof meta.preset !== 'string')
    throw new Error(`${path}: no meta with preset, seeds, arms, settings and iterations; not npm run experiment's`);
  return meta as ResultsMeta;
}

function main(argv: string[]): number {
  const [dir, ...rest] = argv;
  if (!dir || rest.length > 0 || !existsSync(join(dir, 'results.json'))) {
    console.error(USAGE);
    return 2;
  }
  const release = lockFolder(dir, 'scripts/rewrite-report.ts');
  try {
    const meta = readMeta(join(dir, 'results.json'));
    // The plan's order (seed by seed, the arms in order), as the runner keeps its results.
    const runsDir = join(dir, 'runs');
    const results: StoredResult[] = [];
    const planned = new Set<string>();
    for (const seed of meta.seeds)
      for (const arm of meta.arms) {
        const name = `${arm}-seed${seed}`;
        planned.add(name);
        const run = join(runsDir, name);
        if (!existsSync(join(run, 'result.json'))) continue;
        const r = keptResult(run);
        if (r.arm !== arm || r.seed !== seed)
          throw new Error(`${join(run, 'result.json')}: arm ${r.arm} seed ${r.seed} in a folder named ${name}`);
        results.push(r);
      }
    const other = existsSync(runsDir) ? readdirSync(runsDir).filter((n) => !planned.has(n)) : [];
    if (other.length) console.log(`rewrite-report: not in the plan of results.json, left out: ${other.join(', ')}`);
    if (results.length < meta.finished)
      throw new Error(
        `${dir}: its report holds ${meta.finished} finished runs, but only ${results.length} have their logs in ` +
          `${runsDir} (runs/<arm>-seed<k>/result.json); copy the runs' logs there first (scripts/collect-runs.sh)`,
      );
    writeExperimentReport(
      dir,
      { ...meta, code: codeVersions(results), finished: results.length, rewrittenBy: formatCodeVersion(codeVersion()) },
      results,
    );
    console.log(`rewrite-report: ${dir}: the report of ${results.length} of ${planned.size} runs rewritten`);
    return 0;
  } finally {
    release();
  }
}

runCommand('rewrite-report', main);
