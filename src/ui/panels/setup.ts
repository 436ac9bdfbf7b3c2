// Setup panel: the model (embedded default, a random tiny model, a folder from disk, a Hugging Face id or a
// stored checkpoint) with its memory estimate against the GPU's limits before anything is allocated, the
// corpus (the default world or an uploaded JSONL file), the run settings with the paper's defaults and the
// ablation switches, and Start / Pause / Resume / Stop / Save. Fields are generated from the self-play
// config's option table, so they carry the same names and help as the command line.
import {
  type ConfigError,
  type PageGroup,
  SETTINGS,
  PRESETS,
  PRESET_HELP,
  parseOptionValue,
  type Setting,
  validateConfig,
  valueText,
  type PresetName,
  type SelfPlayConfig,
} from '../../selfplay/config.ts';
import type {
  CorpusReport,
  DownloadProgress,
  JobKind,
  ModelReport,
  ModelSource,
  RunPhase,
} from '../../worker/protocol.ts';
import { fmtBytes, fmtCount } from '../format.ts';
import { cls, html, type Html } from '../html.ts';
import { clearFieldErrors, showFieldErrors } from '../field-errors.ts';
import { settingsFromQuery, settingsToQuery } from '../url-settings.ts';
import { DEFAULT_HUB } from '../../worker/hub.ts';

/** The page-address parameter of the hub address (the model's other choices are not carried). */
const HUB_PARAM = 'hub';

type Key = keyof SelfPlayConfig;

/** The settings of one of the page's groups (SETTINGS' `group`), in the table's order. */
const inGroup = (g: PageGroup | undefined): Key[] => (Object.keys(SETTINGS) as Key[]).filter((k) => pageGroup(k) === g);
const pageGroup = (k: Key): PageGroup | undefined => (SETTINGS[k] as Setting).group;

export const MAIN_FIELDS = inGroup('main');
export const TINY_FIELDS = inGroup('tiny');
export const CORPUS_FIELDS = inGroup('corpus');
/** The rest, under "advanced settings" (settings set by the page's pickers are not fields). */
export const ADVANCED_FIELDS = inGroup(undefined);

export function renderField(key: Key, v: SelfPlayConfig[Key]): Html {
  const spec: Setting = SETTINGS[key];
  const id = `opt-${spec.flag}`;
  const label = spec.label ?? spec.flag.replace(/-/g, ' ');
  const help = html`<small id="${id}-help" class="help">${spec.help}</small><small id="${id}-err" class="field-error"
    aria-live="polite"></small>`;
  const described = `${id}-help ${id}-err`;
  const k = spec.kind;
  let input: Html;
  if (k.t === 'bool') {
    input = html`<input type="checkbox" id="${id}" name="${key}"
      aria-describedby="${described}"${v ? html` checked` : ''}>`;
  } else if (k.t === 'enum') {
    input = html`<select id="${id}" name="${key}" aria-describedby="${described}">${k.values.map(
      (o) =>
        html`<option value="${o}"${o === v ? html` selected` : ''}>${o}${spec.notes?.[o] ? ` — ${spec.notes[o]}` : ''}</option>`,
    )}</select>`;
  } else {
    const numeric = k.t === 'int' || k.t === 'number';
    input = html`<input id="${id}" name="${key}"
      ${numeric ? html`type="number" step="any" inputmode="decimal"` : html`type="text"`} value="${valueText(v)}"
        aria-describedby="${described}" autocomplete="off">`;
  }
  const extra = spec.suggestions
    ? html`<span class="quick" role="group" aria-label="${label} presets">${spec.suggestions.map(
        (p) =>
          html`<button type="button" class="small suggestion" data-value="${p.value}"
              title="${p.note}">${p.label}</button>`,
      )}</span>`
    : '';
  return html`<div class="${cls('field', k.t === 'bool' && 'check')}"
    data-key="${key}"><label for="${id}">${label}</label>${input}${extra}${help}</div>`;
}

