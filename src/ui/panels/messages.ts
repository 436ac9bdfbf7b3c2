// Messages to the user: alerts for what needs attention (no WebGPU, a lost device, a model too large, a bad
// model id, a corpus with errors, a failed save), each with its actions; and the run log.
import { html, type Html } from '../html.ts';
import type { LogLine } from '../state.ts';

export type AlertKind = 'error' | 'warn' | 'info';

export interface AlertAction {
  label: string;
  run: () => void;
  primary?: boolean;
}

export function renderAlert(
  kind: AlertKind,
  title: string,
  message: string,
  actions: readonly { label: string; primary?: boolean }[] = [],
): Html {
  return html`<section class="panel alert ${kind}" role="${kind === 'info' ? 'status' : 'alert'}">
    <h2>${title}</h2><p>${message}</p>
    <div class="alert-actions">${actions.map(
      (a, i) => html`<button type="button" class="${a.primary ? 'primary' : ''}"
      data-action="${i}">${a.label}</button>`,
    )}
      <button type="button" class="dismiss" aria-label="dismiss this message">Dismiss</button></div></section>`;
}

export class Alerts {
  constructor(private root: HTMLElement) {}

  /** Shows an alert; an alert with the same `id` replaces the previous one. Returns a remover. */
  show(kind: AlertKind, title: string, message: string, actions: AlertAction[] = [], id?: string): () => void {
    if (id) this.root.querySelector(`[data-alert-id="${CSS.escape(id)}"]`)?.remove();
    const wrap = document.createElement('div');
    wrap.innerHTML = renderAlert(kind, title, message, actions).text;
    const el = wrap.firstElementChild as HTMLElement;
    if (id) el.dataset.alertId = id;
    const remove = () => el.remove();
    el.querySelector('.dismiss')!.addEventListener('click', remove);
    el.querySelectorAll<HTMLButtonElement>('button[data-action]').forEach((b) =>
      b.addEventListener('click', () => {
        remove();
        actions[Number(b.dataset.action)]!.run();
      }),
    );
    this.root.prepend(el);
    if (kind === 'error') el.querySelector<HTMLButtonElement>('.alert-actions button')?.focus({ preventScroll: false });
    return remove;
  }

  clear(id: string): void {
    this.root.querySelector(`[data-alert-id="${CSS.escape(id)}"]`)?.remove();
  }
}

export function renderLog(lines: readonly LogLine[], limit = 200): Html {
  if (lines.length === 0) return html`<p class="empty">The run’s messages appear here.</p>`;
  return html`<ol class="log">${lines.slice(-limit).map((l) => {
    const t = new Date(l.at);
    const ts = `${String(t.getHours()).padStart(2, '0')}:${String(t.getMinutes()).padStart(2, '0')}:${String(t.getSeconds()).padStart(2, '0')}`;
    return html`<li class="${l.level}"><time>${ts}</time> <span class="lvl">${l.level}</span> ${l.message}</li>`;
  })}</ol>`;
}
