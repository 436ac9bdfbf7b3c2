// Pretraining from the page and the command line, without a GPU: `npm run pretrain` takes its flags,
// defaults and checks from the page's settings table, bad settings are named per field (per flag on the
// command line), the form reads back as a request, and the views (summary, controls, checkpoint row,
// progress line) and TRAINING.md say what was trained.
import { describe, expect, it } from 'vitest';
import { parsePretrainArgs, PRETRAIN_USAGE } from '../../../src/cli/pretrain-args.ts';
import { tinyConfig } from '../../../src/model/init.ts';
import { DATA_DEFAULTS } from '../../../src/pretrain/data.ts';
import type { PretrainStats } from '../../../src/pretrain/run.ts';
import {
  MIN_VOCAB,
  PRETRAIN_DEFAULTS,
  PRETRAIN_FIELDS,
  pretrainProblems,
  settingsToOptions,
  type PretrainKey,
} from '../../../src/pretrain/settings.ts';
import { summarisePretrain, trainingMarkdown } from '../../../src/pretrain/summary.ts';
import type { StepLog } from '../../../src/pretrain/train.ts';
import { renderCheckpointList } from '../../../src/ui/panels/checkpoints.ts';
import {
  pretrainControlState,
  readPretrainForm,
  renderFromOptions,
  renderPretrainForm,
  renderPretrainSummary,
} from '../../../src/ui/panels/pretrain.ts';
import { renderProgress } from '../../../src/ui/panels/progress.ts';
import { controlState } from '../../../src/ui/panels/setup.ts';
import type { CheckpointMeta } from '../../../src/worker/checkpoint-store.ts';

describe('pretraining settings', () => {
  it('are valid by default and give the data defaults', () => {
    expect(pretrainProblems(PRETRAIN_DEFAULTS).size).toBe(0);
    // DATA_DEFAULTS takes the table's values (src/pretrain/data.ts); these are the values themselves.
    expect(DATA_DEFAULTS).toMatchObject({ worldSize: 80, drillsPerWorld: 0, teacherPerWorld: 0 });
    expect(DATA_DEFAULTS).toMatchObject({ examinerPerWorld: 20, studentPerWorld: 40 });
    DATA_DEFAULTS.studentHops.forEach((w, i) => expect(w).toBeCloseTo([0.9, 0.08, 0.02][i]!, 12));
    // The default teacher multi-hop share gives self-play's 4:3:2:1.
    DATA_DEFAULTS.teacherHops.forEach((w, i) => expect(w).toBeCloseTo([0.4, 0.3, 0.2, 0.1][i]!, 12));
    expect(DATA_DEFAULTS).toMatchObject({ teacherModes: [5, 2, 2, 1], examinerHops: [4, 3, 2, 1] });
  });

  it('each go to their own place in the options', () => {
    // The options' numbers and data settings, one entry each, as text.
    const places = (s: typeof PRETRAIN_DEFAULTS) => {
      const { data, ...options } = settingsToOptions(s);
      const flat = { ...options, ...Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [`data.${k}`, v])) };
      return Object.fromEntries(Object.entries(flat).map(([k, v]) => [k, JSON.stringify(v)]));
    };
    const base = places(PRETRAIN_DEFAULTS);
    const reached = new Set<string>();
    for (const key of Object.keys(PRETRAIN_FIELDS) as PretrainKey[]) {
      const moved = places({ ...PRETRAIN_DEFAULTS, [key]: PRETRAIN_DEFAULTS[key] + 0.5 });
      const changed = Object.keys(moved).filter((k) => moved[k] !== base[k]);
      expect(changed, key).toEqual([PRETRAIN_FIELDS[key].into]);
      reached.add(changed[0]!);
    }
    expect(reached.size).toBe(Object.keys(PRETRAIN_FIELDS).length);
    expect(Object.keys(base).length).toBe(Object.keys(PRETRAIN_FIELDS).length);
  });

  it('names each bad setting', () => {
    const p = pretrainProblems({
      ...PRETRAIN_DEFAULTS,
      steps: 0,
      lr: 0,
      hidden: 20,
      vocab: MIN_VOCAB - 1,
      passageShare: 1,
      batch: 1.5,
      seq: NaN,
    });
    expect(Object.fromEntries(p)).toEqual({
      steps: 'steps must be an integer from 1 to 10000000',
      lr: 'lr must be a number > 0',
      hidden: 'hidden must be a multiple of 8 (4 heads of an even width)',
      vocab: `vocab must be an integer from ${MIN_VOCAB} to 1048576`,
      passageShare: 'passage share must be a number >= 0 and < 1',
      batch: 'batch must be an integer from 1 to 65536',
      seq: 'seq must be an integer from 16 to 1048576',
    });
  });

  it('blames the steps, not the copy warm-up, for a negative step count', () => {
    expect(Object.fromEntries(pretrainProblems({ ...PRETRAIN_DEFAULTS, steps: -5 }))).toEqual({
      steps: 'steps must be an integer from 1 to 10000000',
    });
    expect(Object.fromEntries(pretrainProblems({ ...PRETRAIN_DEFAULTS, steps: 2.5 }))).toEqual({
      steps: 'steps must be an integer from 1 to 10000000',
    });
    // With usable steps the warm-up is still checked against them.
    expect(Object.fromEntries(pretrainProblems({ ...PRETRAIN_DEFAULTS, steps: 10, copyWarmup: 20 }))).toEqual({
      copyWarmup: 'copy warm-up must be at most the steps (10)',
    });
  });
});

