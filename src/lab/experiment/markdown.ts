// results.md of `npm run experiment` (pure): markdown tables of the aggregated runs, whatever the numbers
// are. EM cells are "mean ± std" over seeds in percent (sample std, n - 1); one seed shows the mean alone;
// "—" marks no value.
import { armLabel, runDir } from './plan.ts';
import type { ArmSummary, Claim, Stat } from './aggregate.ts';
import { formatInterval, formatPerSeed, formatQuestionOnly, pairedClaims, type Comparison } from './paired.ts';
import { verdictOf } from './bootstrap.ts';
import type { ProbeResult } from '../probe.ts';
import type { ExaminerProbeResult } from '../examiner-probe.ts';

/** `12.5 ± 3.1` (x100, one decimal), `12.5` for one seed, `—` for none. */
export function formatPct(s: Stat | null): string {
  if (!s) return '—';
  const m = (100 * s.mean).toFixed(1);
  return s.n > 1 ? `${m} ± ${(100 * s.std).toFixed(1)}` : m;
}

/** `1.25 ± 0.10` (two decimals), `1.25` for one seed, `—` for none. */
export function formatNum(s: Stat | null, digits = 2): string {
  if (!s) return '—';
  const m = s.mean.toFixed(digits);
  return s.n > 1 ? `${m} ± ${s.std.toFixed(digits)}` : m;
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function table(head: string[], rows: string[][]): string {
  const line = (r: string[]) => `| ${r.map(cell).join(' | ')} |`;
  return [line(head), `|${head.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

export interface ResultsMeta {
  preset: string;
  model: string;
  /** e.g. "world seed 1, 400 passages" or a corpus file. */
  corpus: string;
  /** Held-out questions and how they split by hop count. */
  heldOut: string;
  iterations: number;
  examinerSteps: number;
  studentSteps: number;
  seeds: number[];
  arms: string[];
  /** The command-line settings that override the preset, as `--flag value`. */
  settings: string[];
  /** Settings of single arms (--arm-settings), as `--flag value` per arm. */
  armSettings?: Record<string, string[]>;
  /** The code versions that made the runs, each with its runs (absent in results of older versions). */
  code?: { code: string; runs: string[] }[];
  /** The code that rewrote this report from the runs' logs (scripts/rewrite-report.ts), where one did. */
  rewrittenBy?: string;
  /** Runs planned and runs finished (results.md is rewritten after every run). */
  planned: number;
  finished: number;
  /** The trained arms skipped their own start evaluation (the base arm gives it). */
  startFromBase: boolean;
  /** How the teacher's notes show the path (--notes); absent in results of older versions. */
  notes?: string;
  /** The teacher probe of the base model (npm run probe), when the experiment ran it. */
  probe?: ProbeResult;
  /** The examiner probe of the base model, when the experiment ran it. */
  examinerProbe?: ExaminerProbeResult;
}

const pct1 = (x: number) => `${(100 * x).toFixed(1)}%`;
const num3 = (x: number | null) => (x === null ? '—' : x.toFixed(3));

/** The teacher probe's result as a markdown table, after a line on the student's rollouts it scored. */
export function probeTable(r: ProbeResult): string {
  return [
    `${r.questions} training questions; the student's sampled rollouts: EM ${pct1(r.studentEm)} (${r.rightAnswers} ` +
      `right), ${r.studentSearches.toFixed(2)} searches each.`,
    '',
    table(
      [
        'prompt',
        'greedy EM',
        'searches',
        'answered',
        'P(search) at decision',
        'P(answer) at decision',
        'D per token',
        'D at decision',
        'answer gain, right',
        'answer gain, wrong',
      ],
      r.rows.map((x) => [
        x.prompt,
        pct1(x.em),
        x.searchesPerRollout.toFixed(2),
        pct1(x.answeredShare),
        num3(x.decision.search),
        num3(x.decision.answer),
        num3(x.distill),
        num3(x.distillDecision),
        num3(x.answerGainRight),
        num3(x.answerGainWrong),
      ]),
    ),
    '',
    'The distillation term of the teacher prompts: how much of the full-vocabulary KL the top-K term keeps (mean per ' +
      'token), and how much of it falls on the answer tokens:',
    '',
    table(
      [
        'prompt',
        ...r.coverageKs.map((k) => `D at K = ${k}`),
        'full-vocabulary KL',
        'D per answer token',
        "answer tokens' share of D",
      ],
      r.rows
        .filter((x) => x.prompt !== 'student')
        .map((x) => [
          x.prompt,
          ...x.distillAtK.map(num3),
          num3(x.klFull),
          num3(x.distillAnswer),
          x.distillAnswerShare === null ? '—' : pct1(x.distillAnswerShare),
        ]),
    ),
  ].join('\n');
}

/** What the probe's columns mean (for results.md and docs/experiments/). */
export const PROBE_EXPLAINED =
  'World-generated training questions (never held-out ones), the base model as student and as teacher, as at the ' +
  "start of training. Rows: the student's prompt, then the teacher's prompt with each privileged context. Greedy EM, " +
  "searches and answered: the prompt's own greedy rollouts (what the teacher would do itself). The other columns " +
  "score the student's sampled rollouts (what distillation trains on): the probability of `<search>` and `<answer>` " +
  'at the first decision (the first tag after the first `</think>`), the top-K distillation term D per token and at ' +
  "that decision, and the answer gain: the mean of log p(prompt) − log p(student) over the tokens of the student's " +
  '`<answer>` span, for right and for wrong answers. A teacher that uses its context has a positive gain on right ' +
  'answers and a negative one on wrong answers, and searches as the student does; a teacher with a lower P(search) ' +
  'at the decision teaches the student to stop searching. The second table gives D at a few K beside the exact KL ' +
  'over the whole vocabulary (float64, on the host): the K buckets and the tail are a coarser split of the ' +
  'vocabulary, so D grows with K up to the full KL; where D at the configured K is close to the full KL, a larger K ' +
  "cannot change what the student learns. Its last columns give D over the tokens of the student's `<answer>` spans " +
  '(where the notes should matter) and their share of all of D.';

/** The examiner probe's table (per hop count asked for, then all), and up to `examples` of its questions. */
export function examinerProbeTable(r: ExaminerProbeResult, examples = 6): string {
  const shown = r.examples.slice(0, examples);
  return [
    table(
      [
        'hops',
        'questions',
        'valid format',
        'true',
        'wrong answer',
        'no single answer',
        'unreadable',
        'solvable (0<k<n)',
        'student accuracy',
      ],
      r.rows.map((x) => [
        String(x.hops),
        String(x.questions),
        pct1(x.valid),
        pct1(x.verdicts.right),
        pct1(x.verdicts.wrong),
        pct1(x.verdicts.unanswerable),
        pct1(x.verdicts.unreadable),
        pct1(x.solvable),
        x.studentAccuracy === null ? '—' : pct1(x.studentAccuracy),
      ]),
    ),
    '',
    ...shown.map(
      (x) =>
        `- ${x.hops}-hop, ${x.verdict}${x.n ? `, student ${x.k}/${x.n}` : ', not valid'}: ` +
        `${JSON.stringify(x.question)} → ${JSON.stringify(x.answer)}`,
    ),
  ].join('\n');
}

/** What the examiner probe's columns mean (for results.md and docs/experiments/). */
export const EXAMINER_PROBE_EXPLAINED =
  'The examiner writes questions from sampled source documents of the world, as in self-play (sampled, hop counts ' +
  "4:3:2:1). Valid format: f > 0, what self-play keeps. True: the question reads as a chain of the world's relations " +
  "by its question templates and the examiner's answer is the chain's answer (src/env/world/audit.ts); wrong answer: " +
  "it reads, but the answer is not the chain's; no single answer: the chain has none or several; unreadable: no " +
  "template reads it. Solvable: some but not all of the student's n sampled rollouts answered it (where the " +
  'difficulty reward and GRPO have a signal); student accuracy: their mean k/n on the valid questions.';

/** A section of one row per arm and one column per iteration: its heading, a paragraph and the table. */
function iterationSection(
  out: string[],
  title: string,
  text: string,
  arms: readonly ArmSummary[],
  its: number,
  cells: (s: ArmSummary) => string[],
): void {
  const head = ['arm', ...iterationHeads(its)];
  out.push(
    `## ${title}`,
    '',
    text,
    '',
    table(
      head,
      arms.map((s) => [armLabel(s.arm), ...cells(s)]),
    ),
    '',
  );
}

function iterationHeads(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `it ${i + 1}`);
}

