// Accessible tabs (WAI-ARIA tabs pattern): one tab stop, Left/Right (and Home/End) move between tabs and
// select them, each tab controls its panel.

export class Tabs {
  private tabs: HTMLButtonElement[];
  private panels: HTMLElement[];

  constructor(
    list: HTMLElement,
    private onSelect: (id: string) => void = () => {},
  ) {
    list.setAttribute('role', 'tablist');
    this.tabs = [...list.querySelectorAll<HTMLButtonElement>('[data-tab]')];
    this.panels = this.tabs.map((t) => document.getElementById(`panel-${t.dataset.tab}`)!);
    this.tabs.forEach((t, i) => {
      t.setAttribute('role', 'tab');
      t.id = `tab-${t.dataset.tab}`;
      t.setAttribute('aria-controls', this.panels[i]!.id);
      this.panels[i]!.setAttribute('role', 'tabpanel');
      this.panels[i]!.setAttribute('aria-labelledby', t.id);
      this.panels[i]!.tabIndex = 0;
      t.addEventListener('click', () => this.select(i));
      t.addEventListener('keydown', (e) => {
        const n = this.tabs.length;
        const to: Record<string, number> = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 };
        if (e.key in to) {
          e.preventDefault();
          this.select(to[e.key]!);
          this.tabs[to[e.key]!]!.focus();
        }
      });
    });
    this.select(0);
  }

  select(i: number): void {
    this.tabs.forEach((t, k) => {
      const on = k === i;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      this.panels[k]!.hidden = !on;
    });
    this.onSelect(this.tabs[i]!.dataset.tab!);
  }

  selectId(id: string): void {
    const i = this.tabs.findIndex((t) => t.dataset.tab === id);
    if (i >= 0) this.select(i);
  }

  get current(): string {
    return this.tabs.find((t) => t.getAttribute('aria-selected') === 'true')?.dataset.tab ?? '';
  }
}