/** Reads every setting from the form's fields; returns the config or the problems per field. */
export function readSettings(
  values: (key: Key) => string | boolean | undefined,
  base: SelfPlayConfig,
): { config?: SelfPlayConfig; errors: Map<Key | '*', string> } {
  const errors = new Map<Key | '*', string>();
  const c = { ...base } as Record<Key, unknown>;
  for (const key of Object.keys(SETTINGS) as Key[]) {
    const raw = values(key);
    if (raw === undefined) continue;
    try {
      c[key] = parseOptionValue(key, typeof raw === 'boolean' ? (raw ? 'on' : 'off') : raw.trim());
    } catch (e) {
      errors.set(key, (e as Error).message);
    }
  }
  if (errors.size) return { errors };
  try {
    return { config: validateConfig(c as unknown as SelfPlayConfig), errors };
  } catch (e) {
    errors.set(((e as ConfigError).key as Key | undefined) ?? '*', (e as Error).message);
    return { errors };
  }
}

export function renderEstimate(r: ModelReport | null, busy = false): Html {
  if (busy) return html`<p class="muted">Reading config.json…</p>`;
  if (!r) return html``;
  if (!r.ok || !r.memory) {
    const title: Record<string, string> = {
      'too-large': 'Too large for this GPU',
      'bad-id': 'Not a usable Hugging Face model',
      network: 'Hugging Face could not be reached',
      missing: 'Files are missing',
    };
    return html`<div class="estimate bad"><strong>${title[r.errorKind ?? ''] ?? 'Cannot use this model'}</strong><p>${r.error ?? 'unknown problem'}</p></div>`;
  }
  const m = r.memory;
  const lines = m.breakdown.map((l) => html`<tr><td>${l.label}</td><td class="num">${fmtBytes(l.bytes)}</td></tr>`);
  return html`<div class="${cls('estimate', m.fits ? (m.warnings.length ? 'warn' : 'good') : 'bad')}">
    <p><strong>${m.arch}</strong> · ${fmtCount(m.params)} parameters · ${m.layers} layers · width ${m.hidden} · vocabulary ${fmtCount(m.vocab)}
      · weights ${fmtBytes(m.weightBytes)} (f32)${renderDownloadSize(r)}</p>
    <details><summary>≈ ${fmtBytes(m.totalBytes)} of GPU memory for a run (estimate) · largest buffer ${fmtBytes(m.largestTensorBytes)} of ${fmtBytes(m.maxBinding)} allowed</summary>
      <table class="breakdown"><tbody>${lines}</tbody></table></details>
    ${m.problems.map((p) => html`<p class="problem">${p}</p>`)}${m.warnings.map((w) => html`<p class="warning">${w}</p>`)}
  </div>`;
}

/** The hub download's size, known before Start: all of it, part of it (the rest cached), or none (all cached). */
export function renderDownloadSize(r: ModelReport): Html {
  if (r.downloadBytes === undefined) return html``;
  const total = r.totalBytes ?? r.downloadBytes;
  const size = (text: string) => html` · <span class="download-size">${text}</span>`;
  if (r.cached) return size(`download none: ${fmtBytes(total)} in this browser's cache`);
  const part = total > r.downloadBytes ? ` of ${fmtBytes(total)} (the rest is cached)` : '';
  return size(`download ${fmtBytes(r.downloadBytes)}${part}`);
}

export function renderDownload(p: DownloadProgress | null): Html {
  if (!p) return html``;
  const pct = p.total > 0 ? Math.min(100, (100 * p.loaded) / p.total) : 0;
  return html`<div class="download"><label>${p.fromCache ? 'from the browser cache' : 'downloading'} ${p.file}
    <progress max="100"
      value="${pct.toFixed(1)}"></progress></label> <span class="muted">${fmtBytes(p.loaded)} / ${fmtBytes(p.total)}</span></div>`;
}

export function renderCorpusStatus(r: CorpusReport | null): Html {
  if (!r) return html``;
  if (!r.ok)
    return html`<div class="estimate bad"><strong>This corpus file has errors</strong><p><code>${r.error ?? ''}</code></p><p class="muted">Each line must be a JSON object with non-empty string fields "id", "title" and "text"; ids must be unique.</p></div>`;
  return html`<p class="estimate good">${r.passages} passages${r.sample?.length ? html` · e.g. ${r.sample.join(' · ')}` : ''}</p>`;
}

export interface SetupActions {
  inspectModel(src: ModelSource, config: SelfPlayConfig): Promise<ModelReport>;
  checkCorpus(name: string, text: string): Promise<CorpusReport>;
  start(
    config: SelfPlayConfig,
    model: ModelSource,
    corpus: { kind: 'world' } | { kind: 'jsonl'; name: string; text: string },
  ): void;
  pause(): void;
  resume(): void;
  stop(): void;
  save(): void;
  /** A setting changed (the page updates the whole-run estimate). */
  changed?(): void;
}