/** The paired comparisons' table: each comparison overall, per hop count and on multi-hop questions. */
function pairedSection(out: string[], paired: readonly Comparison[]): void {
  const hops = [...new Set(paired.flatMap((c) => Object.keys(c.byHop)))].sort((a, b) => Number(a) - Number(b));
  out.push('## Paired comparisons on the same questions', '');
  out.push(
    'Each cell: A − B in points of held-out EM after the last iteration (the base model: its one evaluation; "it 1" ' +
      'names an earlier one), the mean over seeds and questions, with its **two-level** bootstrap 95% interval: ' +
      'each of 10,000 replicates draws the seeds with replacement (seed k of A beside seed k of B; a base model ' +
      'evaluated once beside every seed), then the questions with replacement (one draw for every seed and both ' +
      'sides). The verdicts follow it. "questions only" is the interval that keeps every seed once and resamples ' +
      'the questions alone; "per seed" is each seed\'s own A − B over all questions. The rows are recomputed from ' +
      'per-question.jsonl (src/lab/experiment/paired.ts, bootstrap.ts).',
    '',
  );
  out.push(
    table(
      [
        'A − B',
        'all (seeds and questions)',
        'all, questions only',
        ...hops.map((h) => `${h}-hop`),
        'multi-hop (≥2)',
        'per seed',
        'verdict (all)',
      ],
      paired.map((c) => [
        c.name,
        formatInterval(c.all),
        formatQuestionOnly(c.all),
        ...hops.map((h) => formatInterval(c.byHop[h] ?? null)),
        formatInterval(c.multiHop),
        formatPerSeed(c.all),
        verdictOf(c.all),
      ]),
    ),
  );
  out.push('');
}

