// Sentences of a passage and the one that states a value: what the scripted transcripts quote and what
// the teacher's compact notes keep of each document of a question's path.

/** The sentences of a passage (split after each full stop). */
export const sentencesOf = (text: string): string[] => text.split(/(?<=\.)\s+/);

/** Whether `text` contains `value` as a whole word. */
export function mentions(text: string, value: string): boolean {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w])${escaped}([^\\w]|$)`).test(text);
}

/** The first sentence of a passage that contains `value` (as a whole word), or the whole text. */
export function factSentence(text: string, value: string): string {
  return sentencesOf(text).find((s) => mentions(s, value)) ?? text;
}
