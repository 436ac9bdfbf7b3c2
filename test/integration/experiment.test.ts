// `npm run experiment` end to end at toy size (the smoke preset, a random tiny model): 3 arms x 2 seeds x
// 2 iterations in one process. Checks the run folders, that results.md has one row per arm whose
// mean ± std match the run folders' own eval.jsonl, that both plots are well-formed SVG with one point
// per iteration, and --resume (finished runs kept, an unfinished one completed, a used folder refused).
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalMetrics } from '../../src/selfplay/events.ts';
import { markdownTable } from '../helpers/markdown-table.ts';
import { parseXml, polylinePoints } from '../helpers/xml-check.ts';

const out = mkdtempSync(join(tmpdir(), 'piplay-experiment-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const ARMS = ['base', 'drzero', 'self', 'piplay'];
const SEEDS = [1, 2];
const ITERATIONS = 2;
const ARGS = [
  '--out',
  out,
  '--preset',
  'smoke',
  '--seeds',
  SEEDS.join(','),
  '--arms',
  ARMS.join(','),
  '--iterations',
  String(ITERATIONS),
  '--probe-questions',
  '4',
];

function experiment(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/experiment.ts', ...args],
      { maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

function jsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

/** Mean ± sample std in percent, as results.md writes it (computed here independently). */
function pm(values: number[]): string {
  const m = values.reduce((a, b) => a + b, 0) / values.length;
  const s = Math.sqrt(values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1));
  return `${(100 * m).toFixed(1)} ± ${(100 * s).toFixed(1)}`;
}

let first: { code: number; stdout: string; stderr: string };

beforeAll(async () => {
  first = await experiment(ARGS);
}, 300_000);

describe('npm run experiment (smoke preset, 3 arms x 2 seeds)', () => {
  it('finishes and writes every run folder as npm run train does', () => {
    expect(first.code, first.stderr).toBe(0);
    for (const arm of ARMS) {
      for (const seed of SEEDS) {
        const dir = join(out, 'runs', `${arm}-seed${seed}`);
        for (const f of [
          'config.json',
          'metrics.jsonl',
          'questions.jsonl',
          'rollouts.jsonl',
          'eval.jsonl',
          'result.json',
        ])
          expect(existsSync(join(dir, f)), `${dir}/${f}`).toBe(true);
        const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
        expect(config.seed).toBe(seed);
        // Every run names the code that made it: the checkout's commit, and whether it was dirty.
        const result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
        for (const code of [config.code, result.code]) {
          expect(code.commit).toMatch(/^[0-9a-f]{40}$/);
          expect(typeof code.dirty).toBe('boolean');
        }
        const evals = jsonl<EvalMetrics>(join(dir, 'eval.jsonl'));
        if (arm === 'base') {
          expect(evals.map((e) => e.iteration)).toEqual([-1]);
        } else {
          expect(config.privileged).toBe({ drzero: 'none', self: 'self', piplay: 'full' }[arm]);
          // The base arm is the "before training" point: one evaluation after each iteration only.
          expect(evals.map((e) => e.iteration)).toEqual([0, 1]);
          for (const f of [
            'checkpoints/latest.json',
            'student/config.json',
            'student/model.safetensors',
            'drift.jsonl',
          ])
            expect(existsSync(join(dir, f)), `${dir}/${f}`).toBe(true);
          expect(jsonl<{ iteration: number }>(join(dir, 'drift.jsonl')).map((d) => d.iteration)).toEqual([0, 1]);
        }
      }
    }
    for (const f of ['results.md', 'results.json', 'em_by_iteration.svg', 'drift.svg'])
      expect(existsSync(join(out, f)), f).toBe(true);
  });

  it('results.md: one row per arm, mean ± std over seeds as the run folders give them', () => {
    const md = readFileSync(join(out, 'results.md'), 'utf8');
    const t = markdownTable(md, `Held-out exact match after iteration ${ITERATIONS}`);
    expect(t.rows.map((r) => r[0])).toEqual([
      'base model (no training)',
      'Dr. Zero (no teacher)',
      'self control (teacher without privileged information)',
      'π-Play (full QCP)',
    ]);
    const col = (name: string) => t.head.indexOf(name);
    ARMS.forEach((arm, i) => {
      const finals = SEEDS.map((seed) => {
        const evals = jsonl<EvalMetrics>(join(out, 'runs', `${arm}-seed${seed}`, 'eval.jsonl'));
        return evals[evals.length - 1]!;
      });
      const row = t.rows[i]!;
      expect(row[col('seeds')]).toBe('2');
      expect(row[col('EM')]).toBe(pm(finals.map((e) => e.em)));
      for (const h of ['1', '2']) expect(row[col(`${h}-hop`)]).toBe(pm(finals.map((e) => e.emByHop[h]!)));
    });
    expect(md).toContain("## The examiner's difficulty drift");
    expect(markdownTable(md, 'Held-out EM after each iteration').head).toEqual(['arm', 'hops', 'it 1', 'it 2']);
    const signal = markdownTable(md, 'What the training had to learn from');
    expect(signal.rows.map((r) => r[0])).toEqual([
      'Dr. Zero (no teacher)',
      'self control (teacher without privileged information)',
      'π-Play (full QCP)',
    ]);
    expect(signal.rows[0]![1]).toMatch(/· D 0\.000 ± 0\.000$/); // no teacher, no distillation
  });

  it("per-question.jsonl: every evaluation's outcome by question id, the same ids in every arm, and the paired table", () => {
    const rows = jsonl<{ arm: string; seed: number; iteration: number; id: string; hops: number; correct: boolean }>(
      join(out, 'per-question.jsonl'),
    );
    for (const arm of ARMS)
      for (const seed of SEEDS) {
        const evals = jsonl<EvalMetrics>(join(out, 'runs', `${arm}-seed${seed}`, 'eval.jsonl'));
        for (const e of evals) {
          const mine = rows.filter((r) => r.arm === arm && r.seed === seed && r.iteration === e.iteration);
          expect(mine).toHaveLength(e.n);
          expect(mine.filter((r) => r.correct).length / e.n).toBeCloseTo(e.em, 12);
          expect(Object.keys(mine[0]!).sort()).toEqual(['arm', 'correct', 'hops', 'id', 'iteration', 'seed']);
        }
      }
    const idsOf = (arm: string) => [...new Set(rows.filter((r) => r.arm === arm).map((r) => r.id))].sort();
    expect(idsOf('piplay')).toEqual(idsOf('base'));
    expect(idsOf('drzero')).toEqual(idsOf('base'));
    const t = markdownTable(readFileSync(join(out, 'results.md'), 'utf8'), 'Paired comparisons on the same questions');
    expect(t.rows.map((r) => r[0])).toEqual([
      'drzero − base',
      'self − base',
      'piplay − base',
      'piplay − self',
      'piplay − drzero',
      'self − drzero',
      'piplay it 1 − drzero it 2',
    ]);
    // How each held-out rollout searched, beside: the same rows.
    const search = jsonl<{ arm: string; id: string; searches: number; repeats: number }>(
      join(out, 'per-question-search.jsonl'),
    );
    expect(search).toHaveLength(rows.length);
    for (const s of search) {
      expect(Number.isInteger(s.searches) && s.searches >= 0).toBe(true);
      expect(s.repeats).toBeGreaterThanOrEqual(0);
      expect(s.repeats).toBeLessThanOrEqual(Math.max(0, s.searches - 1));
    }
  });

  it("probes the base model as teacher with the arms' privileged contexts before the runs, into probe.json and results.md", () => {
    const probe = JSON.parse(readFileSync(join(out, 'probe.json'), 'utf8'));
    expect(probe.settings).toEqual({ format: 2, questions: 4, seed: 1, modes: ['full'], model: 'random-tiny' });
    expect(probe.result.questions).toBe(4);
    expect(probe.result.coverageKs).toHaveLength(probe.result.rows[1].distillAtK.length);
    const t = markdownTable(
      readFileSync(join(out, 'results.md'), 'utf8'),
      'The teacher probe (base model, before training)',
    );
    expect(t.rows.map((r) => r[0])).toEqual(['student', 'full']);
    expect(t.rows[1]![t.head.indexOf('D per token')]).toBe(probe.result.rows[1].distill.toFixed(3));
    expect(first.stdout.indexOf('the teacher probe of the base model')).toBeLessThan(first.stdout.indexOf('[1/'));
    // The examiner probe: every question it wrote judged, in examiner-probe.json and results.md.
    const ex = JSON.parse(readFileSync(join(out, 'examiner-probe.json'), 'utf8'));
    expect(ex.settings).toMatchObject({ questions: 4, seed: 1, model: 'random-tiny' });
    expect(ex.result.examples).toHaveLength(4);
    const et = markdownTable(
      readFileSync(join(out, 'results.md'), 'utf8'),
      'The examiner probe (base model, before training)',
    );
    expect(et.rows.at(-1)!.slice(0, 2)).toEqual(['all', '4']);
    expect(first.stdout.indexOf('the examiner probe of the base model')).toBeLessThan(first.stdout.indexOf('[1/'));
  });

  it('the plots are well-formed SVG: a polyline per arm with one point per iteration', () => {
    const em = parseXml(readFileSync(join(out, 'em_by_iteration.svg'), 'utf8'));
    expect(em.root).toBe('svg');
    const lines = em.elements.filter((e) => e.name === 'polyline');
    expect(lines.map((l) => l.attrs['data-series'])).toEqual(ARMS);
    for (const l of lines) expect(polylinePoints(l)).toHaveLength(ITERATIONS);
    const drift = parseXml(readFileSync(join(out, 'drift.svg'), 'utf8'));
    expect(drift.root).toBe('svg');
    // A random tiny examiner writes no valid question, so the drift plot may hold no line; any it holds
    // has at most one point per iteration.
    for (const l of drift.elements.filter((e) => e.name === 'polyline'))
      expect(polylinePoints(l).length).toBeLessThanOrEqual(ITERATIONS);
  });

  it('refuses a used folder without --resume; with --resume keeps finished runs and completes an unfinished one', async () => {
    const again = await experiment(ARGS);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds a run; pass --resume/);

    const before = readFileSync(join(out, 'results.md'), 'utf8');
    const finalTable = (md: string) => markdownTable(md, `Held-out exact match after iteration ${ITERATIONS}`);
    // An unfinished run: its checkpoint is there but not its result.json.
    rmSync(join(out, 'runs', 'piplay-seed2', 'result.json'));
    // A result.json of an older version, without the training signal: read again from its metrics.jsonl.
    const olderPath = join(out, 'runs', 'drzero-seed1', 'result.json');
    const { signal: _dropped, ...older } = JSON.parse(readFileSync(olderPath, 'utf8'));
    writeFileSync(olderPath, JSON.stringify(older));
    const resumed = await experiment([...ARGS, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.match(/finished before, kept/g)).toHaveLength(ARMS.length * SEEDS.length - 1);
    expect(resumed.stdout).not.toContain('the teacher probe of the base model'); // kept from probe.json
    expect(resumed.stdout).not.toContain('the examiner probe of the base model');
    expect(existsSync(join(out, 'runs', 'piplay-seed2', 'result.json'))).toBe(true);
    expect(finalTable(readFileSync(join(out, 'results.md'), 'utf8'))).toEqual(finalTable(before));
    const signalTable = (md: string) => markdownTable(md, 'What the training had to learn from');
    expect(signalTable(readFileSync(join(out, 'results.md'), 'utf8'))).toEqual(signalTable(before));
    // The resumed run's logs were not doubled.
    expect(jsonl(join(out, 'runs', 'piplay-seed2', 'eval.jsonl'))).toHaveLength(ITERATIONS);

    const other = await experiment([...ARGS, '--resume', '--topk', '4']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/other settings \(--topk\)/);
  }, 300_000);

  it("another run's checkpoints copied into a run are refused on --resume, naming both runs, its logs untouched", async () => {
    // The same arm and seed at the same settings, run again elsewhere: a twin whose checkpoints fit every setting.
    const twin = mkdtempSync(join(tmpdir(), 'piplay-experiment-twin-'));
    try {
      const at = ARGS.indexOf('--out') + 1;
      const twinArgs = ARGS.map((a, i) => (i === at ? twin : a));
      const setArg = (flag: string, value: string) => (twinArgs[twinArgs.indexOf(flag) + 1] = value);
      setArg('--arms', 'base,piplay'); // with the base arm, as there: no evaluation at the start
      setArg('--seeds', '2');
      const made = await experiment(twinArgs);
      expect(made.code, made.stderr).toBe(0);
      const run = join(out, 'runs', 'piplay-seed2');
      rmSync(join(run, 'result.json')); // unfinished: --resume continues it from its checkpoint
      rmSync(join(run, 'checkpoints'), { recursive: true });
      cpSync(join(twin, 'runs', 'piplay-seed2', 'checkpoints'), join(run, 'checkpoints'), { recursive: true });
      const logs = Object.fromEntries(
        ['metrics.jsonl', 'eval.jsonl', 'rollouts.jsonl'].map((f) => [f, readFileSync(join(run, f), 'utf8')]),
      );
      const ids = [run, join(twin, 'runs', 'piplay-seed2')].map(
        (d) => JSON.parse(readFileSync(join(d, 'run.json'), 'utf8')).id as string,
      );
      expect(ids[0]).not.toBe(ids[1]);
      const resumed = await experiment([...ARGS, '--resume']);
      expect(resumed.code).toBe(1);
      expect(resumed.stderr).toContain(`--resume: ${run}:`);
      expect(resumed.stderr).toContain(ids[0]);
      expect(resumed.stderr).toContain(ids[1]);
      for (const [f, text] of Object.entries(logs)) expect(readFileSync(join(run, f), 'utf8'), f).toBe(text);
    } finally {
      rmSync(twin, { recursive: true, force: true });
    }
  }, 300_000);
});