/** The title, what was run, and how to read the cells. */
function headerSection(out: string[], meta: ResultsMeta, its: number): void {
  out.push(
    `# π-Play, Dr. Zero, the self control and the privileged-context ablation (preset ${meta.preset}): results`,
    '',
  );
  // Paragraphs, each followed by an empty line.
  const paragraphs = [
    'Preset ' +
      `\`${meta.preset}\`${meta.settings.length ? ` with ${meta.settings.map((s) => `\`${s}\``).join(' ')}` : ''}; ` +
      `model \`${meta.model}\`; corpus: ${meta.corpus}; held-out set: ${meta.heldOut}, greedy decoding. ${its} ` +
      `iteration${its === 1 ? '' : 's'} of ${meta.examinerSteps} examiner + ${meta.studentSteps} student steps; ` +
      `seeds ${meta.seeds.join(', ')}.`,
  ];
  const own = Object.entries(meta.armSettings ?? {}).filter(([, s]) => s.length > 0);
  if (own.length)
    paragraphs.push(
      `Each arm's own settings (its dev-world choice, \`--arm-settings\`): ${own
        .map(([arm, s]) => `${armLabel(arm)}: ${s.map((x) => `\`${x}\``).join(' ')}`)
        .join('; ')}.`,
    );
  if (meta.code?.length)
    paragraphs.push(
      `Code: ${meta.code.map((c) => `\`${c.code}\` (${c.runs.length} run${c.runs.length === 1 ? '' : 's'})`).join(', ')}; ` +
        "each run's result.json and config.json name theirs (runs of older versions did not record it: unknown).",
    );
  paragraphs.push(
    'Each cell is the mean ± standard deviation over seeds (sample std, n − 1) in percent unless said otherwise; ' +
      'a single seed shows the mean alone; "—" is no value. Written by `npm run experiment`' +
      (meta.rewrittenBy
        ? `, rewritten from its runs' logs by \`scripts/rewrite-report.ts\` at \`${meta.rewrittenBy}\``
        : '') +
      '; the settings were not tuned on the held-out set.',
  );
  if (meta.notes === 'answer-first')
    paragraphs.push(
      "With `--notes answer-first` the full and partial teachers' notes open with the answer, as the GT teacher's " +
        'do: all three read the answer, and the ablation compares what they read besides it.',
    );
  if (meta.finished < meta.planned)
    paragraphs.push(`**Partial results: ${meta.finished} of ${meta.planned} runs finished.**`);
  for (const p of paragraphs) out.push(p, '');
}

