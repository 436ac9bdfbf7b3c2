// Checkpoints stored in the browser (IndexedDB): listed with their metrics; a run checkpoint can be resumed
// (also after a page reload), any checkpoint used as the base model of a new run, exported as an HF-format
// model folder (zip), deleted; model folders (zip or folder) can be imported. A run with a checkpoint can be
// viewed again, finished or not: its questions, rollouts and charts as the page showed them.
import type { CheckpointMeta } from '../../worker/protocol.ts';
import { fmtBytes, fmtNum, fmtTime } from '../format.ts';
import { html, type Html } from '../html.ts';

/** The metrics worth showing, in order of preference. */
const SHOWN = [
  'em',
  'student_reward',
  'examiner_reward',
  'student_distill',
  'examiner_solvable_share',
  'em_hop1',
  'em_hop2',
  'em_hop3',
  'em_hop4',
];

export function pickMetrics(m: Record<string, number>, max = 4): [string, number][] {
  const keys = [
    ...SHOWN.filter((k) => k in m),
    ...Object.keys(m)
      .filter((k) => !SHOWN.includes(k))
      .sort(),
  ];
  return keys.slice(0, max).map((k) => [k, m[k]!]);
}

/** A checkpoint a run can resume from (it carries the run's state), not just a model folder. */
export function isResumable(c: CheckpointMeta): boolean {
  return c.kind === 'run' && c.cursor !== null && c.cursor.stage !== 'done';
}

export function whereText(c: CheckpointMeta): string {
  if (c.kind === 'model') return 'model folder';
  if (!c.cursor) return 'no checkpoint yet';
  if (c.cursor.stage === 'done')
    return `finished (${c.cursor.iteration + 1} iteration${c.cursor.iteration === 0 ? '' : 's'})`;
  return `next: iteration ${c.cursor.iteration + 1}, ${c.cursor.stage} step ${c.cursor.step + 1}`;
}

export function renderCheckpointRow(c: CheckpointMeta, busy: boolean): Html {
  const metrics = pickMetrics(c.metrics);
  const dis = busy ? html` disabled` : '';
  return html`<li class="ckpt" data-name="${c.name}">
    <div class="ckpt-main"><span class="ckpt-name">${c.name}</span>
      <span class="meta">${c.kind === 'run' ? `run from ${c.base}` : c.origin === 'pretrained' ? 'pretrained here' : 'imported'} · ${whereText(c)} · saved ${fmtTime(c.updatedAt)} · ${fmtBytes(c.bytes)}</span>
      ${metrics.length ? html`<span class="ckpt-metrics">${metrics.map(([k, v]) => html`<span class="metric">${k} <strong>${fmtNum(v)}</strong></span>`)}</span>` : ''}
      ${c.note ? html`<span class="muted">${c.note}</span>` : ''}
    </div>
    <div class="ckpt-actions" role="group" aria-label="actions for ${c.name}">
      ${
        c.kind === 'run' && c.cursor
          ? html`<button type="button" class="small" data-act="view"
        title="show its questions, rollouts and charts again">View run</button>`
          : ''
      }
      ${
        isResumable(c)
          ? html`<button type="button" class="small primary"
        data-act="resume"${dis}>Resume run</button>`
          : ''
      }
      ${
        c.kind === 'model' || c.cursor
          ? html`<button type="button" class="small" data-act="use"${dis}
            title="start a new run from this model (a run: its student)">Use as model</button>
      <button type="button" class="small" data-act="export"
        title="download an HF-format model folder (zip)">Export zip</button>`
          : ''
      }
      <button type="button" class="small danger" data-act="delete"${dis}>Delete</button>
    </div></li>`;
}

export function renderCheckpointList(list: readonly CheckpointMeta[], busy = false): Html {
  if (list.length === 0) {
    return html`<p class="empty">No checkpoints yet. A run saves one at the end of each stage; “Save checkpoint now” saves one on demand.</p>`;
  }
  return html`<ul class="ckpt-list">${list.map((c) => renderCheckpointRow(c, busy))}</ul>`;
}

