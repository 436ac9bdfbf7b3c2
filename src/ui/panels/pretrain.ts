// Pretrain tab: trains a tiny base model from generated text in the engine worker (the recipe of
// `npm run pretrain`, with its defaults), fresh or continuing an embedded or stored model. The form, Start
// and Stop, the loss curve (uPlot, as on the Charts tab) and, at the end, what was trained and where it
// was stored. Progress and time left show in the run panel's bar above, like a self-play run's.
import uPlot from 'uplot';
import {
  PRETRAIN_DEFAULTS,
  PRETRAIN_FIELDS,
  pretrainProblems,
  type PretrainKey,
  type PretrainSettings,
} from '../../pretrain/settings.ts';
import type { CheckpointMeta, JobKind, PretrainRequest, PretrainSummary, RunPhase } from '../../worker/protocol.ts';
import { fmtCount, fmtDuration, fmtNum } from '../format.ts';
import { html, type Html } from '../html.ts';
import { clearFieldErrors, showFieldErrors } from '../field-errors.ts';
import type { Series } from '../state.ts';
import { parseNumber } from '../../settings/schema.ts';
import { chartData, chartOptions, type ChartSpec } from './charts.ts';

const KEYS = Object.keys(PRETRAIN_FIELDS) as PretrainKey[];
const MAIN = KEYS.filter((k) => PRETRAIN_FIELDS[k].group === 'main');
const ADVANCED = KEYS.filter((k) => PRETRAIN_FIELDS[k].group === undefined);
const LOSS: ChartSpec = { id: 'pretrain-loss', title: 'Training loss', xLabel: 'step', series: [] };
/** The Charts tab's default smoothing. */
const SMOOTHING = 0.6;

export function renderPretrainField(key: PretrainKey, v: number): Html {
  const f = PRETRAIN_FIELDS[key];
  const id = `pt-${key}`;
  return html`<div class="field" data-key="${key}"><label for="${id}">${f.label}</label>
    <input id="${id}" name="${key}" type="number" step="any" inputmode="decimal" value="${String(v)}"
      aria-describedby="${id}-help ${id}-err" autocomplete="off">
    <small id="${id}-help" class="help">${f.help}</small><small id="${id}-err" class="field-error"
      aria-live="polite"></small></div>`;
}