/** Held-out EM after the last iteration, per arm and hop, with searches and redundancy. */
function finalSection(out: string[], summaries: readonly ArmSummary[], hops: string[], its: number): void {
  out.push(`## Held-out exact match after iteration ${its}`, '');
  out.push(
    table(
      ['arm', 'seeds', 'EM', ...hops.map((h) => `${h}-hop`), 'multi-hop (≥2)', 'searches / rollout', 'redundancy'],
      summaries.map((s) => [
        armLabel(s.arm),
        String(s.final.em?.n ?? 0),
        formatPct(s.final.em),
        ...hops.map((h) => formatPct(s.final.byHop[h] ?? null)),
        formatPct(s.final.multiHop),
        formatNum(s.final.searches),
        formatNum(s.final.redundancy),
      ]),
    ),
  );
  out.push('');
  out.push(
    '"multi-hop" is, per seed, the mean of the EMs of hops ≥ 2. Searches / rollout and redundancy (share of a ' +
      "rollout's queries that repeat an earlier one, over rollouts that searched) are from the same greedy held-out " +
      'rollouts, not percentages.',
  );
  out.push('');
  if (summaries.every((s) => !s.final.em || s.final.em.mean === 0))
    out.push(
      "**Every arm's held-out EM is 0: no arm answers a held-out question at this scale, so no comparison can " +
        'separate the methods.**',
      '',
    );
}

/** Held-out EM after each iteration (and before training, where it was measured). */
function iterationsSection(
  out: string[],
  meta: ResultsMeta,
  summaries: readonly ArmSummary[],
  hops: string[],
  its: number,
): void {
  const hasStart = summaries.some((s) => s.trained && s.start.em);
  out.push('## Held-out EM after each iteration', '');
  const head = ['arm', 'hops', ...(hasStart ? ['before'] : []), ...iterationHeads(its)];
  const rows: string[][] = [];
  for (const s of summaries) {
    const row = (label: string, pick: (e: ArmSummary['start']) => Stat | null) => [
      armLabel(s.arm),
      label,
      ...(hasStart ? [formatPct(pick(s.start))] : []),
      ...s.byIteration.map((e) => formatPct(pick(e))),
    ];
    rows.push(row('all', (e) => e.em));
    for (const h of hops) rows.push(row(h, (e) => e.byHop[h] ?? null));
  }
  out.push(table(head, rows));
  out.push('');
  out.push(
    'The base model is not trained: its row repeats its one evaluation in every column.' +
      (meta.startFromBase
        ? ' It is also the "before training" point of every arm (the same weights, evaluated greedily), ' +
          'so the trained arms did not evaluate before training.'
        : ''),
  );
  out.push('');
}

/** Per iteration of the trained arms: the examiner's drift, where the questions came from, the signal. */
function trainingSections(out: string[], summaries: readonly ArmSummary[], its: number): void {
  const trained = summaries.filter((s) => s.trained);
  if (trained.length) {
    iterationSection(
      out,
      "The examiner's difficulty drift",
      "A fixed student, the base model, answers (greedily, with search) the valid questions each arm's examiner " +
        "wrote for the student's training set after the examiner stage of iteration i; the gold answer is the " +
        "examiner's. If the examiner's questions get harder over the iterations, this EM drops. Cells: mean ± std " +
        'over seeds of the EM, and the number of questions summed over seeds (q); "—" where the examiner wrote no ' +
        'valid question.',
      trained,
      its,
      (s) => s.drift.map((d) => (d.em ? `${formatPct(d.em)} (${d.questions} q)` : `— (${d.questions} q)`)),
    );
    iterationSection(
      out,
      'Where the training questions came from',
      "Per iteration: the share of the examiner's data-generation rollouts with a valid format (valid), and the " +
        "share of the student's training set that the world generator filled because the examiner wrote too few " +
        "valid questions (fallback, the project's `--fallback-questions world`). A high fallback share means the " +
        'student mostly trained on world-generated questions rather than on self-play questions.',
      trained,
      its,
      (s) => s.validShare.map((v, i) => `valid ${formatPct(v)} · fallback ${formatPct(s.fallback[i] ?? null)}`),
    );
    iterationSection(
      out,
      'What the training had to learn from',
      "Per iteration, means over its steps: the share of the examiner's questions that are true of the world (true: " +
        "the question reads as a chain of the world's relations by its question templates and the examiner's answer " +
        "is the chain's answer; src/env/world/audit.ts) and that some but not all of the student's n rollouts " +
        'answered in the examiner stage (solvable: where the difficulty reward has a signal); on the student steps, ' +
        "the share of questions whose n rollouts did not all score the same (learnable: GRPO's advantages are all 0 " +
        "on the others), the student's reward (its rollouts' EM against the examiner's answers) and the distillation " +
        'term D towards the teacher. With no reward, a student learns only from D. A part not measured (no examiner ' +
        'steps; a run of an older version) is left out.',
      trained,
      its,
      (s) =>
        s.signal.map((g) =>
          [
            ...(g.rightShare ? [`true ${formatPct(g.rightShare)}`] : []),
            ...(g.solvableShare ? [`solvable ${formatPct(g.solvableShare)}`] : []),
            ...(g.learnableShare ? [`learnable ${formatPct(g.learnableShare)}`] : []),
            `reward ${formatPct(g.studentReward)}`,
            `D ${formatNum(g.distill, 3)}`,
          ].join(' · '),
        ),
    );
  }
}

