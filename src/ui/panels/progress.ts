// The stage/step progress bar with time remaining.
import type { Stage } from '../../selfplay/events.ts';
import { fmtDuration, fmtIteration } from '../format.ts';
import { html, type Html } from '../html.ts';
import { etaSeconds, runEtaSeconds, type ProgressState } from '../state.ts';
import type { SelfPlayConfig } from '../../selfplay/config.ts';
import { runSecondsAt, runUnits } from '../../selfplay/run-estimate.ts';

/**
 * The whole-run estimate before a run: its units, and its time at `rate` (seconds per unit of work, measured by the
 * last run of the same model on this GPU) when there is one.
 */
export function beforeRunText(c: SelfPlayConfig, rate: number | undefined): string {
  const units = runUnits(c).length;
  return rate !== undefined && Number.isFinite(rate) && rate > 0
    ? `whole run: about ${fmtDuration(runSecondsAt(c, rate))} on this GPU (${units} units, at the pace of the last ` +
        'run of this model here)'
    : `whole run: ${units} units; the time left shows once the first has run`;
}

const STAGE_NAME: Record<Stage, string> = {
  load: 'loading',
  eval: 'held-out evaluation',
  examiner: 'examiner (HRPO)',
  generate: 'generating the student’s questions',
  student: 'student (GRPO + λ·distillation)',
  checkpoint: 'saving a checkpoint',
  pretrain: 'pre-training',
};

export type RunPhase = 'idle' | 'starting' | 'running' | 'paused' | 'stopping' | 'stopped' | 'finished' | 'failed';

export function renderProgress(
  p: ProgressState | null,
  phase: RunPhase,
  iterations: number | null,
  now = Date.now(),
  /** Before a run: what the setup's whole run will take (a sentence), shown beside the idle line. */
  before = '',
): Html {
  if (!p) {
    const text: Record<RunPhase, string> = {
      idle: 'Not running. Choose a model and a corpus, then Start.',
      starting: 'Starting…',
      running: 'Running…',
      paused: 'Paused.',
      stopping: 'Stopping…',
      stopped: 'Stopped.',
      finished: 'Finished.',
      failed: 'Failed.',
    };
    // The bar's place is kept, so nothing below moves when a run starts.
    return html`<div class="progress-line"><span class="phase ${phase}">${text[phase]}</span>${
      before && (phase === 'idle' || phase === 'starting')
        ? html` <span class="run-eta before" title="${before}">${before}</span>`
        : ''
    }</div><div class="bar-space" aria-hidden="true"></div>`;
  }
  const frac = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
  const eta = phase === 'running' ? etaSeconds(p, now) : undefined;
  const whole = phase === 'running' && p.stage !== 'pretrain' ? runEtaSeconds(p, now) : undefined;
  // A pretraining has steps only; iterations are self-play's.
  const it = p.stage === 'pretrain' ? '' : fmtIteration(p.iteration, iterations);
  return html`<div class="progress-line">
    <span class="phase ${phase}">${phase[0]!.toUpperCase() + phase.slice(1)}</span>
    <span class="stage">${STAGE_NAME[p.stage] ?? p.stage}</span>
    <span class="iter">${it}</span>
    <span class="count">${p.done} / ${p.total}${p.label ? html` · ${p.label}` : ''}</span>
    <span class="eta">${eta !== undefined ? html`≈ ${fmtDuration(eta)} left in this stage` : ''}</span>
    <span class="run-eta">${whole !== undefined ? html`whole run: about ${fmtDuration(whole)} to go` : ''}</span>
  </div>
  <div class="bar" role="progressbar" aria-label="stage progress" aria-valuemin="0" aria-valuemax="${p.total}"
    aria-valuenow="${p.done}">
    <div class="fill" style="width:${(frac * 100).toFixed(1)}%"></div></div>`;
}
