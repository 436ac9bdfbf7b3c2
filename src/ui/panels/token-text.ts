// A token's text as the token views show it (the heatmap, the ablation strips), and which colouring they use.

export type HeatMode = 'kl' | 'diff';

/** A token's text made visible: newlines as ↵ (then a real break), tabs as →, nothing as ∅. */
export function visibleText(text: string): string {
  if (text === '') return '∅';
  return text.replace(/\t/g, '→\t').replace(/\r?\n/g, '↵\n');
}

/**
 * A token's text for a chip or a list, where layout does not show it: every space as ␣, tab as ⇥, newline
 * as ↵ (no real break), carriage return as ␍, nothing as ∅, so a whitespace token is never blank.
 */
export function shownToken(text: string): string {
  if (text === '') return '∅';
  return text.replace(/ /g, '␣').replace(/\t/g, '⇥').replace(/\r?\n/g, '↵').replace(/\r/g, '␍');
}
