// What the page knows about the run: every event folded into one state object (a plain reducer, so it is
// tested in Node). Panels read it and re-render the parts whose version changed.
import type { EvalMetrics, QuestionRecord, RolloutRecord, RunEvent, Stage } from '../selfplay/events.ts';

export interface Series {
  /** Step number along the stage's own axis (1, 2, ...). */
  x: number[];
  y: number[];
  /** Iteration and step of each point (for hover). */
  at: { iteration: number; step: number }[];
}

export interface ProgressState {
  stage: Stage;
  iteration: number;
  done: number;
  total: number;
  /** The run's own estimate of the stage's seconds left, made at `etaAt` (ms). */
  etaSeconds?: number;
  etaAt?: number;
  label?: string;
  /** When this stage's progress began (ms), for an ETA estimate when the run gives none. */
  since: number;
  /** When `done` last grew (ms): a linear estimate is made then and counts down until the next unit ends. */
  doneAt: number;
  /** The run's estimate of the whole run's seconds left, made at `runEtaAt` (ms); kept across stages. */
  runEtaSeconds?: number;
  runEtaAt?: number;
  /** The run's measured seconds per unit of work (run-estimate.ts), for estimating the next run. */
  secondsPerWork?: number;
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  at: number;
}

export interface RunState {
  progress: ProgressState | null;
  questions: QuestionRecord[];
  rollouts: RolloutRecord[];
  /** `${stage}/${metric}` -> series. */
  series: Map<string, Series>;
  evals: EvalMetrics[];
  logs: LogLine[];
  lastCheckpoint: { name: string; iteration: number; step: number } | null;
  /** Bumped when the part changes. */
  version: {
    progress: number;
    questions: number;
    rollouts: number;
    metrics: number;
    logs: number;
    checkpoints: number;
  };
  /** Metrics events seen per stage (the x axis). */
  stageSteps: Partial<Record<Stage, number>>;
}

export const LIMITS = { questions: 300, rollouts: 240, logs: 300 };

export function emptyState(): RunState {
  return {
    progress: null,
    questions: [],
    rollouts: [],
    series: new Map(),
    evals: [],
    logs: [],
    lastCheckpoint: null,
    version: { progress: 0, questions: 0, rollouts: 0, metrics: 0, logs: 0, checkpoints: 0 },
    stageSteps: {},
  };
}

function push<T>(list: T[], item: T, cap: number): void {
  list.push(item);
  if (list.length > cap) list.splice(0, list.length - cap);
}

function addPoint(state: RunState, key: string, x: number, y: number, at: { iteration: number; step: number }): void {
  let s = state.series.get(key);
  if (!s) {
    s = { x: [], y: [], at: [] };
    state.series.set(key, s);
  }
  s.x.push(x);
  s.y.push(y);
  s.at.push(at);
}

