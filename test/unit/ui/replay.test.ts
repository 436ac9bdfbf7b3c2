// Recorded runs: a run's events survive the recording (rollout tokens within the recording's precision), a bad
// file is refused with its place named, the shipped examples (public/examples/) fold into view states that every
// view can read, and `npm run record-example`'s writer replaces only its own files.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { recordingFromExperiment, recordingFromRunFolder, writeExamples } from '../../../src/cli/run-recording.ts';
import type { RolloutRecord, RunEvent } from '../../../src/selfplay/events.ts';
import { listExamples, stateFromEvents, viewRecording } from '../../../src/ui/replay.ts';
import { makeRecording, parseRecording, type RecordedEvent, replayEvent } from '../../../src/worker/recording.ts';

/** `s` as a literal in a regular expression. */
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The repository's root, where the recordings' commands ran. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const rollout: RolloutRecord = {
  iteration: 0,
  step: 1,
  question: 'Where was Ada born?',
  gold: 'Vonez',
  hops: 1,
  answer: 'Vonez',
  reward: 1,
  advantage: 0.4472135954999579,
  searches: ['Ada'],
  privilegedMode: 'full',
  privilegedBlock: 'Source: Ada\n',
  tokens: [
    {
      id: 5,
      text: ' Vonez',
      policy: 1,
      studentLogp: -0.123456789,
      teacherLogp: -0.0987654321,
      kl: 1.23456789e-7,
      topk: { ids: [5, 6], texts: [' Vonez', ' no'], studentLogp: [-0.123456789, -2.5], teacherLogp: [-0.0987, -3.25] },
    },
    { id: 9, text: '\n', policy: 0, studentLogp: 0, teacherLogp: 0, kl: 0 },
  ],
};

const events: RunEvent[] = [
  {
    type: 'eval',
    metrics: { iteration: -1, em: 0.25, emByHop: { '1': 0.5 }, searchesPerRollout: 1, redundancy: 0, n: 4 },
  },
  { type: 'metrics', metrics: { stage: 'student', iteration: 0, step: 0, distill: 0.4, lambda: 0.1 } },
  {
    type: 'question',
    record: {
      iteration: 0,
      step: 0,
      question: 'Where was Ada born?',
      answer: 'Vonez',
      hops: 1,
      qcp: [{ kind: 'source', passages: [{ id: 'd1', title: 'Ada', text: 'Ada was born in Vonez.' }] }],
      k: 1,
      n: 2,
      formatReward: 1,
      difficultyReward: 0.5,
      examinerReward: 0.5,
      advantage: 0.1,
    },
  },
  { type: 'rollout', record: rollout },
  { type: 'progress', stage: 'student', iteration: 0, done: 1, total: 2 },
];

const meta = {
  name: 'x',
  title: 'X',
  base: 'm',
  recordedAt: 't',
  command: 'c',
  config: { privileged: 'full' } as never,
};

