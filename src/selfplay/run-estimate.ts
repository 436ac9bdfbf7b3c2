// The whole run's time: every unit of work the loop will do (its own cursor order, loop.ts), each with a rough
// measure of its work from the settings' budgets, and the seconds left from the units measured so far. A unit of a
// stage already measured is predicted by that stage's mean; one of a stage not seen yet by its work at the seconds
// per work of everything measured. Generation dominates π-Play, so work counts sequential decode steps (a batch of
// rollouts decodes together, up to max-turns × turn-tokens steps, in chunks of eval-batch where evaluation and the
// examiner's scoring split them) plus the trained tokens at 1/256 of a step each (a training pass runs a whole
// sequence at once).
import type { Cursor } from './checkpoint.ts';
import type { SelfPlayConfig } from './config.ts';
import { firstCursor, nextCursor } from './cursor.ts';

export type UnitStage = Exclude<Cursor['stage'], 'done'>;

/** Trained tokens per decode step of equal cost (rough; the measured rates correct it per stage). */
const TOKENS_PER_STEP = 256;

/** A unit's work from the budgets (an upper bound in decode steps; real rollouts stop earlier). */
export function unitWork(c: SelfPlayConfig, stage: UnitStage): number {
  const steps = c.maxTurns * c.turnTokens;
  const batches = (rollouts: number) => Math.max(1, Math.ceil(rollouts / Math.max(1, c.evalBatch)));
  const hops = c.evalHops.length;
  switch (stage) {
    case 'eval-start':
    case 'eval':
      return batches(c.evalPerHop * hops) * steps;
    case 'examiner':
      // The examiner's rollouts, then n student rollouts per question to score it, then its update.
      return (
        steps + batches(c.examinerBatch * c.rolloutsPerQuestion) * steps + (c.examinerBatch * steps) / TOKENS_PER_STEP
      );
    case 'generate': {
      const wanted = c.trainQuestions > 0 ? c.trainQuestions : c.studentSteps * c.studentBatch;
      return Math.ceil(wanted / c.examinerBatch) * steps;
    }
    case 'student': {
      const rollouts = c.studentBatch * c.rolloutsPerQuestion;
      // Rollouts, then the PPO epochs: the student's forward and backward and the teacher's forward.
      return steps + (c.ppoEpochs * rollouts * steps * 1.5) / TOKENS_PER_STEP;
    }
  }
}

/** The units after `from` (itself included) to the end of the run, in the loop's order. */
export function unitsFrom(c: SelfPlayConfig, from: Cursor): UnitStage[] {
  const out: UnitStage[] = [];
  for (let u = from; u.stage !== 'done'; u = nextCursor(u, c)) out.push(u.stage);
  return out;
}

/** Every unit of a run with these settings. */
export function runUnits(c: SelfPlayConfig): UnitStage[] {
  return unitsFrom(c, firstCursor(c));
}

/** Seconds each measured unit took, by stage. */
export type Measured = ReadonlyMap<Cursor['stage'], readonly number[]>;

/** Seconds per unit of work over the measured units (undefined before any). */
export function secondsPerWork(c: SelfPlayConfig, measured: Measured): number | undefined {
  let seconds = 0;
  let work = 0;
  for (const [stage, times] of measured) {
    if (stage === 'done') continue;
    seconds += times.reduce((a, b) => a + b, 0);
    work += times.length * unitWork(c, stage);
  }
  return work > 0 && seconds > 0 ? seconds / work : undefined;
}

/** Seconds the units `left` will take, from the measured units (undefined before any unit was measured). */
export function secondsLeft(c: SelfPlayConfig, left: readonly UnitStage[], measured: Measured): number | undefined {
  const rate = secondsPerWork(c, measured);
  if (rate === undefined) return undefined;
  let total = 0;
  for (const stage of left) {
    // The evaluation before training and those after each iteration are the same work.
    const twin = stage === 'eval' ? 'eval-start' : stage === 'eval-start' ? 'eval' : stage;
    const times = measured.get(stage)?.length ? measured.get(stage) : measured.get(twin);
    total += times?.length ? times.reduce((a, b) => a + b, 0) / times.length : unitWork(c, stage) * rate;
  }
  return total;
}

/** A whole run's seconds at a rate measured before (another run of the same model on the same GPU). */
export function runSecondsAt(c: SelfPlayConfig, rate: number): number {
  return runUnits(c).reduce((s, stage) => s + unitWork(c, stage) * rate, 0);
}