/** The "start from" choices: a new model, the embedded models, the stored model entries. */
export function renderFromOptions(embedded: readonly string[], stored: readonly CheckpointMeta[], selected = ''): Html {
  const opt = (value: string, label: string) =>
    html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`;
  const models = stored.filter((c) => c.kind === 'model');
  return html`${opt('', 'a new model')}${
    embedded.length ? html`<optgroup label="embedded">${embedded.map((n) => opt(`embedded:${n}`, n))}</optgroup>` : ''
  }${models.length ? html`<optgroup label="stored in this browser">${models.map((c) => opt(`checkpoint:${c.name}`, c.name))}</optgroup>` : ''}`;
}

export function renderPretrainForm(embedded: readonly string[], d: PretrainSettings = PRETRAIN_DEFAULTS): Html {
  return html`<form class="setup pretrain-form" novalidate>
  <p class="muted intro">Trains a tiny base model from generated text (passages and tool-use transcripts of worlds other than
    the default one), as <code>npm run pretrain</code> does. The result is stored under Checkpoints as a model to start self-play from.</p>
  <fieldset><legend>Start from</legend>
    <div class="field"><label for="pt-from">model</label><select id="pt-from" class="pretrain-from"
      aria-describedby="pt-from-help">${renderFromOptions(embedded, [])}</select>
      <small id="pt-from-help"
        class="help">a new model gets a fresh tokenizer and weights; a model continued keeps its tokenizer and shape (give another seed for unseen text)</small></div>
  </fieldset>
  <fieldset><legend>Settings</legend>
    <div class="fields">${MAIN.map((k) => renderPretrainField(k, d[k]))}</div>
    <details><summary>advanced</summary><div class="fields">${ADVANCED.map((k) => renderPretrainField(k, d[k]))}</div></details>
    <div class="fields"><div class="field"><label for="pt-name">name</label><input id="pt-name" name="name" type="text"
      placeholder="pretrained-<date>" autocomplete="off" spellcheck="false" aria-describedby="pt-name-help">
      <small id="pt-name-help"
        class="help">the stored model’s name; a name already stored is refused, never replaced</small></div></div>
  </fieldset>
  <p class="form-error" aria-live="assertive"></p>
  <div class="controls"><button type="submit"
    class="primary pretrain-start">Start pretraining</button><button type="button" class="pretrain-stop"
      disabled>Stop</button></div>
</form>`;
}

/** The form's values as a request, or the problems per field. */
export function readPretrainForm(value: (key: PretrainKey | 'from' | 'name') => string): {
  request?: PretrainRequest;
  errors: Map<PretrainKey, string>;
} {
  const s = {} as Record<PretrainKey, number>;
  for (const k of KEYS) {
    s[k] = parseNumber(value(k).trim());
  }
  const errors = pretrainProblems(s);
  if (errors.size) return { errors };
  const from = value('from');
  const name = value('name').trim();
  const request: PretrainRequest = { ...s };
  if (from.startsWith('embedded:')) request.from = { kind: 'embedded', name: from.slice(9) };
  else if (from.startsWith('checkpoint:')) request.from = { kind: 'checkpoint', name: from.slice(11) };
  if (name) request.name = name;
  return { request, errors };
}

export function renderPretrainSummary(sum: PretrainSummary, saved: string | null): Html {
  const rate = sum.tokens / Math.max(sum.seconds, 1e-9);
  const rows: [string, Html | string][] = [
    ['model', `hidden ${sum.hidden} × ${sum.layers} layers, vocabulary ${sum.vocab}`],
    ['parameters', fmtCount(sum.params)],
    ['tokens seen', `${fmtCount(sum.tokens)} (${fmtCount(sum.targets)} loss targets) in ${sum.steps} steps`],
    ['wall time', `${fmtDuration(sum.seconds)} (${fmtCount(rate)} tokens/s) on ${sum.device}`],
    [
      'final loss',
      html`<strong>${fmtNum(sum.finalLoss)}</strong> (mean of the last logs ${fmtNum(sum.tailLoss)}; first ${fmtNum(sum.firstLoss)})`,
    ],
    ['started from', sum.from ?? 'a new model'],
  ];
  return html`<div class="${saved ? 'estimate good' : 'estimate bad'} pretrain-done">
    <p>${saved ? html`<strong>Stored as <code>${saved}</code></strong> under Checkpoints.` : html`<strong>Not stored</strong>: saving to this browser failed (see the message above).`}</p>
    <table class="breakdown"><tbody>${rows.map(([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`)}</tbody></table>
    <div class="controls">${
      saved
        ? html`<button type="button" class="small primary"
      data-act="use">Use as the base model</button>`
        : html`<button type="button" class="small"
        data-act="download">Download zip</button>`
    }</div>
  </div>`;
}

/** Start needs no job under way; Stop applies to a pretraining only. */
export function pretrainControlState(phase: RunPhase, job: JobKind): { start: boolean; stop: boolean } {
  const idle = phase === 'idle' || phase === 'stopped' || phase === 'finished' || phase === 'failed';
  return { start: idle, stop: job === 'pretrain' && (phase === 'starting' || phase === 'running') };
}

export interface PretrainActions {
  start(req: PretrainRequest): Promise<{ ok: boolean; error?: string }>;
  stop(): void;
  /** Picks a stored model as the base model of a self-play run. */
  use(name: string): void;
  /** The trained model that could not be stored, as a zip. */
  downloadUnsaved(): Promise<{ fileName: string; blob: Blob } | null>;
}

export class PretrainPanel {
  private form: HTMLFormElement;
  private chartEl: HTMLElement;
  private summaryEl: HTMLElement;
  private chart: uPlot | null = null;
  private points = 0;
  private embedded: readonly string[];

  constructor(
    private root: HTMLElement,
    private actions: PretrainActions,
    embedded: readonly string[],
  ) {
    this.embedded = embedded;
    root.innerHTML = html`<h3 class="sr-only">Pretrain a base model</h3><div class="pretrain">
      ${renderPretrainForm(embedded)}
      <div class="pretrain-out">
        <figure class="chart pretrain-chart" data-chart="pretrain-loss"><figcaption>Training loss</figcaption>
          <p class="empty">No pretraining yet. Its loss appears here as it trains.</p></figure>
        <div class="pretrain-summary" aria-live="polite"></div>
      </div></div>`.text;
    this.form = root.querySelector('form')!;
    this.chartEl = root.querySelector('.pretrain-chart')!;
    this.summaryEl = root.querySelector('.pretrain-summary')!;
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.onStart();
    });
    root.querySelector('.pretrain-stop')!.addEventListener('click', () => this.actions.stop());
    root.querySelector('.pretrain-from')!.addEventListener('change', () => this.lockShape());
    this.summaryEl.addEventListener('click', (e) => {
      const act = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
      const name = this.summaryEl.dataset.saved;
      if (act === 'use' && name) this.actions.use(name);
      if (act === 'download') void this.download();
    });
    if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => this.fit()).observe(this.chartEl);
  }

  private field(key: string): HTMLInputElement | HTMLSelectElement | null {
    return this.form.elements.namedItem(key) as HTMLInputElement | HTMLSelectElement | null;
  }

  /** Keeps the "start from" list in step with the stored models. */
  setStored(list: readonly CheckpointMeta[]): void {
    const sel = this.root.querySelector<HTMLSelectElement>('.pretrain-from')!;
    const keep = sel.value;
    sel.innerHTML = renderFromOptions(this.embedded, list, keep).text;
    if (sel.value !== keep) this.lockShape();
  }

  /** A continued model's config decides its shape: those fields do not apply then. */
  private lockShape(): void {
    const continuing = this.root.querySelector<HTMLSelectElement>('.pretrain-from')!.value !== '';
    for (const k of KEYS) if (PRETRAIN_FIELDS[k].shape) (this.field(k) as HTMLInputElement).disabled = continuing;
  }

  private async onStart(): Promise<void> {
    clearFieldErrors(this.form);
    this.error('');
    // Fields a continued model ignores keep their defaults (a disabled field may hold anything).
    const { request, errors } = readPretrainForm((k) => {
      const el = this.field(k);
      if (!el) return '';
      return el.disabled && k in PRETRAIN_DEFAULTS ? String(PRETRAIN_DEFAULTS[k as PretrainKey]) : el.value;
    });
    if (!request) {
      const first = showFieldErrors(this.form, errors);
      this.error(`Please fix ${errors.size} setting${errors.size === 1 ? '' : 's'}: ${[...errors.values()][0]}`);
      first?.focus();
      return;
    }
    this.reset();
    const r = await this.actions.start(request);
    if (!r.ok) this.error(r.error ?? 'the pretraining could not start');
  }

  private error(text: string): void {
    this.root.querySelector('.form-error')!.textContent = text;
  }

  /** Clears the curve and the summary (a new pretraining starts). */
  reset(): void {
    this.chart?.destroy();
    this.chart = null;
    this.points = 0;
    this.chartEl.querySelector('.empty')?.remove();
    this.summaryEl.innerHTML = '';
    delete this.summaryEl.dataset.saved;
  }

  setPhase(phase: RunPhase, job: JobKind): void {
    const s = pretrainControlState(phase, job);
    this.root.querySelector<HTMLButtonElement>('.pretrain-start')!.disabled = !s.start;
    this.root.querySelector<HTMLButtonElement>('.pretrain-stop')!.disabled = !s.stop;
    for (const fs of this.form.querySelectorAll('fieldset')) (fs as HTMLFieldSetElement).disabled = !s.start;
    this.form.classList.toggle('locked', !s.start);
  }

  /** Draws the loss curve against the training step. */
  render(loss: Series | undefined): void {
    if (!loss || loss.y.length === 0 || loss.y.length === this.points) return;
    this.points = loss.y.length;
    this.chartEl.querySelector('.empty')?.remove();
    const data = chartData(
      loss.at.map((a) => a.step),
      [loss.y],
      SMOOTHING,
    );
    if (this.chart) this.chart.setData(data);
    else this.chart = new uPlot(chartOptions(LOSS, ['loss'], this.size()), data, this.chartEl);
    this.chartEl.dataset.points = String(this.points);
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(240, this.chartEl.clientWidth - 10), height: 200 };
  }

  private fit(): void {
    if (this.chart && this.chartEl.clientWidth) this.chart.setSize(this.size());
  }

  showSummary(sum: PretrainSummary, saved: string | null): void {
    this.summaryEl.innerHTML = renderPretrainSummary(sum, saved).text;
    if (saved) this.summaryEl.dataset.saved = saved;
  }

  private async download(): Promise<void> {
    const z = await this.actions.downloadUnsaved();
    if (!z) return;
    const a = document.createElement('a');
    a.href = URL.createObjectURL(z.blob);
    a.download = z.fileName;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
  }
}