describe('recorded runs', () => {
  it('keeps a rollout through JSON to the recording’s precision, and only the kinds a run view needs', () => {
    const rec = parseRecording(JSON.stringify(makeRecording(meta, events)), 'x.json');
    expect(rec.events.map((e) => e.type)).toEqual(['eval', 'metrics', 'question', 'rollout']);
    const back = replayEvent(rec.events[3]!) as Extract<RunEvent, { type: 'rollout' }>;
    const { tokens, ...rest } = back.record;
    const { tokens: want, ...wantRest } = rollout;
    expect(rest).toEqual(wantRest);
    expect(tokens.map((t) => [t.id, t.text, t.policy, t.topk?.ids, t.topk?.texts])).toEqual(
      want.map((t) => [t.id, t.text, t.policy, t.topk?.ids, t.topk?.texts]),
    );
    for (const [i, t] of tokens.entries()) {
      const w = want[i]!;
      for (const f of ['studentLogp', 'teacherLogp', 'kl'] as const)
        expect(Math.abs(t[f] - w[f])).toBeLessThanOrEqual(Math.abs(w[f]) * 1e-4 + 1e-12);
    }
    expect(JSON.stringify(rec.events[3])).not.toContain('0.123456789');
    // Top-k lists are kept for the tokens that have one; a version-1 file (a list for every token) reads the same.
    const packed = (rec.events[3] as Extract<RecordedEvent, { type: 'rollout' }>).packed;
    expect([packed.topkRows, packed.topkIds]).toEqual([[0], [5, 6]]);
    const dense = {
      ...packed,
      topkRows: undefined,
      topkIds: [5, 6, -1, -1],
      topkStudent: [...packed.topkStudent, 0, 0],
    };
    const v1 = {
      ...rec,
      version: 1,
      events: [{ ...rec.events[3]!, packed: { ...dense, topkTeacher: [...packed.topkTeacher, 0, 0] } }],
    };
    expect(replayEvent(parseRecording(JSON.stringify(v1), 'v1.json').events[0]!)).toEqual(back);
  });

  it('keeps an evaluation’s scores, not its per-question outcomes (those are for npm run experiment)', () => {
    const outcomes = [{ id: 'q1', hops: 1, correct: true, answer: 'Vonez' }];
    const withOutcomes: RunEvent = { ...(events[0] as Extract<RunEvent, { type: 'eval' }>) };
    withOutcomes.metrics = { ...withOutcomes.metrics, outcomes };
    const rec = makeRecording(meta, [withOutcomes]);
    expect(rec.events).toEqual([events[0]]);
  });

  it('refuses a bad file with what is wrong and where', () => {
    expect(() => parseRecording('{', 'a.json')).toThrow(/a\.json is not valid JSON/);
    expect(() => parseRecording('{"format":"other"}', 'a.json')).toThrow(/a\.json is not a piplay run recording/);
    const rec = makeRecording(meta, events);
    const bad = { ...rec, events: [...rec.events] };
    const r = bad.events[3] as Extract<(typeof bad.events)[number], { type: 'rollout' }>;
    bad.events[3] = { ...r, packed: { ...r.packed, kl: [] } };
    expect(() => parseRecording(JSON.stringify(bad), 'a.json')).toThrow(
      /a\.json: event 4 has packed\.kl of other than 2/,
    );
    bad.events[3] = { ...r, packed: { ...r.packed, topkRows: [0, 1] } };
    expect(() => parseRecording(JSON.stringify(bad), 'a.json')).toThrow(/event 4 has packed\.topkIds of other than 4/);
    bad.events[3] = { ...r, packed: { ...r.packed, topkRows: [2] } };
    expect(() => parseRecording(JSON.stringify(bad), 'a.json')).toThrow(
      /event 4 has packed\.topkRows that are not rows/,
    );
    bad.events[1] = { type: 'progress' } as never;
    expect(() => parseRecording(JSON.stringify(bad), 'a.json')).toThrow(/event 2 has type "progress"/);
  });

  it('ships seed 1 of an experiment’s π-Play, Dr. Zero and self-control arms, their EM as its logs have it', () => {
    const examples = new URL('../../../public/examples/', import.meta.url);
    const index = JSON.parse(readFileSync(new URL('index.json', examples), 'utf8')) as { examples: { name: string }[] };
    const arms = index.examples.map((e) => e.name);
    expect(arms).toEqual(['piplay', 'drzero', 'self']);
    let experiment: string | undefined;
    for (const arm of arms) {
      const rec = parseRecording(readFileSync(new URL(`${arm}.json`, examples), 'utf8'), arm);
      const m = /^npm run experiment -- --out (\S+?)\/? .* \(its run ([\w-]+), seed 1\)$/.exec(rec.command);
      expect(m, `${arm}: the command of an experiment's seed-1 run`).not.toBeNull();
      const [, folder, run] = m!;
      expect(run).toBe(arm);
      experiment ??= folder;
      expect(folder, 'every example from one experiment').toBe(experiment);
      const runs = pathToFileURL(join(resolve(ROOT, folder!), 'runs/'));
      const ems = (run: string) =>
        readFileSync(new URL(`${run}/eval.jsonl`, runs), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { iteration: number; em: number; emByHop: Record<string, number> })
          .map((m) => [m.iteration, m.em, m.emByHop]);
      const evals = rec.events.flatMap((e) =>
        e.type === 'eval' ? [[e.metrics.iteration, e.metrics.em, e.metrics.emByHop]] : [],
      );
      expect(evals).toEqual([...ems('base-seed1'), ...ems(`${arm}-seed1`)]);
      const { iterations } = JSON.parse(readFileSync(new URL(`${arm}-seed1/config.json`, runs), 'utf8')) as {
        iterations: number;
      };
      expect(evals.length, `${arm}: before training and after each iteration`).toBe(1 + iterations);
    }
  });

  it('records an experiment’s run with the base arm’s evaluation as its start, and refuses an unfinished one', () => {
    const exp = mkdtempSync(join(tmpdir(), 'piplay-exp-'));
    const write = (run: string, name: string, lines: object[]) => {
      mkdirSync(join(exp, 'runs', run), { recursive: true });
      writeFileSync(join(exp, 'runs', run, name), lines.map((l) => JSON.stringify(l) + '\n').join(''));
    };
    const base = { ...(events[0] as { metrics: object }).metrics, iteration: -1 };
    const after = { ...base, iteration: 0, em: 0.5 };
    write('base-seed2', 'eval.jsonl', [base]);
    write('piplay-seed2', 'config.json', []);
    writeFileSync(
      join(exp, 'runs/piplay-seed2/config.json'),
      JSON.stringify({ examinerSteps: 1, studentSteps: 1, model: 'm' }),
    );
    write('piplay-seed2', 'eval.jsonl', [after]);
    write('piplay-seed2', 'rollouts.jsonl', [rollout]);
    const m = { name: 'piplay', title: 'P', command: 'c' };
    expect(() => recordingFromExperiment(exp, 'piplay', 2, m)).toThrow(
      /piplay-seed2 is not a finished run .* \(no result\.json\)/,
    );
    write('piplay-seed2', 'result.json', [{}]);
    const rec = recordingFromExperiment(exp, 'piplay', 2, m);
    expect(rec.events.filter((e) => e.type === 'eval').map((e) => e.metrics)).toEqual([base, after]);
    expect(() => recordingFromExperiment(exp, 'piplay', 3, m)).toThrow(/piplay-seed3 is not a finished run/);
  });

  it('ships examples that are real runs whose every view has something to show', async () => {
    const dir = new URL('../../../public/examples/', import.meta.url);
    const fetcher = (async (url: string) => {
      const text = readFileSync(new URL(url.replace(/^.*examples\//, ''), dir), 'utf8');
      return new Response(text);
    }) as typeof fetch;
    const { examples: list, experiment } = await listExamples(fetcher);
    expect(list.map((e) => e.name)).toEqual(['piplay', 'drzero', 'self']);
    // What the experiment found, as its report has it: each finding's interval and verdict on its row of results.md.
    expect(experiment).not.toBeNull();
    if (experiment) {
      const md = readFileSync(join(resolve(ROOT, experiment.source), 'results.md'), 'utf8');
      expect(experiment.findings.map((f) => f.name)).toEqual(
        expect.arrayContaining(['piplay − base', 'piplay − self', 'self − base', 'piplay − drzero']),
      );
      expect(experiment.summary).not.toBeNull();
      for (const f of experiment.findings) {
        const row = md.split('\n').find((l) => l.startsWith(`| ${f.name} | `));
        expect(row, f.name).toMatch(new RegExp(`^\\| [^|]+ \\| ${esc(f.interval)} \\| ${esc(f.questionOnly)} \\|`));
        expect(row, f.name).toMatch(new RegExp(`\\| ${esc(f.perSeed)} \\| ${esc(f.verdict)} \\|$`));
      }
    }
    for (const e of list) {
      const file = new URL(e.file, dir);
      const text = readFileSync(file, 'utf8');
      // Fetched when opened: three iterations of a demo run's questions and token-level rollouts.
      expect(text.length, `${e.file} size`).toBeLessThan(1_500_000);
      const rec = parseRecording(text, e.file);
      const v = viewRecording(rec);
      expect(v.state.questions.length, `${e.name}: questions`).toBeGreaterThan(0);
      expect(v.state.rollouts.length, `${e.name}: rollouts`).toBeGreaterThan(0);
      expect(v.state.rollouts.every((r) => r.tokens.length > 0)).toBe(true);
      expect(v.state.evals.length, `${e.name}: evaluations`).toBeGreaterThanOrEqual(2);
      expect([...v.state.series.keys()]).toEqual(expect.arrayContaining(['eval/em', 'student/reward']));
      // Real questions from the examiner stage, with their construction paths.
      expect(v.state.questions.some((q) => q.qcp.length > 0)).toBe(true);
      if (rec.config.privileged === 'none') {
        expect(v.state.rollouts.every((r) => r.privilegedBlock === null)).toBe(true);
      } else {
        // A teacher's context: the privileged block, empty for the self control (the student's own prompt).
        const control = rec.config.privileged === 'self';
        expect(
          v.state.rollouts.every(
            (r) => typeof r.privilegedBlock === 'string' && r.privilegedBlock.length > 0 !== control,
          ),
        ).toBe(true);
        const policy = v.state.rollouts.flatMap((r) => r.tokens.filter((t) => t.policy));
        expect(policy.some((t) => t.kl > 0 && t.topk && t.topk.ids.length > 1)).toBe(true);
      }
    }
  });

  it('lists no example where none is served', async () => {
    expect(await listExamples((async () => new Response('', { status: 404 })) as typeof fetch)).toEqual({
      examples: [],
      experiment: null,
    });
  });

  it('writes a run folder as a recording, replacing only its own files', () => {
    const run = mkdtempSync(join(tmpdir(), 'piplay-rec-'));
    writeFileSync(join(run, 'config.json'), JSON.stringify({ examinerSteps: 1, studentSteps: 1, model: 'm' }));
    writeFileSync(join(run, 'eval.jsonl'), JSON.stringify((events[0] as { metrics: object }).metrics) + '\n');
    writeFileSync(join(run, 'metrics.jsonl'), JSON.stringify((events[1] as { metrics: object }).metrics) + '\n');
    writeFileSync(join(run, 'questions.jsonl'), JSON.stringify((events[2] as { record: object }).record) + '\n');
    writeFileSync(join(run, 'rollouts.jsonl'), JSON.stringify(rollout) + '\n');
    const rec = recordingFromRunFolder(run, { name: 'a', title: 'A', command: 'npm run train -- ...' });
    const state = stateFromEvents(rec.events.map(replayEvent));
    expect([state.evals.length, state.questions.length, state.rollouts.length]).toEqual([1, 1, 1]);
    const out = join(mkdtempSync(join(tmpdir(), 'piplay-ex-')), 'new', 'examples'); // made where missing
    writeExamples(out, [rec]);
    writeExamples(out, [rec]);
    expect(JSON.parse(readFileSync(join(out, 'index.json'), 'utf8')).examples).toEqual([
      { file: 'a.json', name: 'a', title: 'A' },
    ]);
    writeFileSync(join(out, 'a.json'), '{"mine": true}');
    expect(() => writeExamples(out, [rec])).toThrow(/a\.json exists and is not a piplay run recording/);
    expect(readFileSync(join(out, 'a.json'), 'utf8')).toBe('{"mine": true}');
    expect(() => recordingFromRunFolder(out, { name: 'b', title: 'B', command: '' })).toThrow(/not a run folder/);
  });
});
