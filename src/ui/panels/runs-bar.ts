// The bar above the run views: opens a recorded example run (no training, no GPU), says which run the views
// show when it is not this page's own, and goes back to it. Its height never changes (the tab bar below stays
// put while a run starts or an example opens).
import { html } from '../html.ts';
import type { ExampleEntry } from '../replay.ts';

export interface RunsBarActions {
  openExample(entry: ExampleEntry): void;
  /** Back to this page's own run. */
  back(): void;
}

export class RunsBar {
  private examples: ExampleEntry[] = [];
  private button: HTMLButtonElement;
  private select: HTMLSelectElement;
  private viewing: HTMLElement;
  private backButton: HTMLButtonElement;

  constructor(
    root: HTMLElement,
    private actions: RunsBarActions,
  ) {
    root.innerHTML = html`<div class="runs-bar">
      <button type="button" class="small open-example" disabled>Open the recorded example</button>
      <select class="example-select" aria-label="which recorded example" hidden></select>
      <span class="viewing muted"
        aria-live="polite">a real run recorded in advance: every view, no training and no GPU needed</span>
      <button type="button" class="small back" hidden>Back to this page’s run</button></div>`.text;
    this.button = root.querySelector('.open-example')!;
    this.select = root.querySelector('.example-select')!;
    this.viewing = root.querySelector('.viewing')!;
    this.backButton = root.querySelector('.back')!;
    this.button.addEventListener('click', () => {
      const e = this.examples[Number(this.select.value) || 0];
      if (e) this.actions.openExample(e);
    });
    this.backButton.addEventListener('click', () => this.actions.back());
  }

  /** The shipped examples, or why they cannot be offered. */
  setExamples(list: ExampleEntry[] | Error): void {
    if (list instanceof Error) {
      this.viewing.textContent = `no recorded example: ${list.message}`;
      return;
    }
    this.examples = list;
    this.button.disabled = list.length === 0;
    if (list.length === 0) this.viewing.textContent = 'no recorded example is served with this page';
    this.select.innerHTML = list.map((e, i) => html`<option value="${i}">${e.title}</option>`.text).join('');
    this.select.hidden = list.length < 2;
  }

  /** What the views show: another run (its title and kind), or null for this page's own. */
  setViewing(v: { title: string; kind: 'example' | 'stored' } | null): void {
    this.backButton.hidden = v === null;
    const idle = 'a real run recorded in advance: every view, no training and no GPU needed';
    this.viewing.textContent = v
      ? `viewing the ${v.kind === 'example' ? 'recorded example' : 'stored run'}: ${v.title}`
      : idle;
    this.viewing.title = this.viewing.textContent;
    this.viewing.classList.toggle('muted', v === null);
  }
}
