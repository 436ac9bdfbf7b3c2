// scripts/rewrite-report.ts: a committed experiment's report is what its runs' logs give with this checkout's report
// code (experiment 36's 15 runs, rewritten in a copy, match its results.md and per-question.jsonl to the byte, but
// for the commit that rewrote it); a folder that is not an experiment's is refused with what it lacks.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../../../scripts/rewrite-report.ts', import.meta.url));
const EXPERIMENT = fileURLToPath(new URL('../../../../results/experiment-36/', import.meta.url));
const rewrite = (dir: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, dir], { encoding: 'utf8', timeout: 120_000 });
/** The commit a rewritten report names, masked. */
const masked = (md: string) => md.replace(/(by `scripts\/rewrite-report\.ts` at )`[^`]+`/, '$1`COMMIT`');

describe('rewrite-report', () => {
  it("rewrites experiment 36's report from its runs' logs as committed", () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'piplay-rewrite-')), 'experiment-36');
    cpSync(join(EXPERIMENT, 'runs'), join(dir, 'runs'), { recursive: true });
    cpSync(join(EXPERIMENT, 'results.json'), join(dir, 'results.json'));
    const r = rewrite(dir);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('the report of 15 of 15 runs rewritten');
    const read = (root: string, f: string) => readFileSync(join(root, f), 'utf8');
    const md = read(dir, 'results.md');
    expect(md).toMatch(/rewritten from its runs' logs by `scripts\/rewrite-report\.ts` at `[0-9a-f]{12}/);
    expect(masked(md)).toBe(masked(read(EXPERIMENT, 'results.md')));
    expect(read(dir, 'per-question.jsonl')).toBe(read(EXPERIMENT, 'per-question.jsonl'));
  }, 120_000);

  it('refuses a folder without the results.json of an experiment', () => {
    const r = rewrite(mkdtempSync(join(tmpdir(), 'piplay-rewrite-')));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/DIR must hold results\.json: an experiment folder of npm run experiment/);
  }, 60_000);
});