/** Folds one event into the state (mutating it) and returns it. */
export function applyEvent(state: RunState, ev: RunEvent, now = Date.now()): RunState {
  switch (ev.type) {
    case 'progress': {
      const prev = state.progress;
      const same = prev !== null && prev.stage === ev.stage && prev.iteration === ev.iteration && ev.done >= prev.done;
      // An event within a unit (a label such as "update") carries no estimate: the last one keeps counting down.
      const eta =
        ev.etaSeconds !== undefined
          ? { etaSeconds: ev.etaSeconds, etaAt: now }
          : same
            ? { etaSeconds: prev.etaSeconds, etaAt: prev.etaAt }
            : {};
      state.progress = {
        stage: ev.stage,
        iteration: ev.iteration,
        done: ev.done,
        total: ev.total,
        ...eta,
        label: ev.label,
        since: same ? prev.since : now,
        doneAt: same && ev.done === prev.done ? prev.doneAt : now,
        ...(ev.runEtaSeconds !== undefined
          ? { runEtaSeconds: ev.runEtaSeconds, runEtaAt: now }
          : prev?.runEtaSeconds !== undefined
            ? { runEtaSeconds: prev.runEtaSeconds, runEtaAt: prev.runEtaAt }
            : {}),
        ...((ev.secondsPerWork ?? prev?.secondsPerWork) !== undefined
          ? { secondsPerWork: ev.secondsPerWork ?? prev?.secondsPerWork }
          : {}),
      };
      state.version.progress++;
      break;
    }
    case 'metrics': {
      const m = ev.metrics;
      const x = (state.stageSteps[m.stage] ?? 0) + 1;
      state.stageSteps[m.stage] = x;
      for (const [k, v] of Object.entries(m)) {
        if (k === 'stage' || k === 'iteration' || k === 'step' || typeof v !== 'number' || !Number.isFinite(v))
          continue;
        addPoint(state, `${m.stage}/${k}`, x, v, { iteration: m.iteration, step: m.step });
      }
      state.version.metrics++;
      break;
    }
    case 'eval': {
      const e = ev.metrics;
      state.evals.push(e);
      // x is the iteration the evaluation followed: 0 before training (iteration −1), then 1, 2, ...
      const x = e.iteration + 1;
      const at = { iteration: e.iteration, step: 0 };
      addPoint(state, 'eval/em', x, e.em, at);
      for (const [hop, v] of Object.entries(e.emByHop)) addPoint(state, `eval/em_hop${hop}`, x, v, at);
      addPoint(state, 'eval/searches_per_rollout', x, e.searchesPerRollout, at);
      addPoint(state, 'eval/redundancy', x, e.redundancy, at);
      state.version.metrics++;
      break;
    }
    case 'question':
      push(state.questions, ev.record, LIMITS.questions);
      state.version.questions++;
      break;
    case 'rollout':
      push(state.rollouts, ev.record, LIMITS.rollouts);
      state.version.rollouts++;
      break;
    case 'checkpoint':
      state.lastCheckpoint = { name: ev.name, iteration: ev.iteration, step: ev.step };
      state.version.checkpoints++;
      push(
        state.logs,
        {
          level: 'info',
          message:
            `checkpoint saved (slot ${ev.name}); the run continues at iteration ${ev.iteration + 1}, step ` +
            `${ev.step + 1}`,
          at: now,
        },
        LIMITS.logs,
      );
      state.version.logs++;
      break;
    case 'log':
      push(state.logs, { level: ev.level, message: ev.message, at: now }, LIMITS.logs);
      state.version.logs++;
      break;
  }
  return state;
}

/**
 * Seconds left in the current stage: the run's own estimate, else a linear one made when the last unit ended;
 * either counts down from when it was made (never up while a unit runs) and stops at 0.
 */
export function etaSeconds(p: ProgressState, now = Date.now()): number | undefined {
  if (p.etaSeconds !== undefined && Number.isFinite(p.etaSeconds))
    return Math.max(0, p.etaSeconds - (now - (p.etaAt ?? now)) / 1000);
  if (p.done <= 0 || p.total <= 0) return undefined;
  const perUnit = (p.doneAt - p.since) / 1000 / p.done;
  return Math.max(0, perUnit * (p.total - p.done) - (now - p.doneAt) / 1000);
}

/** The whole run's seconds left, counting down from the run's last estimate (undefined before its first unit). */
export function runEtaSeconds(p: ProgressState, now = Date.now()): number | undefined {
  if (p.runEtaSeconds === undefined || !Number.isFinite(p.runEtaSeconds)) return undefined;
  return Math.max(0, p.runEtaSeconds - (now - (p.runEtaAt ?? now)) / 1000);
}

/** A rollout group: the n rollouts one question got in one step. */
export interface RolloutGroup {
  key: string;
  question: string;
  gold: string;
  hops: number;
  iteration: number;
  step: number;
  rollouts: RolloutRecord[];
}

export function groupKey(r: { iteration: number; step: number; question: string }): string {
  return `${r.iteration}/${r.step}/${r.question}`;
}

/** Rollouts grouped by question, newest group first. */
export function groupRollouts(rollouts: readonly RolloutRecord[]): RolloutGroup[] {
  const groups = new Map<string, RolloutGroup>();
  for (const r of rollouts) {
    const key = groupKey(r);
    let g = groups.get(key);
    if (!g) {
      g = { key, question: r.question, gold: r.gold, hops: r.hops, iteration: r.iteration, step: r.step, rollouts: [] };
      groups.set(key, g);
    }
    g.rollouts.push(r);
  }
  return [...groups.values()].reverse();
}

/** The examiner record of the question a rollout answers (for the teacher's privileged context). */
export function questionFor(
  questions: readonly QuestionRecord[],
  r: Pick<RolloutRecord, 'question'>,
): QuestionRecord | undefined {
  for (let i = questions.length - 1; i >= 0; i--) if (questions[i]!.question === r.question) return questions[i];
  return undefined;
}
