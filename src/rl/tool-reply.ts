// The environment's reply to a search, as token ids (ALGORITHM.md section 2): the `<information>` block is
// built as text once, cut to a token budget, encoded once, and appended to the trajectory as ids. It is never
// decoded and re-encoded with the rest of the trajectory.
import type { Passage } from '../env/corpus.ts';
import { INFORMATION_CLOSE, INFORMATION_OPEN, formatInformationBody } from '../env/tags.ts';
import type { Tokenizer } from '../model/tokenizer.ts';

export interface ToolReply {
  /** The ids appended to the trajectory (policy mask 0). */
  ids: number[];
  /** The body of the block as the policy saw it (after any cut), for the QCP and the records. */
  body: string;
  /** Whether the body was cut to fit the budget. */
  truncated: boolean;
}

/** What separates the block from the turns around it (not part of the block; ALGORITHM.md section 2). */
const BEFORE = '\n';
const AFTER = '\n';

/** The block's ids; the passages' text is text (a special token's text in a document never becomes that token). */
function encodeBlock(tok: Tokenizer, body: string): number[] {
  const block = `${BEFORE}${INFORMATION_OPEN}${body}${INFORMATION_CLOSE}${AFTER}`;
  return tok.encode(block, { addSpecialTokens: false, asText: true });
}

/**
 * The tool reply for `passages` in at most `budget` tokens. The cut is made on the body text (the longest
 * prefix whose block fits, found by bisection), so the closing tag always survives and the parsers of
 * src/env/tags.ts still see a complete block. A budget below the bare tags gives the bare tags.
 */
export function encodeToolReply(
  tok: Tokenizer,
  passages: readonly Pick<Passage, 'title' | 'text'>[],
  budget: number,
): ToolReply {
  const full = formatInformationBody(passages);
  const ids = encodeBlock(tok, full);
  if (ids.length <= budget) return { ids, body: full, truncated: false };
  let lo = 0; // longest prefix length known to fit (0 = empty body, accepted whatever its size)
  let hi = full.length; // shortest prefix length known not to fit
  let best = encodeBlock(tok, '');
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const cand = encodeBlock(tok, full.slice(0, mid));
    if (cand.length <= budget) {
      lo = mid;
      best = cand;
    } else hi = mid;
  }
  return { ids: best, body: full.slice(0, lo), truncated: true };
}
