// scripts/rewrite-report.ts: a committed experiment's report is what its runs' logs give with this checkout's report
// code (experiment 36's 15 runs, rewritten in a copy, match its results.md, results.json and per-question.jsonl to
// the byte, but for the commit that rewrote it); a folder that is not an experiment's, or whose runs' logs are fewer
// than its report holds, is refused with what it lacks and left as it was.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../../../scripts/rewrite-report.ts', import.meta.url));
const EXPERIMENT = fileURLToPath(new URL('../../../../results/experiment-36/', import.meta.url));
const rewrite = (dir: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, dir], { encoding: 'utf8', timeout: 120_000 });
const read = (root: string, f: string) => readFileSync(join(root, f), 'utf8');
/** The code version a rewritten report names (a commit, or "unknown" outside a git checkout), masked. */
const masked = (text: string) =>
  text
    .replace(/(by `scripts\/rewrite-report\.ts` at )`[^`]+`/, '$1`CODE`')
    .replace(/("rewrittenBy": )"[^"]*"/, '$1"CODE"');

const made: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'piplay-rewrite-'));
  made.push(d);
  return d;
};
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('rewrite-report', () => {
  it("rewrites experiment 36's report from its runs' logs as committed", () => {
    const dir = join(tempDir(), 'experiment-36');
    cpSync(join(EXPERIMENT, 'runs'), join(dir, 'runs'), { recursive: true });
    cpSync(join(EXPERIMENT, 'results.json'), join(dir, 'results.json'));
    const r = rewrite(dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('the report of 15 of 15 runs rewritten');
    const md = read(dir, 'results.md');
    expect(md).toMatch(/rewritten from its runs' logs by `scripts\/rewrite-report\.ts` at `/);
    for (const f of ['results.md', 'results.json']) expect(masked(read(dir, f)), f).toBe(masked(read(EXPERIMENT, f)));
    for (const f of ['per-question.jsonl', 'em_by_iteration.svg', 'drift.svg'])
      expect(read(dir, f), f).toBe(read(EXPERIMENT, f));
  }, 120_000);

  it('refuses a folder that is not an experiment, or whose runs are missing, and leaves it as it was', () => {
    const empty = rewrite(tempDir());
    expect(empty.status).toBe(2);
    expect(empty.stderr).toMatch(/DIR must hold results\.json: an experiment folder of npm run experiment/);
    const dir = tempDir();
    cpSync(join(EXPERIMENT, 'results.json'), join(dir, 'results.json'));
    const r = rewrite(dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/its report holds 15 finished runs, but only 0 have their logs in .*copy the runs' logs/);
    expect(read(dir, 'results.json')).toBe(read(EXPERIMENT, 'results.json'));
    expect(existsSync(join(dir, 'results.md'))).toBe(false);
  }, 120_000);
});
