// Run events on their way from the worker to the page. Most events are small and cross as they are; a
// rollout's per-token records (with each token's top-K lists: K ids, texts and two log-probs per token)
// are packed into typed arrays that cross as transferables, and unpacked on the page.
import type { RolloutRecord, RunEvent, TokenRecord } from '../selfplay/events.ts';

export interface PackedTokens {
  count: number;
  ids: Int32Array;
  policy: Uint8Array;
  studentLogp: Float32Array;
  teacherLogp: Float32Array;
  kl: Float32Array;
  /** Display text of each token. */
  texts: string[];
  /** Width of the top-K lists (0 when no token has one); rows of tokens without a list hold -1 ids. */
  k: number;
  topkIds: Int32Array;
  topkStudent: Float32Array;
  topkTeacher: Float32Array;
  /** Text of every id that appears in a top-K list, once. */
  vocab: Record<number, string>;
}

export type WireEvent =
  | Exclude<RunEvent, { type: 'rollout' }>
  | { type: 'rollout'; record: Omit<RolloutRecord, 'tokens'>; packed: PackedTokens };

export function packTokens(tokens: readonly TokenRecord[]): PackedTokens {
  const n = tokens.length;
  let k = 0;
  for (const t of tokens) if (t.topk) k = Math.max(k, t.topk.ids.length);
  const p: PackedTokens = {
    count: n,
    ids: new Int32Array(n),
    policy: new Uint8Array(n),
    studentLogp: new Float32Array(n),
    teacherLogp: new Float32Array(n),
    kl: new Float32Array(n),
    texts: new Array<string>(n),
    k,
    topkIds: new Int32Array(n * k).fill(-1),
    topkStudent: new Float32Array(n * k),
    topkTeacher: new Float32Array(n * k),
    vocab: {},
  };
  tokens.forEach((t, i) => {
    p.ids[i] = t.id;
    p.policy[i] = t.policy;
    p.studentLogp[i] = t.studentLogp;
    p.teacherLogp[i] = t.teacherLogp;
    p.kl[i] = t.kl;
    p.texts[i] = t.text;
    if (t.topk) {
      for (let j = 0; j < t.topk.ids.length; j++) {
        const id = t.topk.ids[j]!;
        p.topkIds[i * k + j] = id;
        p.topkStudent[i * k + j] = t.topk.studentLogp[j]!;
        p.topkTeacher[i * k + j] = t.topk.teacherLogp[j]!;
        if (!(id in p.vocab)) p.vocab[id] = t.topk.texts[j] ?? '';
      }
    }
  });
  return p;
}

export function unpackTokens(p: PackedTokens): TokenRecord[] {
  const out: TokenRecord[] = new Array(p.count);
  for (let i = 0; i < p.count; i++) {
    const t: TokenRecord = {
      id: p.ids[i]!,
      text: p.texts[i]!,
      policy: p.policy[i] ? 1 : 0,
      studentLogp: p.studentLogp[i]!,
      teacherLogp: p.teacherLogp[i]!,
      kl: p.kl[i]!,
    };
    if (p.k > 0 && p.topkIds[i * p.k]! >= 0) {
      const ids: number[] = [];
      const studentLogp: number[] = [];
      const teacherLogp: number[] = [];
      for (let j = 0; j < p.k; j++) {
        const id = p.topkIds[i * p.k + j]!;
        if (id < 0) break;
        ids.push(id);
        studentLogp.push(p.topkStudent[i * p.k + j]!);
        teacherLogp.push(p.topkTeacher[i * p.k + j]!);
      }
      t.topk = { ids, texts: ids.map((id) => p.vocab[id] ?? ''), studentLogp, teacherLogp };
    }
    out[i] = t;
  }
  return out;
}

/** The buffers a wire event's token arrays can cross in (none for other events). */
export function wireTransfer(w: WireEvent): ArrayBuffer[] {
  if (w.type !== 'rollout') return [];
  const p = w.packed;
  return [p.ids, p.policy, p.studentLogp, p.teacherLogp, p.kl, p.topkIds, p.topkStudent, p.topkTeacher].map(
    (a) => a.buffer as ArrayBuffer,
  );
}

/** The event to post, and the buffers to transfer with it. */
export function packEvent(ev: RunEvent): { wire: WireEvent; transfer: Transferable[] } {
  if (ev.type !== 'rollout') return { wire: ev, transfer: [] };
  const { tokens, ...record } = ev.record;
  const wire: WireEvent = { type: 'rollout', record, packed: packTokens(tokens) };
  return { wire, transfer: wireTransfer(wire) };
}

export function unpackEvent(w: WireEvent): RunEvent {
  if (w.type !== 'rollout') return w;
  return { type: 'rollout', record: { ...w.record, tokens: unpackTokens(w.packed) } };
}
