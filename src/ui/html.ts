// A tiny HTML template helper: `html` escapes every interpolated value unless it is already `Html`
// (another template's result) or an array of them. Views are pure functions returning `Html`, so they can
// be tested in Node as strings and mounted in the page with `mount`.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function part(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(part).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is trusted as it is (only for constants written in this code base). */
export function raw(text: string): Html {
  return new Html(text);
}

/** Joins fragments. */
export function join(parts: readonly Html[], sep: Html | string = ''): Html {
  return new Html(parts.map((p) => p.text).join(sep instanceof Html ? sep.text : escapeHtml(sep)));
}

/** Replaces an element's content with a view. */
export function mount(el: Element, view: Html): void {
  el.innerHTML = view.text;
}

/** A class attribute value from conditional parts. */
export function cls(...parts: (string | false | null | undefined)[]): string {
  return parts.filter(Boolean).join(' ');
}
