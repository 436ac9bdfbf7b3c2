// Sequence packing: documents -> fixed-length rows of token ids with next-token targets and a loss mask.
//
// A transcript is never split (its answer needs its prompt and tool replies in view): it goes whole into
// a row, and when the next one does not fit, the rest of the row is filled with passage text, which may be
// split across rows. Passages are also mixed in between transcripts so that about `passageShare` of all
// tokens are passage text. Every document ends with <|endoftext|>.
import type { Tokenizer } from '../model/tokenizer.ts';
import type { Doc } from './transcripts.ts';

/** One document as ids, with 1 where the model is trained to predict the id. */
interface Encoded {
  ids: number[];
  loss: number[];
}

export interface Batch {
  /** Row-major [rows, seq]. */
  ids: Int32Array;
  /** targets[r, t] = the id after ids[r, t]. */
  targets: Int32Array;
  /** 1 where targets[r, t] is a training target. */
  mask: Float32Array;
  rows: number;
  seq: number;
}

export interface PackStats {
  rows: number;
  tokens: number;
  /** Positions with mask 1. */
  targets: number;
  passageTokens: number;
  transcriptTokens: number;
  /** Transcripts longer than a row, left out. */
  dropped: number;
  docs: number;
}

export class Packer {
  readonly stats: PackStats = {
    rows: 0,
    tokens: 0,
    targets: 0,
    passageTokens: 0,
    transcriptTokens: 0,
    dropped: 0,
    docs: 0,
  };
  private readonly transcripts: Encoded[] = [];
  private readonly passages: Encoded[] = [];
  /** How much of the head passage was already used. */
  private passageOffset = 0;
  private readonly separator: number;

  constructor(
    private readonly tok: Tokenizer,
    private readonly docs: Iterator<Doc>,
    readonly seq: number,
    private readonly passageShare = 0.3,
    separatorId?: number,
  ) {
    const sep = separatorId ?? tok.padId ?? tok.eosIds[0];
    if (sep === undefined || sep === null)
      throw new Error('pretrain: the tokenizer has no pad or eos token to separate documents');
    this.separator = sep;
  }

  private encode(d: Doc): Encoded {
    const ids: number[] = [];
    const loss: number[] = [];
    for (const s of d.segments) {
      for (const id of this.tok.encode(s.text, { addSpecialTokens: false })) {
        ids.push(id);
        loss.push(s.loss ? 1 : 0);
      }
    }
    ids.push(this.separator);
    loss.push(d.kind === 'passage' ? 1 : 0);
    return { ids, loss };
  }

  /** Pulls documents until the wanted queue has one. */
  private pull(want: 'passage' | 'transcript'): void {
    const queue = want === 'passage' ? this.passages : this.transcripts;
    let droppedInARow = 0;
    while (queue.length === 0) {
      const next = this.docs.next();
      if (next.done) throw new Error('pretrain: the document stream ended');
      this.stats.docs++;
      const enc = this.encode(next.value);
      if (next.value.kind === 'passage') this.passages.push(enc);
      else if (enc.ids.length > this.seq + 1) {
        this.stats.dropped++;
        if (++droppedInARow >= 200)
          throw new Error(`pretrain: transcripts do not fit in rows of ${this.seq} tokens; use a longer --seq`);
      } else this.transcripts.push(enc);
    }
  }

  /** Appends up to `room` passage tokens. */
  private takePassage(ids: number[], loss: number[], room: number): void {
    this.pull('passage');
    const head = this.passages[0]!;
    const n = Math.min(room, head.ids.length - this.passageOffset);
    for (let i = 0; i < n; i++) {
      ids.push(head.ids[this.passageOffset + i]!);
      loss.push(head.loss[this.passageOffset + i]!);
    }
    this.passageOffset += n;
    this.stats.passageTokens += n;
    if (this.passageOffset === head.ids.length) {
      this.passages.shift();
      this.passageOffset = 0;
    }
  }

  /** One row of seq + 1 tokens (inputs are the first seq, targets the last seq). */
  private row(): Encoded {
    const ids: number[] = [];
    const loss: number[] = [];
    const len = this.seq + 1;
    while (ids.length < len) {
      const room = len - ids.length;
      const placed = this.stats.passageTokens + this.stats.transcriptTokens;
      if (placed > 0 && this.stats.passageTokens < this.passageShare * placed) {
        this.takePassage(ids, loss, room);
        continue;
      }
      this.pull('transcript');
      const t = this.transcripts[0]!;
      if (t.ids.length > room) {
        while (ids.length < len) this.takePassage(ids, loss, len - ids.length);
        break;
      }
      this.transcripts.shift();
      ids.push(...t.ids);
      loss.push(...t.loss);
      this.stats.transcriptTokens += t.ids.length;
    }
    return { ids, loss };
  }

  /** The next `rows` rows. */
  next(rows: number): Batch {
    const T = this.seq;
    const ids = new Int32Array(rows * T);
    const targets = new Int32Array(rows * T);
    const mask = new Float32Array(rows * T);
    for (let r = 0; r < rows; r++) {
      const row = this.row();
      for (let t = 0; t < T; t++) {
        ids[r * T + t] = row.ids[t]!;
        targets[r * T + t] = row.ids[t + 1]!;
        mask[r * T + t] = row.loss[t + 1]!;
        this.stats.targets += row.loss[t + 1]!;
      }
    }
    this.stats.rows += rows;
    this.stats.tokens += rows * T;
    return { ids, targets, mask, rows, seq: T };
  }
}
