// What an experiment found, in the few comparisons the page's guide shows beside the recorded example it was recorded
// from: π-Play against its base, against the self control (the same EMA teacher without the privileged context),
// the self control against the base, π-Play against Dr. Zero and GT, and the data efficiency. Each is picked from the
// report's paired comparisons (paired.ts) and written as results.md writes it (the same two-level interval and
// verdict), plus one sentence on what the numbers support about the privileged context. Made when the example is
// recorded (npm run record-example --from), so the page shows text and reads no statistics code.
import { verdictOf, type Verdict } from './bootstrap.ts';
import { type Comparison, formatInterval, formatPerSeed, formatQuestionOnly, type Interval } from './paired.ts';

export interface Finding {
  /** The report's name of the comparison, e.g. "piplay − self". */
  name: string;
  /** What it compares, in words. */
  label: string;
  /** A − B in points of held-out EM with its two-level 95% interval, e.g. "+5.8 [+1.7, +10.3]". */
  interval: string;
  /** The question-only 95% interval, "[+2.3, +9.5]". */
  questionOnly: string;
  /** Each seed's own A − B, "1: +4.3, 2: +5.3". */
  perSeed: string;
  verdict: Verdict;
}

export interface ExperimentFindings {
  /** The experiment folder, as record-example was given it (results/experiment-47). */
  source: string;
  /** Seeds, questions and iterations, in words. */
  scope: string;
  findings: Finding[];
  /** What the findings support about the privileged context; null where the self control was not run. */
  summary: string | null;
}

/** The comparisons shown, by the report's names, in order. */
const SHOWN: [string, string][] = [
  ['piplay − base', 'π-Play against its base model'],
  ['piplay − self', 'π-Play against the self control (the same teacher, without the privileged context)'],
  ['self − base', "the self control against the base model (the teacher's pull alone)"],
  ['piplay − drzero', 'π-Play against Dr. Zero (no teacher)'],
  ['piplay − gt', 'π-Play (the full construction path) against GT (the answer only)'],
];

/** The data-efficiency comparison's report name, "piplay it 1 − drzero it 3". */
const EFFICIENCY = /^piplay it (\d+) − drzero it (\d+)$/;

function finding(name: string, label: string, i: Interval): Finding {
  return {
    name,
    label,
    interval: formatInterval(i),
    questionOnly: formatQuestionOnly(i),
    perSeed: formatPerSeed(i),
    verdict: verdictOf(i),
  };
}

/** The shown comparisons of a report, those it made (a comparison with no interval is left out). */
export function findingsOf(cs: readonly Comparison[]): Finding[] {
  const out: Finding[] = [];
  for (const [name, label] of SHOWN) {
    const c = cs.find((x) => x.name === name);
    if (c?.all) out.push(finding(name, label, c.all));
  }
  const eff = cs.find((x) => EFFICIENCY.test(x.name));
  const m = eff && EFFICIENCY.exec(eff.name);
  if (eff?.all && m)
    out.push(
      finding(
        eff.name,
        `π-Play after iteration ${m[1]} against Dr. Zero after iteration ${m[2]} (the papers' data efficiency: a ` +
          'match or better)',
        eff.all,
      ),
    );
  return out;
}

/** One sentence on what the findings support about the privileged context (null without the self control). */
export function privilegeSummary(fs: readonly Finding[]): string | null {
  const v = (name: string) => fs.find((f) => f.name === name)?.verdict;
  const privilege = v('piplay − self');
  if (privilege === undefined || privilege === 'n/a') return null;
  if (privilege === 'holds')
    return 'π-Play beat the self control: the privileged context helped beyond the pull of a slow EMA teacher.';
  if (privilege === 'does not hold')
    return 'The self control beat π-Play: here the privileged context made the student worse than the same teacher without it.';
  const self = v('self − base') === 'holds';
  if (v('piplay − base') === 'holds' && self)
    return (
      'π-Play did not beat the self control (the interval holds 0), and both beat their base: the evidence supports ' +
      'distillation towards a slow EMA teacher, not that the privileged context adds to it.'
    );
  if (v('piplay − base') === 'holds')
    return (
      'π-Play beat its base, but its lead over the self control is not shown (the interval holds 0), nor the self ' +
      "control's own gain over the base: the evidence supports π-Play's recipe as a whole, not yet the privileged " +
      "context's share of it."
    );
  return "π-Play did not beat the self control (the interval holds 0): the privileged context's part is not shown.";
}

/** What an experiment found, for the page: its shown comparisons and the sentence on the privilege. */
export function experimentFindings(
  source: string,
  meta: { seeds: number[]; iterations: number },
  cs: readonly Comparison[],
): ExperimentFindings {
  const findings = findingsOf(cs);
  const questions = cs.find((c) => c.name === 'piplay − base')?.all?.questions;
  return {
    source,
    scope:
      `${meta.seeds.length} seeds (${meta.seeds.join(', ')})` +
      (questions ? ` × ${questions} held-out questions` : '') +
      `, ${meta.iterations} iteration${meta.iterations === 1 ? '' : 's'}`,
    findings,
    summary: privilegeSummary(findings),
  };
}