describe('npm run pretrain', () => {
  const d = PRETRAIN_DEFAULTS;
  const usageLine = (flag: string) => PRETRAIN_USAGE.split('\n').find((l) => l.startsWith(`  --${flag} `));
  const parse = (...argv: string[]) => {
    const args = parsePretrainArgs(argv);
    if (args === 'help') throw new Error('unexpected help');
    return args;
  };

  it('lists every flag, each setting with its default from the settings table', () => {
    const flags = PRETRAIN_USAGE.split('\n').flatMap((l) => /^ {2}--([\w-]+)/.exec(l)?.[1] ?? []);
    // The settings table's flags in its order ('size' stands for hidden and layers), then the CLI's own.
    const tableFlags = [...new Set(Object.values(PRETRAIN_FIELDS).flatMap((f) => f.flag ?? []))];
    expect(flags).toEqual([...tableFlags, 'out', 'from', 'world-out', 'write-stream', 'check']);
    expect(tableFlags).toContain('teacher-slip-stops');
    for (const key of Object.keys(PRETRAIN_FIELDS) as PretrainKey[]) {
      const flag = PRETRAIN_FIELDS[key].flag;
      if (flag && flag !== 'size') expect(usageLine(flag)).toContain(`(default ${d[key]})`);
    }
    expect(usageLine('size')).toContain(`(default ${d.hidden}x${d.layers})`);
  });

  it('parses the command line into the options of pretrain()', () => {
    // A subset match: a setting added to the table later needs no change here (its default is checked above);
    // the data settings are exactly those the table sends there, none missing and none stray.
    const dataKeys = Object.values(PRETRAIN_FIELDS).flatMap((f) =>
      f.into.startsWith('data.') ? [f.into.slice(5)] : [],
    );
    expect(Object.keys(parse().options.data ?? {}).sort()).toEqual([...new Set(dataKeys)].sort());
    expect(parse()).toMatchObject({
      options: {
        seed: 0,
        steps: 1500,
        batch: 4,
        seq: 512,
        lr: 2e-3,
        hidden: 96,
        layers: 3,
        vocab: 1024,
        tokenizerWorlds: 10,
        passageShare: 0.3,
        logEvery: 10,
        copyWarmup: 0,
        copyEvery: 0,
        data: {
          worldSize: 80,
          studentPerWorld: 40,
          studentHops: [0.9, 0.08, 0.02],
          drillsPerWorld: 0,
          teacherPerWorld: 0,
          teacherHops: [0.4, 0.3, 0.6 / 3, 0.6 / 6],
          teacherSlips: 0,
          teacherCompact: 0,
          examinerPerWorld: 20,
        },
      },
      out: 'public/models/piplay-tiny',
      worldOut: 'public/worlds/default',
      check: 25,
    });
    const args = parse(
      '--from',
      '/tmp/stage2',
      '--seed',
      '2',
      '--steps',
      '900',
      '--batch',
      '2',
      '--seq',
      '1024',
      '--lr',
      '3e-3',
      '--size',
      '16x1',
      '--vocab',
      '512',
    );
    expect(args.from).toBe('/tmp/stage2');
    expect(args.options).toMatchObject({
      ...parse().options,
      seed: 2,
      steps: 900,
      batch: 2,
      seq: 1024,
      lr: 3e-3,
      hidden: 16,
      layers: 1,
      vocab: 512,
    });
    const copying = parse(
      '--passage-share',
      '0.05',
      '--drills',
      '150',
      '--teacher',
      '60',
      '--teacher-slips',
      '0.5',
      '--examiner',
      '50',
      '--copy-warmup',
      '100',
      '--copy-every=4',
      '--log-every',
      '5',
      '--out',
      'x',
      '--world-out',
      '',
      '--check',
      '0',
    );
    expect(copying).toMatchObject({
      options: {
        ...parse().options,
        passageShare: 0.05,
        copyWarmup: 100,
        copyEvery: 4,
        logEvery: 5,
        data: {
          worldSize: 80,
          studentPerWorld: 40,
          studentHops: [0.9, 0.08, 0.02],
          drillsPerWorld: 150,
          teacherPerWorld: 60,
          teacherHops: [0.4, 0.3, 0.6 / 3, 0.6 / 6],
          teacherSlips: 0.5,
          teacherCompact: 0,
          examinerPerWorld: 50,
        },
      },
      out: 'x',
      worldOut: '',
      check: 0,
    });
    expect(parsePretrainArgs(['--help'])).toBe('help');
  });

  it('rejects what the page rejects, naming the flag, then prints the usage', () => {
    const error = (...argv: string[]) => {
      try {
        parsePretrainArgs(argv);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error(`accepted ${argv.join(' ')}`);
    };
    expect(error('--lr', '0')).toBe(`--lr: lr must be a number > 0\n${PRETRAIN_USAGE}`);
    expect(error('--size', '20x0').split('\n').slice(0, 2)).toEqual([
      '--size: hidden must be a multiple of 8 (4 heads of an even width)',
      '--size: layers must be an integer from 1 to 256',
    ]);
    expect(error('--size', '96')).toMatch(/^--size must look like 96x3/);
    expect(error('--steps', '10', '--copy-warmup', '20')).toMatch(
      /^--copy-warmup: copy warm-up must be at most the steps \(10\)\n/,
    );
    expect(error('--vocab', String(MIN_VOCAB - 1))).toMatch(
      new RegExp(`^--vocab: vocab must be an integer from ${MIN_VOCAB} to 1048576\n`),
    );
    expect(error('--passage-share', '1')).toMatch(/^--passage-share: passage share must be a number >= 0 and < 1\n/);
    expect(error('--batch', '1.5')).toMatch(/^--batch: batch must be an integer from 1 to 65536\n/);
    expect(error('--seq', '')).toMatch(/^--seq: seq must be an integer from 16 to 1048576\n/);
    expect(error('--unknown', '1')).toMatch(/unknown/i);
  });
});

describe('pretraining panel', () => {
  const stored: CheckpointMeta[] = [
    {
      name: 'my-base',
      kind: 'model',
      origin: 'pretrained',
      createdAt: 0,
      updatedAt: 0,
      bytes: 10,
      cursor: null,
      metrics: { loss: 2.5 },
      base: 'a new tiny model',
    },
    { name: 'run-1', kind: 'run', createdAt: 0, updatedAt: 0, bytes: 10, cursor: null, metrics: {}, base: 'x' },
  ];

  it('renders every setting with its default and offers the models to continue', () => {
    const form = renderPretrainForm(['piplay-tiny']).text;
    for (const [k, v] of Object.entries(PRETRAIN_DEFAULTS))
      expect(form).toContain(`name="${k}" type="number" step="any" inputmode="decimal" value="${v}"`);
    const from = renderFromOptions(['piplay-tiny'], stored, 'checkpoint:my-base').text;
    expect(from).toContain('<option value="embedded:piplay-tiny">piplay-tiny</option>');
    expect(from).toContain('<option value="checkpoint:my-base" selected>my-base</option>');
    expect(from).not.toContain('run-1'); // runs are not model folders to continue
  });

  it('reads the form back as a request, or the problems per field', () => {
    const values: Record<string, string> = {
      ...Object.fromEntries(Object.entries(PRETRAIN_DEFAULTS).map(([k, v]) => [k, String(v)])),
      steps: ' 3 ',
      from: 'embedded:piplay-tiny',
      name: ' mine ',
    };
    const ok = readPretrainForm((k) => values[k] ?? '');
    expect(ok.request).toEqual({
      ...PRETRAIN_DEFAULTS,
      steps: 3,
      from: { kind: 'embedded', name: 'piplay-tiny' },
      name: 'mine',
    });
    const form = (o: Record<string, string>) => (k: string) => ({ ...values, ...o })[k] ?? '';
    const fresh = readPretrainForm(form({ from: '', name: '' }));
    expect(fresh.request).toEqual({ ...PRETRAIN_DEFAULTS, steps: 3 });
    const bad = readPretrainForm(form({ layers: '', lr: '-1' }));
    expect(bad.request).toBeUndefined();
    expect([...bad.errors.keys()].sort()).toEqual(['layers', 'lr']);
  });

  it('enables Start with no job under way and Stop during a pretraining; a pretraining cannot pause', () => {
    expect(pretrainControlState('idle', 'selfplay')).toEqual({ start: true, stop: false });
    expect(pretrainControlState('running', 'pretrain')).toEqual({ start: false, stop: true });
    expect(pretrainControlState('running', 'selfplay')).toEqual({ start: false, stop: false });
    expect(pretrainControlState('failed', 'pretrain')).toEqual({ start: true, stop: false });
    expect(controlState('running', 'pretrain')).toEqual({
      start: false,
      pause: false,
      resume: false,
      stop: true,
      save: false,
    });
  });

  it('shows progress without iterations, the summary, and the stored model as pretrained', () => {
    const p = renderProgress(
      {
        stage: 'pretrain',
        iteration: 0,
        done: 30,
        total: 100,
        etaSeconds: 70,
        label: 'loss 3.100 · 800 tokens/s',
        since: 0,
        doneAt: 0,
      },
      'running',
      null,
    ).text;
    expect(p).toContain('pre-training');
    expect(p).not.toContain('iteration');
    expect(p).toContain('30 / 100 · loss 3.100 · 800 tokens/s');
    expect(p).toContain('≈ 1m 10s left');
    expect(p).toContain('aria-valuenow="30"');
    const sum = {
      name: 'my-base',
      params: 123456,
      tokens: 6000,
      targets: 4000,
      seconds: 12,
      finalLoss: 2.5,
      firstLoss: 6.2,
      tailLoss: 2.6,
      steps: 3,
      hidden: 16,
      layers: 1,
      vocab: 512,
      from: null,
      device: 'SwiftShader',
    };
    const done = renderPretrainSummary(sum, 'my-base').text;
    expect(done).toContain('Stored as <code>my-base</code>');
    expect(done).toContain('123.5k');
    expect(done).toMatch(/<strong>2.500<\/strong>/);
    expect(done).toContain('data-act="use"');
    const unsaved = renderPretrainSummary(sum, null).text;
    expect(unsaved).toContain('Not stored');
    expect(unsaved).toContain('data-act="download"');
    expect(renderCheckpointList(stored.slice(0, 1)).text).toMatch(/pretrained here · model folder/);
  });
});

describe('TRAINING.md', () => {
  it('records the settings, the model, the data and the loss curve', () => {
    const cfg = tinyConfig({ vocabSize: 512, hidden: 16, layers: 1 });
    const stats: PretrainStats = {
      rows: 3,
      tokens: 3072,
      targets: 2000,
      passageTokens: 900,
      transcriptTokens: 1660,
      dropped: 1,
      docs: 20,
      copyTokens: 512,
      copyTargets: 300,
    };
    const logs: StepLog[] = [1, 2, 3].map((step) => ({
      step,
      steps: 3,
      loss: 7 - step,
      lr: 1e-2,
      tokens: step * 1024,
      seconds: step,
    }));
    const settings = {
      ...PRETRAIN_DEFAULTS,
      steps: 3,
      batch: 1,
      seq: 1024,
      lr: 1e-2,
      hidden: 16,
      layers: 1,
      vocab: 512,
    };
    const sum = summarisePretrain({
      name: 'toy',
      cfg,
      params: 9999,
      stats,
      logs,
      seconds: 4,
      from: null,
      device: 'lavapipe',
    });
    expect(sum).toMatchObject({ finalLoss: 4, firstLoss: 6, tailLoss: 5, steps: 3, tokens: 3072 });
    const md = trainingMarkdown(sum, settings, cfg, stats, logs);
    expect(md).toMatch(/^# toy: a base model pretrained in the browser/);
    expect(md).toContain('| steps | 3 (batch 1 x seq 1024, peak lr 0.01, warm-up + cosine) |');
    expect(md).toContain('| parameters | 9999 |');
    expect(md).toContain(
      '| tokens seen | 3072 (2000 loss targets; 900 passage, 1660 transcript, 512 copy-task tokens;',
    );
    expect(md).toContain('| wall time | 4s (768 tokens/s) on lavapipe |');
    expect(md).toContain('| final loss | 4.000 (last logged step); mean of the last 3 logs 5.000; first 6.000 |');
    expect(md).toContain('| 3 | 4.000 | 1.00e-2 |');
  });
});
