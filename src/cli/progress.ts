// Console output of a run: a progress bar (redrawn in place on a terminal) and one line per step.
import type { EvalMetrics, RunEvent, StepMetrics } from '../selfplay/events.ts';

export function formatTime(s: number): string {
  if (!Number.isFinite(s)) return '?';
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`
      : `${s.toFixed(0)}s`;
}

function num(v: number): string {
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : v.toPrecision(4);
}

/** `examiner it 0 step 3 | loss 0.0123 reward 0.41 ...` */
export function metricsLine(m: StepMetrics): string {
  const rest = Object.entries(m)
    .filter(([k]) => k !== 'stage' && k !== 'iteration' && k !== 'step')
    .map(([k, v]) => `${k} ${typeof v === 'number' ? num(v) : v}`);
  return `${m.stage} it ${m.iteration} step ${m.step} | ${rest.join(' ')}`;
}

export function evalLine(m: EvalMetrics, label?: string): string {
  const hops = Object.entries(m.emByHop)
    .map(([h, v]) => `${h}-hop ${(100 * v).toFixed(1)}%`)
    .join(' ');
  const when = label ?? (m.iteration < 0 ? 'before training' : `after iteration ${m.iteration + 1}`);
  return (
    `eval ${when} | EM ${(100 * m.em).toFixed(1)}% (${hops}) n ${m.n} searches/rollout ` +
    `${num(m.searchesPerRollout)} redundancy ${num(m.redundancy)}`
  );
}

/** Prints events: bars on stderr, metric and eval lines on stdout. */
export class ConsoleReporter {
  private barShown = false;
  private readonly tty = Boolean(process.stderr.isTTY);

  handle(ev: RunEvent): void {
    switch (ev.type) {
      case 'progress': {
        const width = 24;
        const frac = ev.total > 0 ? Math.min(1, ev.done / ev.total) : 1;
        const fill = Math.round(width * frac);
        const eta = ev.etaSeconds !== undefined ? ` eta ${formatTime(ev.etaSeconds)}` : '';
        const text =
          `[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${ev.stage} it ${ev.iteration} ` +
          `${ev.done}/${ev.total}${eta}${ev.label ? ` ${ev.label}` : ''}`;
        if (this.tty) {
          process.stderr.write(`\r\x1b[K${text}`);
          this.barShown = true;
        }
        return;
      }
      case 'metrics':
        this.line(metricsLine(ev.metrics));
        return;
      case 'eval':
        this.line(evalLine(ev.metrics));
        return;
      case 'checkpoint':
        return;
      case 'log':
        this.clearBar();
        console.error(`${ev.level}: ${ev.message}`);
        return;
      default:
        return;
    }
  }

  private clearBar(): void {
    if (this.barShown) process.stderr.write('\r\x1b[K');
    this.barShown = false;
  }

  private line(s: string): void {
    this.clearBar();
    console.log(s);
  }
}
