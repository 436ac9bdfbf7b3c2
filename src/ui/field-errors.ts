// Per-field errors of the page's forms: each `.field[data-key]` holds its control and a `.field-error`.

/** Clears every field's error text and invalid mark under `root`. */
export function clearFieldErrors(root: ParentNode): void {
  for (const el of root.querySelectorAll('.field-error')) el.textContent = '';
  for (const el of root.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
}

/**
 * Shows each error under its field, marks the field's control invalid and opens the <details> a bad field
 * hides in; returns the first bad control (to focus).
 */
export function showFieldErrors(root: ParentNode, errors: Iterable<[string, string]>): HTMLElement | null {
  let first: HTMLElement | null = null;
  for (const [key, msg] of errors) {
    const field = root.querySelector<HTMLElement>(`.field[data-key="${key}"]`);
    field?.querySelector('.field-error')?.replaceChildren(msg);
    const input = field?.querySelector<HTMLElement>('input, select');
    input?.setAttribute('aria-invalid', 'true');
    first ??= input ?? null;
    const d = field?.closest('details');
    if (d) d.open = true;
  }
  return first;
}