/** Which buttons are usable in each phase of a job (a pretraining only stops: it has no checkpoints to pause at). */
export function controlState(
  phase: RunPhase,
  job: JobKind = 'selfplay',
): Record<'start' | 'pause' | 'resume' | 'stop' | 'save', boolean> {
  const running = phase === 'running';
  const run = job === 'selfplay';
  return {
    start: phase === 'idle' || phase === 'stopped' || phase === 'finished' || phase === 'failed',
    pause: run && running,
    resume: run && phase === 'paused',
    stop: running || phase === 'paused' || phase === 'starting',
    save: run && (running || phase === 'paused'),
  };
}

/** Which model a source names (equal keys: the same model), for matching a memory report to the form. */
export function modelKey(m: ModelSource): string {
  switch (m.kind) {
    case 'embedded':
    case 'checkpoint':
      return `${m.kind}:${m.name}`;
    case 'hub':
      return `hub:${m.id.trim()}${m.revision ? `@${m.revision}` : ''}${m.endpoint ? ` from ${m.endpoint}` : ''}`;
    case 'files':
      return `files:${m.files.map((f) => `${f.webkitRelativePath || f.name}/${f.size}/${f.lastModified}`).join('|')}`;
    case 'random-tiny':
      return m.kind;
  }
}

export class SetupPanel {
  private form: HTMLFormElement;
  private preset: PresetName = 'demo';
  private model: ModelSource = { kind: 'random-tiny' };
  private corpus: { kind: 'world' } | { kind: 'jsonl'; name: string; text: string } = { kind: 'world' };
  private corpusOk = true;
  private report: ModelReport | null = null;
  /** The model the report is about (modelKey), so Start never trusts a report of another model. */
  private reportKey = '';
  private inspectSeq = 0;
  private typing: ReturnType<typeof setTimeout> | undefined;
  private phase: RunPhase = 'idle';

  private controls: HTMLElement;