export interface CheckpointActions {
  list(): Promise<CheckpointMeta[]>;
  resume(name: string): void;
  /** Shows the stored run's views again (its history). */
  view?(name: string): void;
  use(name: string): void;
  exportZip(name: string): Promise<{ fileName: string; blob: Blob }>;
  delete(name: string): Promise<void>;
  importFiles(
    input: { kind: 'zip'; name: string; bytes: Uint8Array } | { kind: 'files'; files: File[] },
  ): Promise<CheckpointMeta>;
  report(level: 'info' | 'error', message: string): void;
  /** Told each new list (the pretraining panel offers the stored models). */
  listed?(list: readonly CheckpointMeta[]): void;
}

export class CheckpointsPanel {
  private listEl: HTMLElement;
  private items: CheckpointMeta[] = [];
  private busy = false;

  constructor(
    root: HTMLElement,
    private actions: CheckpointActions,
  ) {
    root.innerHTML = html`<div class="toolbar">
      <label class="file-button">Import zip<input type="file" class="import-zip" accept=".zip,application/zip"></label>
      <label class="file-button">Import folder<input type="file" class="import-folder" webkitdirectory multiple></label>
      <button type="button" class="small refresh">Refresh</button>
    </div><div class="ckpt-body" aria-live="polite"></div>`.text;
    this.listEl = root.querySelector('.ckpt-body')!;
    root.querySelector('.refresh')!.addEventListener('click', () => void this.refresh());
    const zip = root.querySelector<HTMLInputElement>('.import-zip')!;
    zip.addEventListener('change', async () => {
      const f = zip.files?.[0];
      if (!f) return;
      await this.doImport({ kind: 'zip', name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) });
      zip.value = '';
    });
    const folder = root.querySelector<HTMLInputElement>('.import-folder')!;
    folder.addEventListener('change', async () => {
      const files = [...(folder.files ?? [])];
      if (files.length) await this.doImport({ kind: 'files', files });
      folder.value = '';
    });
    this.listEl.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]');
      const name = b?.closest<HTMLElement>('.ckpt')?.dataset.name;
      if (b && name !== undefined) void this.act(b.dataset.act!, name, b);
    });
  }

  private async doImport(input: Parameters<CheckpointActions['importFiles']>[0]): Promise<void> {
    try {
      const meta = await this.actions.importFiles(input);
      this.actions.report('info', `Imported '${meta.name}' (${fmtBytes(meta.bytes)}).`);
    } catch (e) {
      this.actions.report('error', `Import failed: ${(e as Error).message}`);
    }
    await this.refresh();
  }

  private async act(act: string, name: string, button: HTMLButtonElement): Promise<void> {
    if (act === 'resume') this.actions.resume(name);
    else if (act === 'view') this.actions.view?.(name);
    else if (act === 'use') this.actions.use(name);
    else if (act === 'delete') {
      if (!confirm(`Delete checkpoint '${name}' from this browser?`)) return;
      await this.actions
        .delete(name)
        .catch((e: Error) => this.actions.report('error', `Could not delete '${name}': ${e.message}`));
      await this.refresh();
    } else if (act === 'export') {
      button.disabled = true;
      const label = button.textContent;
      button.textContent = 'Exporting…';
      try {
        const { fileName, blob } = await this.actions.exportZip(name);
        const a = document.createElement('a');
        a.href = URL.createObjectURL(blob);
        a.download = fileName;
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
      } catch (e) {
        this.actions.report('error', `Export of '${name}' failed: ${(e as Error).message}`);
      } finally {
        button.disabled = false;
        button.textContent = label;
      }
    }
  }

  /** Disables resume/use/delete while a run is active. */
  setBusy(busy: boolean): void {
    this.busy = busy;
    this.render(this.items);
  }

  render(list: CheckpointMeta[]): void {
    this.items = list;
    this.listEl.innerHTML = renderCheckpointList(list, this.busy).text;
    this.actions.listed?.(list);
  }

  async refresh(): Promise<void> {
    try {
      this.render(await this.actions.list());
    } catch (e) {
      this.listEl.innerHTML =
        html`<p class="error">Cannot read the stored checkpoints: ${(e as Error).message}</p>`.text;
    }
  }

  get latest(): CheckpointMeta | undefined {
    return this.items.find(isResumable);
  }
}
