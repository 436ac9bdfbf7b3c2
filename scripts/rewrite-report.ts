// Rewrites an experiment folder's report (results.md, results.json, per-question.jsonl, the plots) from its finished
// runs' logs alone, with the report code of this checkout: no model, no GPU, nothing run. The settings, the world and
// the probes are read from the folder's own results.json (what `npm run experiment` wrote); each run from its
// runs/<arm>-seed<k>/result.json. results.md then names the commit that rewrote it beside the runs' own.
//   npx tsx scripts/rewrite-report.ts results/experiment-47
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { keptResult } from '../src/cli/experiment-report.ts';
import { writeExperimentReport } from '../src/cli/experiment-report.ts';
import { lockFolder } from '../src/cli/folder-lock.ts';
import { codeVersions, type SeedResult } from '../src/lab/experiment/aggregate.ts';
import type { ResultsMeta } from '../src/lab/experiment/markdown.ts';
import { codeVersion, formatCodeVersion } from '../src/node/code-version.ts';
import { readInputJson } from '../src/node/input-file.ts';

const [dir, ...rest] = process.argv.slice(2);
if (!dir || rest.length > 0 || !existsSync(join(dir, 'results.json'))) {
  console.error(
    'usage: npx tsx scripts/rewrite-report.ts DIR\n(DIR must hold results.json: an experiment folder of npm run experiment)',
  );
  process.exit(2);
}
const meta = (readInputJson(join(dir, 'results.json')) as { meta?: ResultsMeta }).meta;
if (!meta || !Array.isArray(meta.seeds) || !Array.isArray(meta.arms) || typeof meta.iterations !== 'number') {
  console.error(
    `${join(dir, 'results.json')}: no meta with seeds, arms and iterations; not written by npm run experiment`,
  );
  process.exit(2);
}
const release = lockFolder(dir, 'scripts/rewrite-report.ts');
try {
  // The plan's order (seed by seed, the arms in order), as the runner keeps its results.
  const results: SeedResult[] = [];
  for (const seed of meta.seeds)
    for (const arm of meta.arms) {
      const run = join(dir, 'runs', `${arm}-seed${seed}`);
      if (existsSync(join(run, 'result.json'))) results.push(keptResult(run));
    }
  writeExperimentReport(
    dir,
    {
      ...meta,
      code: codeVersions(results),
      finished: results.length,
      rewrittenBy: formatCodeVersion(codeVersion()),
    },
    results,
  );
  console.log(`rewrite-report: ${dir}: the report of ${results.length} of ${meta.planned} runs rewritten`);
} finally {
  release();
}