  constructor(
    private root: HTMLElement,
    controls: HTMLElement,
    private actions: SetupActions,
    embedded: string[],
  ) {
    const c = PRESETS[this.preset];
    const group = (keys: Key[]) => keys.map((k) => renderField(k, c[k]));
    const hubExamples = ['HuggingFaceTB/SmolLM2-135M-Instruct', 'Qwen/Qwen2.5-0.5B-Instruct', 'Qwen/Qwen3-0.6B'];
    // The preset and Start come first (in the first screen on a phone); the details follow, the rarely changed folded.
    root.innerHTML = html`<form class="setup" id="setup-form" novalidate>
  <fieldset class="quick-start">
    <legend>Run</legend>
    <div class="field"><label for="preset">preset</label><select id="preset" class="preset"
      aria-describedby="preset-help">${(Object.keys(PRESETS) as PresetName[]).map(
        (p) => html`<option value="${p}"${p === this.preset ? html` selected` : ''}>${p}</option>`,
      )}</select><small id="preset-help" class="help">${(Object.keys(PRESETS) as PresetName[])
        .reverse()
        .map((p) => `${p}: ${PRESET_HELP[p]}`)
        .join(' · ')}</small></div>
    <div class="start-row"><button type="submit" class="primary start-top">Start</button>
      <small class="muted">with the model, corpus and settings below</small></div>
    <p class="form-error" aria-live="assertive"></p>
  </fieldset>
  <fieldset class="model-source">
    <legend>Model</legend>
    ${
      embedded.length
        ? html`<div class="choice"><input type="radio" id="mk-embedded" name="model-kind" value="embedded"
          checked><label for="mk-embedded">embedded default</label>
      <select class="embedded-name"
        aria-label="embedded model">${embedded.map((n) => html`<option>${n}</option>`)}</select></div>`
        : ''
    }
    <div class="choice"><input type="radio" id="mk-tiny" name="model-kind"
      value="random-tiny"${embedded.length ? '' : html` checked`}><label for="mk-tiny">new random tiny model</label>
      <small class="help">a tiny Llama initialised from the seed, its tokenizer trained on the corpus</small></div>
    <div class="choice"><input type="radio" id="mk-files" name="model-kind"
      value="files"><label for="mk-files">model folder from disk</label>
      <input type="file" class="model-folder" webkitdirectory multiple
        aria-label="model folder (config.json, *.safetensors, tokenizer files)"></div>
    <div class="choice"><input type="radio" id="mk-hub" name="model-kind"
      value="hub"><label for="mk-hub">Hugging Face model id</label>
      <input type="text" class="hub-id" list="hub-examples" placeholder="HuggingFaceTB/SmolLM2-135M-Instruct"
        autocomplete="off" spellcheck="false" aria-label="Hugging Face model id">
      <button type="button" class="small hub-check">check</button>
      <details class="hub-address"><summary>hub address</summary><input type="url" class="hub-endpoint"
        placeholder="${DEFAULT_HUB}" autocomplete="off" spellcheck="false" aria-label="hub address">
        <small class="help">a server with the Hugging Face URL layout (a mirror); empty for ${DEFAULT_HUB}; in the page's address as ?hub=</small></details></div>
    <div class="choice checkpoint-choice" hidden><input type="radio" id="mk-ckpt" name="model-kind"
      value="checkpoint"><label for="mk-ckpt">checkpoint</label> <code class="ckpt-name"></code></div>
    <datalist id="hub-examples">${hubExamples.map((x) => html`<option value="${x}"></option>`)}</datalist>
    <div class="model-estimate" aria-live="polite"></div>
    <div class="model-download" aria-live="polite"></div>
    <details class="tiny-fields"><summary>random tiny model shape</summary><div class="fields">${group(TINY_FIELDS)}</div></details>
  </fieldset>
  <fieldset class="corpus-source">
    <legend>Corpus</legend>
    <div class="choice"><input type="radio" id="ck-world" name="corpus-kind" value="world"
      checked><label for="ck-world">default fictional world</label></div>
    <div class="choice"><input type="radio" id="ck-jsonl" name="corpus-kind"
      value="jsonl"><label for="ck-jsonl">upload JSONL</label>
      <input type="file" class="corpus-file" accept=".jsonl,.json,.txt,application/jsonl"
        aria-label="corpus JSONL file"></div>
    <div class="corpus-status" aria-live="polite"></div>
    <details class="corpus-fields"><summary>world and evaluation settings</summary><div class="fields">${group(CORPUS_FIELDS)}</div></details>
  </fieldset>
  <fieldset class="algorithm">
    <legend>π-Play settings</legend>
    <div class="fields">${group(MAIN_FIELDS)}</div>
    <details><summary>advanced settings</summary><div class="fields">${group(ADVANCED_FIELDS)}</div></details>
  </fieldset>
</form>`.text;
    // Run controls live beside the progress bar (always in view); Start submits the setup form.
    controls.innerHTML = html`<div class="controls" role="group" aria-label="run controls">
    <button type="submit" form="setup-form" class="primary start">Start</button>
    <button type="button" class="pause" disabled>Pause</button>
    <button type="button" class="resume" disabled>Resume</button>
    <button type="button" class="stop" disabled>Stop</button>
    <button type="button" class="save" disabled>Save checkpoint now</button>
  </div><p class="form-error run-error" aria-live="assertive"></p>`.text;
    this.controls = controls;
    this.form = root.querySelector('form')!;
    if (embedded.length) this.model = { kind: 'embedded', name: embedded[0]! };
    this.bind();
    this.setPhase('idle');
    this.fromAddress();
    void this.inspect();
  }

  /** A link's setup (?preset=...&flag=value): applied to the form; what cannot be used is said beside Start. */
  private fromAddress(): void {
    if (typeof location === 'undefined' || !location.search) return;
    const params = new URLSearchParams(location.search);
    const hub = params.get(HUB_PARAM);
    if (hub !== null) this.$<HTMLInputElement>('.hub-endpoint').value = hub;
    params.delete(HUB_PARAM);
    const q = settingsFromQuery(params.toString());
    if (q.preset) {
      this.preset = q.preset;
      this.$<HTMLSelectElement>('.preset').value = q.preset;
      this.fill(PRESETS[q.preset]);
    }
    for (const [key, v] of Object.entries(q.values) as [Key, string][]) {
      const el = this.form.elements.namedItem(key) as HTMLInputElement | HTMLSelectElement | null;
      if (!el) continue;
      if (el instanceof HTMLInputElement && el.type === 'checkbox') el.checked = v === 'on';
      else el.value = v;
    }
    if (q.problems.length) this.formError(`Not taken from the page's address: ${q.problems.join('; ')}`);
  }