/** The claims, each decided by its two-level interval. */
function claimsSection(out: string[], paired: readonly Comparison[], drift: readonly Claim[]): void {
  const cs = [...pairedClaims(paired), ...drift];
  if (cs.length) {
    out.push("## The papers' claims at this scale", '');
    out.push(
      'Every claim is decided by its two-level 95% interval (seeds, then questions, as above): "holds" only where ' +
        'it excludes 0 on the claimed side, "not shown" where it holds 0; a claim of no difference reads "no ' +
        'difference found" where the interval holds 0, which is not a proof of equality, and says which side is ' +
        'higher where it does not. The question-only interval is given beside it. EM after the last iteration ' +
        "unless the claim names one. Fewer searches are the papers' efficiency claim only at an equal or higher EM: " +
        'a student that stops searching also searches less. The drift compares different questions (each ' +
        "iteration's own), so its replicates draw each iteration's questions within each drawn seed.",
    );
    out.push('');
    out.push(
      table(
        ['claim', 'numbers', 'verdict'],
        cs.map((c) => [c.claim, c.numbers, c.verdict]),
      ),
    );
    out.push('');
  }
}

/** The teacher and examiner probes of the base model, where they ran. */
function probeSections(out: string[], meta: ResultsMeta): void {
  if (meta.probe) {
    out.push('## The teacher probe (base model, before training)', '', PROBE_EXPLAINED, '', probeTable(meta.probe), '');
  }
  if (meta.examinerProbe) {
    out.push(
      '## The examiner probe (base model, before training)',
      '',
      EXAMINER_PROBE_EXPLAINED,
      '',
      examinerProbeTable(meta.examinerProbe),
      '',
    );
  }
}

/** The runs: seeds, folders, wall time, and any that stopped with an error. */
function runsSection(out: string[], summaries: readonly ArmSummary[]): void {
  out.push('## Runs', '');
  out.push(
    table(
      ['arm', 'seeds', 'run folders', 'wall time per run (s)'],
      summaries.map((s) => [
        armLabel(s.arm),
        s.seeds.join(', '),
        s.seeds.map((k) => runDir(s.arm, k)).join(', '),
        formatNum(s.seconds, 0),
      ]),
    ),
  );
  const errors = summaries.flatMap((s) => s.errors.map((e) => `- ${armLabel(s.arm)}, seed ${e.seed}: ${e.error}`));
  if (errors.length)
    out.push(
      '',
      'Runs that stopped with an error (their later evaluations are missing from the tables):',
      '',
      ...errors,
    );
}

/** results.md: every section of the report, in order. */
export function renderResults(
  meta: ResultsMeta,
  summaries: readonly ArmSummary[],
  paired: readonly Comparison[] = [],
  drift: readonly Claim[] = [],
): string {
  const hops = [...new Set(summaries.flatMap((s) => Object.keys(s.final.byHop)))].sort((a, b) => Number(a) - Number(b));
  const its = meta.iterations;
  const out: string[] = [];
  headerSection(out, meta, its);
  finalSection(out, summaries, hops, its);
  iterationsSection(out, meta, summaries, hops, its);
  trainingSections(out, summaries, its);
  if (paired.length) pairedSection(out, paired);
  claimsSection(out, paired, drift);
  probeSections(out, meta);
  runsSection(out, summaries);
  out.push('');
  return out.join('\n');
}
