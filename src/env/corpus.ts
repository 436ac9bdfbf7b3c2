// The corpus the search tool retrieves from: passages {id, title, text}, stored as JSONL
// (one JSON object per line, blank lines allowed).

export interface Passage {
  /** Unique within the corpus. */
  id: string;
  title: string;
  text: string;
}

/** A corpus or eval-set file that cannot be read; the message names the source and 1-based line. */
export class JsonlParseError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly problem: string,
  ) {
    super(`${source}:${line}: ${problem}`);
    this.name = 'JsonlParseError';
  }
}

/**
 * Splits JSONL text into (1-based line number, parsed object) pairs, skipping blank lines; tolerates a
 * BOM and CRLF line ends. Throws JsonlParseError for a line that is not a JSON object.
 */
export function parseJsonlObjects(
  text: string,
  sourceName: string,
): { line: number; value: Record<string, unknown> }[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = body.split('\n');
  const out: { line: number; value: Record<string, unknown> }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new JsonlParseError(sourceName, i + 1, `bad JSON (${(e as Error).message})`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new JsonlParseError(sourceName, i + 1, 'expected a JSON object');
    }
    out.push({ line: i + 1, value: value as Record<string, unknown> });
  }
  return out;
}

/** The string field `key` of a JSONL record; throws unless it is a non-empty string. */
export function requireString(record: Record<string, unknown>, key: string, sourceName: string, line: number): string {
  const v = record[key];
  if (v === undefined) throw new JsonlParseError(sourceName, line, `missing field "${key}"`);
  if (typeof v !== 'string') throw new JsonlParseError(sourceName, line, `field "${key}" must be a string`);
  if (v.trim() === '') throw new JsonlParseError(sourceName, line, `empty field "${key}"`);
  return v;
}

/**
 * Parses a corpus in JSONL form. Every non-blank line must be an object with non-empty string fields
 * `id`, `title`, `text` (other fields are ignored); ids must be unique.
 * @param sourceName names the file or URL in error messages ("<source>:<line>: <problem>").
 */
/**
 * The longest passage text, in characters. A passage is an examiner's whole source document and a search result:
 * one far past any model's context (a whole book on one line) would fill every prompt it appears in.
 */
export const MAX_PASSAGE_CHARS = 100_000;

export function parseCorpusJsonl(text: string, sourceName: string): Passage[] {
  const seen = new Map<string, number>();
  const passages: Passage[] = [];
  for (const { line, value } of parseJsonlObjects(text, sourceName)) {
    const id = requireString(value, 'id', sourceName, line);
    const title = requireString(value, 'title', sourceName, line);
    const body = requireString(value, 'text', sourceName, line);
    if (body.length > MAX_PASSAGE_CHARS)
      throw new JsonlParseError(
        sourceName,
        line,
        `passage "${id}" has ${body.length} characters of text; a passage may have at most ${MAX_PASSAGE_CHARS} ` +
          '(split long documents into passages of a few paragraphs)',
      );
    const first = seen.get(id);
    if (first !== undefined)
      throw new JsonlParseError(sourceName, line, `duplicate id "${id}" (first on line ${first})`);
    seen.set(id, line);
    passages.push({ id, title, text: body });
  }
  return passages;
}

/** The corpus as JSONL: one `{"id","title","text"}` object per line, with a final newline. */
export function corpusToJsonl(passages: readonly Passage[]): string {
  return (
    passages.map((p) => JSON.stringify({ id: p.id, title: p.title, text: p.text })).join('\n') +
    (passages.length ? '\n' : '')
  );
}

/** id -> passage. */
export function passagesById(passages: readonly Passage[]): Map<string, Passage> {
  return new Map(passages.map((p) => [p.id, p]));
}