  /** Keeps the address in step with the form, so a copied link reproduces this setup. */
  private toAddress(): void {
    if (typeof history === 'undefined') return;
    this.actions.changed?.();
    const config = this.currentConfig();
    if (!config) return;
    const hub = this.hubEndpoint();
    const hubQuery = hub ? `&${new URLSearchParams({ [HUB_PARAM]: hub })}` : '';
    history.replaceState(
      history.state,
      '',
      `${location.pathname}?${settingsToQuery(this.preset, config)}${hubQuery}${location.hash}`,
    );
  }

  private $<T extends Element = HTMLElement>(sel: string): T {
    return this.root.querySelector<T>(sel)!;
  }

  private bind(): void {
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.onStart();
    });
    const c = (sel: string) => this.controls.querySelector<HTMLButtonElement>(sel)!;
    c('.pause').addEventListener('click', () => this.actions.pause());
    c('.resume').addEventListener('click', () => this.actions.resume());
    c('.stop').addEventListener('click', () => this.actions.stop());
    c('.save').addEventListener('click', () => this.actions.save());
    this.$<HTMLSelectElement>('.preset').addEventListener('change', (e) =>
      this.applyPreset((e.target as HTMLSelectElement).value as PresetName),
    );
    for (const b of this.root.querySelectorAll<HTMLButtonElement>('.suggestion')) {
      b.addEventListener('click', () => {
        const key = b.closest<HTMLElement>('.field')!.dataset.key!;
        this.$<HTMLInputElement>(`[name=${key}]`).value = b.dataset.value!;
        // No distillation at all is Dr. Zero: no teacher either.
        if (key === 'lambda' && b.dataset.value === '0') this.$<HTMLSelectElement>('[name=privileged]').value = 'none';
        this.toAddress();
      });
    }
    for (const r of this.root.querySelectorAll<HTMLInputElement>('input[name=model-kind]'))
      r.addEventListener('change', () => this.onModelKind());
    this.$('.embedded-name')?.addEventListener('change', () => this.onModelKind());
    this.$<HTMLInputElement>('.model-folder').addEventListener('change', () => {
      this.check('files');
      this.onModelKind();
    });
    this.$('.hub-check').addEventListener('click', () => {
      this.check('hub');
      this.onModelKind();
    });
    this.$<HTMLInputElement>('.hub-id').addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.check('hub');
        this.onModelKind();
      }
    });
    this.$<HTMLInputElement>('.hub-id').addEventListener('focus', () => this.check('hub'));
    this.$<HTMLInputElement>('.hub-endpoint').addEventListener('change', () => {
      this.check('hub');
      this.onModelKind();
    });
    // A typed id is the model (no "check" needed); it is inspected once the typing pauses.
    this.$<HTMLInputElement>('.hub-id').addEventListener('input', () => {
      this.check('hub');
      clearTimeout(this.typing);
      this.typing = setTimeout(() => this.onModelKind(), 600);
    });
    for (const r of this.root.querySelectorAll<HTMLInputElement>('input[name=corpus-kind]'))
      r.addEventListener('change', () => void this.onCorpus());
    this.$<HTMLInputElement>('.corpus-file').addEventListener('change', () => {
      this.check('jsonl', 'corpus-kind');
      void this.onCorpus();
    });
    // Settings that change the memory estimate; every setting goes into the address.
    this.form.addEventListener('change', (e) => {
      const name = (e.target as HTMLInputElement).name;
      if (name && name in SETTINGS && name !== 'model') void this.inspect();
      this.toAddress();
    });
  }

  private check(value: string, group = 'model-kind'): void {
    const r = this.root.querySelector<HTMLInputElement>(`input[name=${group}][value=${value}]`);
    if (r) r.checked = true;
  }

  /** The model the form's choice names now (a folder choice without files: the problem instead). */
  private readModel(): ModelSource | ModelReport {
    const kind = this.root.querySelector<HTMLInputElement>('input[name=model-kind]:checked')?.value;
    if (kind === 'embedded') return { kind: 'embedded', name: this.$<HTMLSelectElement>('.embedded-name').value };
    if (kind === 'files') {
      const files = [...(this.$<HTMLInputElement>('.model-folder').files ?? [])];
      if (files.length === 0) {
        return {
          ok: false,
          where: 'the model folder',
          error: 'Choose a model folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json).',
        };
      }
      return { kind: 'files', files };
    }
    if (kind === 'hub') {
      const endpoint = this.hubEndpoint();
      return { kind: 'hub', id: this.$<HTMLInputElement>('.hub-id').value.trim(), ...(endpoint ? { endpoint } : {}) };
    }
    if (kind === 'checkpoint' && this.model.kind === 'checkpoint') return this.model;
    return { kind: 'random-tiny' };
  }

  /** The hub address typed, or '' for the default hub. */
  private hubEndpoint(): string {
    const v = this.$<HTMLInputElement>('.hub-endpoint').value.trim().replace(/\/+$/, '');
    return v === DEFAULT_HUB ? '' : v;
  }

  private onModelKind(): void {
    clearTimeout(this.typing);
    const m = this.readModel();
    if ('ok' in m) {
      this.showReport(m);
      return;
    }
    this.model = m;
    void this.inspect();
  }

  /** Chooses a stored checkpoint as the base model (from the checkpoints panel). */
  useCheckpoint(name: string): void {
    this.model = { kind: 'checkpoint', name };
    const row = this.$('.checkpoint-choice');
    row.hidden = false;
    row.querySelector('.ckpt-name')!.textContent = name;
    this.check('checkpoint');
    void this.inspect();
  }

  private async inspect(): Promise<void> {
    if (this.model.kind === 'hub' && !this.model.id) {
      this.showReport(null);
      return;
    }
    const seq = ++this.inspectSeq;
    const key = modelKey(this.model);
    const cfg = this.currentConfig() ?? PRESETS[this.preset];
    this.$('.model-estimate').innerHTML = renderEstimate(null, true).text;
    try {
      const r = await this.actions.inspectModel(this.model, cfg);
      if (seq === this.inspectSeq) this.showReport(r, key);
    } catch (e) {
      if (seq === this.inspectSeq) this.showReport({ ok: false, where: '', error: (e as Error).message }, key);
    }
  }

  private showReport(r: ModelReport | null, key = ''): void {
    this.report = r;
    this.reportKey = key;
    this.$('.model-estimate').innerHTML = renderEstimate(r).text;
  }

  showDownload(p: DownloadProgress | null): void {
    this.$('.model-download').innerHTML = renderDownload(p).text;
  }

  private async onCorpus(): Promise<void> {
    const kind = this.root.querySelector<HTMLInputElement>('input[name=corpus-kind]:checked')?.value;
    const status = this.$('.corpus-status');
    if (kind !== 'jsonl') {
      this.corpus = { kind: 'world' };
      this.corpusOk = true;
      status.innerHTML = '';
      return;
    }
    const file = this.$<HTMLInputElement>('.corpus-file').files?.[0];
    if (!file) {
      this.corpusOk = false;
      status.innerHTML =
        html`<p class="muted">Choose a JSONL file: one {"id", "title", "text"} object per line.</p>`.text;
      return;
    }
    const text = await file.text();
    const r = await this.actions.checkCorpus(file.name, text);
    this.corpusOk = r.ok;
    if (r.ok) this.corpus = { kind: 'jsonl', name: file.name, text };
    status.innerHTML = renderCorpusStatus(r).text;
  }

  private applyPreset(p: PresetName): void {
    this.preset = p;
    this.fill(PRESETS[p]);
    this.clearErrors();
    this.toAddress();
    void this.inspect();
  }

  /** Puts every setting of a config in the form. */
  private fill(c: SelfPlayConfig): void {
    for (const key of Object.keys(SETTINGS) as Key[]) {
      const el = this.form.elements.namedItem(key) as HTMLInputElement | HTMLSelectElement | null;
      if (!el) continue;
      if (el instanceof HTMLInputElement && el.type === 'checkbox') el.checked = Boolean(c[key]);
      else el.value = valueText(c[key]);
    }
  }

  private clearErrors(): void {
    clearFieldErrors(this.root);
    this.formError('');
  }

  /** A problem that keeps the run from starting, shown in the form and beside the Start button. */
  private formError(text: string): void {
    this.$('.form-error').textContent = text;
    const line = this.controls.querySelector<HTMLElement>('.run-error')!;
    line.textContent = text;
    line.title = text;
  }

  private currentConfig(): SelfPlayConfig | null {
    const { config } = this.read();
    return config ?? null;
  }

  private read(): ReturnType<typeof readSettings> {
    const base = { ...PRESETS[this.preset], model: 'random-tiny', corpus: 'world' };
    return readSettings((key) => {
      const el = this.form.elements.namedItem(key) as HTMLInputElement | HTMLSelectElement | null;
      if (!el) return undefined;
      return el instanceof HTMLInputElement && el.type === 'checkbox' ? el.checked : el.value;
    }, base);
  }

  private async onStart(): Promise<void> {
    this.clearErrors();
    const { config, errors } = this.read();
    if (!config) {
      // '*' is a problem of the whole form, shown beside the Start button.
      const first = showFieldErrors(
        this.root,
        [...errors].filter(([key]) => key !== '*'),
      );
      this.formError(
        errors.get('*') ??
          `Please fix ${errors.size} setting${errors.size === 1 ? '' : 's'}: ${[...errors.values()][0]}`,
      );
      first?.focus();
      return;
    }
    if (!this.corpusOk) {
      this.formError('The corpus file has errors (see the Corpus section); fix it or use the default world.');
      return;
    }
    // The model the form names now, checked now if the last report was about another one (an id typed or
    // edited since).
    const model = this.readModel();
    if ('ok' in model) {
      this.showReport(model);
      this.formError(`The model cannot be used: ${model.error ?? ''}`);
      return;
    }
    if (model.kind === 'hub' && !model.id) {
      this.formError(
        'Enter a Hugging Face model id such as HuggingFaceTB/SmolLM2-135M-Instruct, or choose another model.',
      );
      return;
    }
    this.model = model;
    if (modelKey(model) !== this.reportKey) {
      clearTimeout(this.typing);
      await this.inspect();
      if (modelKey(model) !== this.reportKey) return;
    }
    if (this.report && !this.report.ok) {
      this.formError(`The model cannot be used: ${this.report.error ?? ''}`);
      return;
    }
    if (this.report?.memory && !this.report.memory.fits) {
      this.formError(this.report.memory.problems[0] ?? 'The model does not fit this GPU.');
      return;
    }
    this.actions.start(config, this.model, this.corpus);
  }

  setPhase(phase: RunPhase, job: JobKind = 'selfplay'): void {
    this.phase = phase;
    const s = controlState(phase, job);
    for (const [k, on] of Object.entries(s))
      this.controls.querySelector<HTMLButtonElement>(`.controls .${k}`)!.disabled = !on;
    this.$<HTMLButtonElement>('.start-top').disabled = !s.start;
    // Settings are fixed while a run is active.
    const locked = !s.start;
    for (const fs of this.root.querySelectorAll('fieldset')) (fs as HTMLFieldSetElement).disabled = locked;
    this.root.classList.toggle('locked', locked);
  }

  /** The settings and the model the form names now, for the whole-run estimate (null while a setting is bad). */
  planned(): { config: SelfPlayConfig; model: string } | null {
    const config = this.currentConfig();
    const m = this.readModel();
    return config && !('ok' in m) ? { config, model: modelKey(m) } : null;
  }

  get runPhase(): RunPhase {
    return this.phase;
  }

  /** The privileged mode currently chosen (the heatmap explains what the teacher saw). */
  get privileged(): SelfPlayConfig['privileged'] {
    return (this.form.elements.namedItem('privileged') as HTMLSelectElement).value as SelfPlayConfig['privileged'];
  }

  /** Puts a config's values in the form (when resuming a stored run). */
  showConfig(c: SelfPlayConfig): void {
    for (const key of Object.keys(SETTINGS) as Key[]) {
      const el = this.form.elements.namedItem(key) as HTMLInputElement | HTMLSelectElement | null;
      if (!el || c[key] === undefined) continue;
      if (el instanceof HTMLInputElement && el.type === 'checkbox') el.checked = Boolean(c[key]);
      else el.value = valueText(c[key]);
    }
    void this.inspect();
  }

  /** n, the rollouts per question of the settings shown. */
  get rollouts(): number {
    return Number((this.form.elements.namedItem('rolloutsPerQuestion') as HTMLInputElement).value) || 0;
  }

  /** Presses Start with a preset (the e2e test and the "smoke" link use it). */
  selectPreset(p: PresetName): void {
    this.$<HTMLSelectElement>('.preset').value = p;
    this.applyPreset(p);
  }
}
