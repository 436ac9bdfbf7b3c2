// Batched KV-cache generation. Tokens in, tokens out: a session holds each sequence as ids with a mask of
// which ids the model sampled (1) and which came from the prompt or the environment (0), plus the
// sampling policy's log-probability of every sampled id. Environment tokens (search results) are appended
// as ids, and generation continues from them.
//
// Rows are left-padded to a common length; `keyStart` hides the padding from attention and positions
// count from each row's first real token, so a row's numbers do not depend on its neighbours. Each call
// to `run` prefills the contexts once, then decodes one token per step from the cache. The host reads the
// sampled tokens back every `readEvery` steps, not every step: in between, each step's sampled ids feed the
// next step on the GPU, and a row that stopped meanwhile decodes on unseen (its extra tokens are dropped when
// read, so the outputs are those of reading every step). Rows that finish leave the batch (the cache is
// compacted) at a read, once at most half of it is still decoding (not on the fused step of a session that keeps
// its cache).
//
// A session made with `keepCache` keeps its KV cache between calls (a rollout's turns): the next call moves
// each row's cached tokens to their new columns and prefills only what is new (the last sampled token and the
// tool reply), not the whole conversation again.
import type { ModelConfig } from './config.ts';
import type { CausalLM, KVCache } from './decoder.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { embedding } from '../gpu/ops/embedding.ts';
import { sample } from '../gpu/ops/sample.ts';
import { decodeSample, decodeStep, EMBEDDED, fusedDecodeState, samplesEmbed } from './decode-step.ts';
import type { DecodeState } from './decode-state.ts';
import { prefillChunks } from './prefill-chunks.ts';

/** Tokens (rows x time steps) of one chunk of a prompt prefill. */
export const PREFILL_TOKENS = 2048;

export interface GenerateOptions {
  maxNewTokens: number;
  /** 0 = greedy. */
  temperature?: number;
  /** Nucleus mass in (0, 1]; 1 = off. */
  topP?: number;
  /** Token ids that end a sequence (EOS). */
  stopIds?: number[];
  /** Strings that end a sequence once the text it generated in this call contains one (e.g. `</search>`). */
  stopStrings?: string[];
  /** Turns ids into text, for stop strings. */
  decode?: (ids: number[]) => string;
  /**
   * Ids whose own text holds a stop string (e.g. a tokenizer's single token for `</search>`): on the fused step the
   * GPU leaves a row alone from the one it samples, as for a stop id, instead of decoding it until the host reads
   * the text. The host still reports a stop string. Ids whose text holds none are ignored.
   */
  stopStringIds?: number[];
  /** A seeded U(0,1) source: one draw per row per step. */
  random: () => number;
  /** Called after every decoding step with the number of steps done. */
  onStep?: (step: number) => void;
  /** Tokens (rows x time steps) per chunk of the prompts' prefill (default PREFILL_TOKENS). */
  prefillTokens?: number;
  /** Bytes the KV cache of one decoding batch may take (0 or absent: no limit); more rows decode in parts. */
  kvBudgetBytes?: number;
  /** Decoding steps between read-backs of the sampled tokens (default READ_EVERY; 1: every step). */
  readEvery?: number;
}

/**
 * Decoding steps per read-back on a GPU. A read-back stalls the host until the GPU is done (0.5 ms and more in a
 * browser); reading every 8 steps pays it once per 8 tokens, at the price of at most 7 steps decoded after the last
 * row stopped and of finished rows leaving the batch only at a read. A CPU driver shares its cores with the host
 * and pays for every row-step it decodes: there reading every step is faster (a 200-question evaluation on
 * lavapipe: 87-88 s reading every step, 94-98 s every 8), so it is the default there.
 */
export const READ_EVERY = 8;

/**
 * Steps of the next batch recorded and submitted before a read is awaited: work the GPU has while the host reads,
 * checks and records the rest, and no more than a call's last read wastes.
 */
export const AHEAD_STEPS = 2;

/**
 * Steps between reads: the option, else READ_EVERY where the fused step runs (stopped rows cost nothing there)
 * or on a GPU, else 1; always 1 where ids cannot stay on the GPU (a sharded table).
 */
function readInterval(model: CausalLM, opts: GenerateOptions, fused: boolean): number {
  if (!model.takesDeviceIds()) return 1;
  return Math.max(1, opts.readEvery ?? (fused || !model.engine.info.isCpu ? READ_EVERY : 1));
}

/** Bytes of a KV cache of `rows` rows of `positions` positions (f32 keys and values of every layer). */
export function kvCacheBytes(cfg: ModelConfig, rows: number, positions: number): number {
  return 2 * cfg.layers * cfg.kvHeads * cfg.headDim * 4 * rows * positions;
}

/** Rows one decoding batch of caches of `positions` positions may hold under `budget` bytes (0: all). */
export function rowsWithin(cfg: ModelConfig, budget: number, positions: number, rows: number): number {
  if (!(budget > 0)) return rows;
  return Math.max(1, Math.min(rows, Math.floor(budget / kvCacheBytes(cfg, 1, positions))));
}

export type StopReason = 'stop-id' | 'stop-string' | 'length' | null;

export interface Sequence {
  ids: number[];
  /** 1 where the model sampled the id, 0 for prompt and environment ids. */
  sampled: number[];
  /** log π(id) under the sampling distribution for sampled ids, 0 elsewhere. */
  logprobs: number[];
  /** Why the last `run` stopped this sequence. */
  stop: StopReason;
}

/** What a kept cache holds of one sequence: its first `count` tokens, in cache row `row` from column `start`. */
interface CachedRow {
  row: number;
  start: number;
  count: number;
}

export interface SessionOptions {
  /** Keep the KV cache between calls of `run`, so a call prefills only the tokens added since the last (then
   *  dispose the session). */
  keepCache?: boolean;
}

export class GenerationSession {
  readonly sequences: Sequence[];
  /** Draws of `spareOf` taken for steps that turned out unneeded, served first by the next steps. */
  private spare: number[] = [];
  private spareOf: (() => number) | null = null;
  /** The last call's cache and what it holds of each sequence (keepCache only). */
  private kept: { cache: KVCache; rows: Map<number, CachedRow> } | null = null;
  /** Prompt tokens (rows x time steps, padding included) the calls' prefills ran: a measure of reuse. */
  prefilled = 0;

  constructor(
    readonly model: CausalLM,
    prompts: number[][],
    private readonly options: SessionOptions = {},
  ) {
    if (prompts.length === 0) throw new Error('piplay: generation needs at least one prompt');
    this.sequences = prompts.map((p) => {
      if (p.length === 0) throw new Error('piplay: a generation prompt is empty');
      return { ids: [...p], sampled: p.map(() => 0), logprobs: p.map(() => 0), stop: null };
    });
  }

  /** Frees a kept cache (a session made with keepCache). */
  dispose(): void {
    this.kept?.cache.dispose();
    this.kept = null;
  }

  /** Appends environment ids (masked out: not sampled) to sequence `i`. */
  append(i: number, ids: number[]): void {
    const s = this.sequences[i]!;
    for (const id of ids) {
      s.ids.push(id);
      s.sampled.push(0);
      s.logprobs.push(0);
    }
  }

  /**
   * Continues the sequences listed in `which` (default: all) until each hits a stop id, a stop string or
   * `maxNewTokens` new tokens.
   */
  async run(opts: GenerateOptions, which?: number[]): Promise<void> {
    const rows = which ?? this.sequences.map((_, i) => i);
    if (rows.length === 0) return;
    const leave = this.model.engine.profile?.enter(`generate ${this.model.profileName}`);
    try {
      // Under a KV budget the rows decode in parts, one cache at a time (each part draws its own uniforms).
      const longest = Math.max(...rows.map((r) => this.sequences[r]!.ids.length));
      const part = rowsWithin(this.model.cfg, opts.kvBudgetBytes ?? 0, longest + opts.maxNewTokens, rows.length);
      // Under a KV budget each part has its own cache: none is kept from before, and the last part's is kept only
      // for its rows.
      if (part < rows.length) this.dispose();
      for (let k = 0; k < rows.length; k += part) await this.decode(opts, rows.slice(k, k + part));
    } finally {
      leave?.();
    }
  }

  private async decode(opts: GenerateOptions, rows: number[]): Promise<void> {
    const model = this.model;
    const B = rows.length;
    const lens = rows.map((r) => this.sequences[r]!.ids.length);
    const L = Math.max(...lens);
    const maxPos = model.cfg.maxPositions;
    if (maxPos && L + opts.maxNewTokens > maxPos) {
      throw new Error(`piplay: ${L} + ${opts.maxNewTokens} tokens exceed the model's ${maxPos} positions`);
    }
    const keyStart = Int32Array.from(lens, (n) => L - n);
    const ids = new Int32Array(B * L);
    const positions = new Int32Array(B * L);
    rows.forEach((r, b) => {
      const seq = this.sequences[r]!.ids;
      for (let t = 0; t < L; t++) {
        const k = t - keyStart[b]!;
        ids[b * L + t] = k >= 0 ? seq[k]! : 0;
        positions[b * L + t] = Math.max(k, 0);
      }
    });
    const stopIds = new Set(opts.stopIds ?? []);
    const longestStop = Math.max(0, ...(opts.stopStrings ?? []).map((ss) => ss.length));
    const started = rows.map((r) => this.sequences[r]!.ids.length);
    const done = new Array<boolean>(B).fill(false);
    for (const r of rows) this.sequences[r]!.stop = null;
    // Each row's whole sequence as a key: rows with the same one are prefilled once (twins, below).
    const keys = rows.map((r) => this.sequences[r]!.ids.join(','));
    // With nothing cached, a prefix the rows share goes through the model once, as a cache the call then lays out.
    if (!this.kept) this.prefillSharedPrefix(rows, new Set(keys).size, opts);
    // Tokens of each row the kept cache holds (all but the last at most: the prefill gives its logits).
    const movable = this.kept?.cache.relayout ? this.kept.rows : null;
    const reuse = rows.map((r, b) => Math.min(lens[b]! - 1, movable?.get(r)?.count ?? 0));
    const fresh = lens.map((n, b) => n - reuse[b]!);
    // Row k of the cache (and of each step's batch) holds batch row slots[k], the rows with the most new tokens
    // first: a chunk of the prefill runs only the rows with new tokens in it, the first ones (below). Finished
    // rows stay in the batch until at most half of it is still decoding; then the cache keeps only the live rows
    // (but for a kept cache on the fused step, below).
    let slots = rows.map((_, b) => b).sort((a, b) => fresh[b]! - fresh[a]! || a - b);
    const capacity = L + opts.maxNewTokens;
    // Rows with the same whole sequence (a question's rollouts at their first call, and those that have sampled
    // the same tokens and been given the same tool replies since) are prefilled once: the first of each (its twin)
    // goes through the model, into a cache of those rows only (`prefilled`, in slot order, each with what the kept
    // cache holds of it), which is then laid out for every row (kv_move), each taking its twin's row and logits.
    let twin = twins(keys, reuse);
    let prefilled = slots.filter((b) => twin[b] === b);
    let cache = this.cacheFor(rows, prefilled, reuse, keyStart, capacity);
    if (prefilled.length < B && !cache.relayout) {
      cache.dispose();
      cache = this.model.newCache(B, capacity);
      twin = rows.map((_, b) => b);
      prefilled = slots;
    }
    // The prefill runs over the last W columns, where every prefilled row's new tokens lie.
    const W = Math.max(...prefilled.map((b) => fresh[b]!));
    // Each slot's twin, as a row of the prefill's cache and logits.
    const twinRows = Int32Array.from(slots, (b) => prefilled.indexOf(twin[b]!));
    cache.length = L - W;
    let keepCache = this.options.keepCache === true;
    // The fused step where it applies (src/model/decode-step.ts): its rows' state follows the slots.
    let fused: DecodeState | null = null;
    try {
      fused = fusedDecodeState(model, B, [...stopIds, ...stopStringIds(opts)]);
      // The rows' first keys, positions and stop flags and the next step, written before the prefill, whose
      // sampler (on the fused step) flags a row whose first token is a stop id, and again at every read.
      const setRows = (next: number) =>
        fused?.setRows(
          slots.map((b) => keyStart[b]!),
          slots.map((b) => L - keyStart[b]! - 1),
          slots.map((b) => done[b]!),
          next,
        );
      setRows(0);
      // The prompts go into the cache a chunk of time steps at a time, so the prefill holds one chunk's
      // intermediates (at most prefillTokens, rows x columns), not those of every prompt token. A chunk runs the
      // first m cache rows, those with new tokens in it (a row's new tokens are its last ones; the rest of its
      // columns hold cached tokens or left padding, never read): the cache's first m rows serve a batch of m. The
      // chunks' edges fall where rows' new tokens start (src/model/prefill-chunks.ts).
      const chunks = prefillChunks(
        prefilled.map((b) => fresh[b]!),
        L,
        opts.prefillTokens ?? PREFILL_TOKENS,
      );
      // Step results stay on the GPU until read: each step's ids feed the next one there.
      const prefill = this.record(
        () => {
          let h: Tensor | null = null;
          let T = 0;
          for (const [t0, columns] of chunks) {
            T = columns;
            const m = prefilled.filter((b) => L - fresh[b]! < t0 + T).length;
            h?.dispose();
            const cols = (a: Int32Array) =>
              Int32Array.from({ length: m * T }, (_, i) => a[prefilled[Math.floor(i / T)]! * L + t0 + (i % T)]!);
            const starts = Int32Array.from(prefilled.slice(0, m), (b) => keyStart[b]!);
            // Only the last chunk's last column is read (every prefilled row's last token lies there): the last
            // layer runs its MLP there alone, and not at all for the chunks before.
            const lastChunk = t0 + T === L;
            h = model.hidden(
              { ids: cols(ids), batch: m, time: T, positions: cols(positions), keyStart: starts },
              cache,
              lastChunk ? Int32Array.from({ length: m }, (_, k) => k * T + T - 1) : NO_ROWS,
            );
            this.prefilled += m * T;
          }
          if (prefilled.length < B) {
            // Each row takes its twin's whole row (its tokens lie at keyStart .. L).
            const moves = slots.map((b, k) => ({
              srcRow: twinRows[k]!,
              srcStart: keyStart[b]!,
              dstStart: keyStart[b]!,
              count: L - keyStart[b]!,
            }));
            cache.relayout!(capacity, moves);
          }
          const last = model.logits(h!);
          if (prefilled.length === B) return last;
          // Each row's logits are its twin's (the embedding lookup's gather takes rows more than once).
          return embedding(last, model.engine.tensor(twinRows, [B], 'i32'), twinRows);
        },
        opts,
        B,
        slots,
        fused,
      );
      // On the GPU, ids can only feed the next step from a table in one piece (else: read every step).
      const every = readInterval(model, opts, fused !== null);
      // Records the decoding steps from `first` on, `count` of them but none past the tokens a row may have. A
      // step's input: host ids, or the last step's results on the GPU (its ids, or on the fused step the rows the
      // sampler already embedded in the state).
      const decodeSteps = (first: number, count: number, input: Int32Array | typeof EMBEDDED | Sampled): Sampled[] => {
        const out: Sampled[] = [];
        try {
          for (let at = first; at < first + count && at < opts.maxNewTokens; at++) {
            const n = slots.length;
            let stepLogits: () => Tensor;
            if (fused) {
              const st = fused;
              const fromLast =
                typeof input === 'object' && 'takeEmbedded' in input
                  ? input.takeEmbedded()
                    ? EMBEDDED
                    : input.ids
                  : input;
              stepLogits = () => decodeStep(st, fromLast, n, cache, at);
            } else {
              if (input === EMBEDDED) throw new Error('piplay: embedded rows need the fused step');
              const stepIds = input instanceof Int32Array ? input : input.ids;
              const positions = Int32Array.from(slots, (b) => L - keyStart[b]! + at - 1);
              const rowStarts = Int32Array.from(slots, (b) => keyStart[b]!);
              const batch =
                stepIds instanceof Int32Array
                  ? { ids: stepIds, batch: n, time: 1, positions, keyStart: rowStarts }
                  : { ids: NO_IDS, deviceIds: stepIds, batch: n, time: 1, positions, keyStart: rowStarts };
              stepLogits = () => model.logits(model.hidden(batch, cache)).reshape([n, -1]);
            }
            const sampled = this.record(stepLogits, opts, B, slots, fused);
            out.push(sampled);
            input = sampled;
          }
        } catch (err) {
          for (const o of out) o.dispose();
          throw err;
        }
        return out;
      };
      // Whether the batch leaves its stopped rows at the next read: at most half of it still decoding (on the fused
      // step a kept cache keeps its stopped rows: they cost little there, their attention and products skipped, and
      // may come back next call, a search's reply; the general ops pay for every row, so there they leave, and lose
      // their reuse).
      const shrinks = () => slots.filter((b) => !done[b]).length <= slots.length / 2 && !(keepCache && fused);
      // The batch of steps the next read takes. Where the steps' ids stay on the GPU, the first AHEAD_STEPS steps of
      // the next batch go on before a read is awaited (unless the batch shrinks at that read), so the GPU decodes
      // while the host waits, checks stop strings and records the rest of the batch: their results are those the
      // next batch would have had (a row that has stopped meanwhile is left alone, or read no further).
      let batch: Sampled[] = [prefill];
      let ahead: Sampled[] = [];
      let step = 0; // steps read
      try {
        // The prefill's tokens feed the first steps on the GPU: the first read comes `every` steps in.
        if (every > 1) batch.push(...decodeSteps(1, every - 1, prefill));
        let recorded = batch.length; // steps recorded
        // Rows the host stopped (stop strings) whose flags the GPU does not have yet (fused step).
        let unflagged: number[] = [];
        for (;;) {
          const tail = batch[batch.length - 1]!;
          const goAhead = every > 1 && recorded < opts.maxNewTokens && !shrinks();
          // The last step's embedded rows outlive the read: the next step starts from them if no row leaves.
          const carried = !goAhead && tail.takeEmbedded();
          // The read's copies go in before the steps ahead, so it waits for this batch only. (Should recording them
          // throw, the read is never awaited: its own failure must not become an unhandled rejection.)
          const reading = this.readBack(batch);
          reading.catch(() => {});
          if (goAhead) {
            ahead = decodeSteps(recorded, Math.min(AHEAD_STEPS, every), tail);
            recorded += ahead.length;
            model.engine.flush();
          }
          const host = await reading;
          let stopped = false;
          for (const [i, next] of host.entries()) {
            slots.forEach((b, k) => {
              if (done[b]) return;
              const s = this.sequences[rows[b]!]!;
              const id = next.ids[k]!;
              s.ids.push(id);
              s.sampled.push(1);
              s.logprobs.push(next.logprobs[k]!);
              model.engine.profile?.count('tokens');
              if (stopIds.has(id)) {
                done[b] = true;
                s.stop = 'stop-id';
              } else if (opts.stopStrings?.length && opts.decode) {
                const text = tailText(s.ids, started[b]!, opts.decode, longestStop + opts.decode([id]).length + 4);
                if (opts.stopStrings.some((ss) => text.includes(ss))) {
                  done[b] = true;
                  s.stop = 'stop-string';
                  unflagged.push(k);
                }
              }
              if (!done[b] && s.ids.length - started[b]! >= opts.maxNewTokens) {
                done[b] = true;
                s.stop = 'length';
              }
            });
            step++;
            opts.onStep?.(step);
            if (done.every(Boolean)) {
              stopped = true;
              // Steps decoded after the last row stopped were never needed: their draws go back to the stream,
              // so the next run draws what it would have drawn had every step been read.
              for (const extra of [...host.slice(i + 1), ...ahead]) this.spare.push(...extra.draws);
              break;
            }
          }
          if (stopped || step >= opts.maxNewTokens) break;
          if (ahead.length > 0) {
            // The rest of the batch the steps ahead began, after the flags of rows the host has stopped since.
            fused?.stopRows(unflagged);
            unflagged = [];
            batch = ahead;
            ahead = [];
            const rest = decodeSteps(recorded, every - batch.length, batch[batch.length - 1]!);
            batch.push(...rest);
            recorded += rest.length;
            continue;
          }
          // At a read the batch may shrink; the next step's ids are the last step's, from the host.
          const last = host[host.length - 1]!;
          let keep = slots.map((_, k) => k);
          if (shrinks()) {
            keep = keep.filter((k) => !done[slots[k]!]);
            cache.keepRows(keep);
          }
          const ids = Int32Array.from(keep, (k) => last.ids[k]!);
          const whole = keep.length === slots.length;
          slots = keep.map((k) => slots[k]!);
          setRows(step);
          unflagged = [];
          batch = decodeSteps(step, every, carried && whole ? EMBEDDED : ids);
          recorded = step + batch.length;
        }
      } finally {
        for (const p of [...batch, ...ahead]) p.dispose();
      }
      if (keepCache) {
        // Every token but a row's last sampled one went through the cache (anything decoded after a row
        // stopped lies beyond it and is not kept).
        const kept = new Map<number, CachedRow>();
        slots.forEach((b, k) => {
          const n = this.sequences[rows[b]!]!.ids.length - 1;
          kept.set(rows[b]!, { row: k, start: keyStart[b]!, count: n });
        });
        this.kept = { cache, rows: kept };
      }
    } catch (err) {
      keepCache = false;
      throw err;
    } finally {
      fused?.dispose();
      if (!keepCache) cache.dispose();
    }
  }

  /**
   * Prefills the longest prefix the sequences `rows` (`distinct` of them different) all share, short of each one's
   * last token, once, in one row, and keeps it as the cache the call reuses (each row holding the prefix in cache
   * row 0), where that spares the prefill SHARED_PREFIX_TOKENS row-tokens or more: a question's rollouts and the
   * prompts of one role share their chat template and instructions.
   */
  private prefillSharedPrefix(rows: number[], distinct: number, opts: GenerateOptions): void {
    const seqs = rows.map((r) => this.sequences[r]!.ids);
    const first = seqs[0]!;
    const shortest = Math.min(...seqs.map((q) => q.length));
    let P = 0;
    while (P < shortest - 1 && seqs.every((q) => q[P] === first[P])) P++;
    if ((distinct - 1) * P < SHARED_PREFIX_TOKENS) return;
    const model = this.model;
    const e = model.engine;
    const cache = model.newCache(1, P);
    if (!cache.relayout) {
      cache.dispose();
      return;
    }
    try {
      const chunk = Math.max(1, opts.prefillTokens ?? PREFILL_TOKENS);
      e.noGrad(() =>
        e.tidy(() => {
          for (let t0 = 0; t0 < P; t0 += chunk) {
            const T = Math.min(chunk, P - t0);
            const cols = Int32Array.from({ length: T }, (_, i) => t0 + i);
            const ids = Int32Array.from(cols, (t) => first[t]!);
            // Only the keys and values are read: nothing of the last layer's MLP.
            model
              .hidden({ ids, batch: 1, time: T, positions: cols, keyStart: Int32Array.of(0) }, cache, NO_ROWS)
              .dispose();
          }
        }),
      );
    } catch (err) {
      cache.dispose();
      throw err;
    }
    this.prefilled += P;
    this.kept = { cache, rows: new Map(rows.map((r) => [r, { row: 0, start: 0, count: P }])) };
  }

  /**
   * The cache of a call's prefill, row k holding batch row slots[k]: the kept one laid out anew (batch row b's
   * `reuse[b]` cached tokens moved to start at keyStart[b]), or a new one when nothing is reused.
   */
  private cacheFor(rows: number[], slots: number[], reuse: number[], keyStart: Int32Array, capacity: number): KVCache {
    const kept = this.kept;
    this.kept = null;
    if (!kept?.cache.relayout || slots.every((b) => reuse[b] === 0)) {
      kept?.cache.dispose();
      return this.model.newCache(slots.length, capacity);
    }
    const moves = slots.map((b) => {
      const r = rows[b]!;
      const c = kept.rows.get(r);
      const count = reuse[b]!;
      return c && count > 0
        ? { srcRow: c.row, srcStart: c.start, dstStart: keyStart[b]!, count }
        : { srcRow: 0, srcStart: 0, dstStart: 0, count: 0 };
    });
    try {
      kept.cache.relayout!(capacity, moves);
    } catch (err) {
      kept.cache.dispose();
      throw err;
    }
    return kept.cache;
  }

  /**
   * Samples one token for each row of the logits, whose row k is batch row slots[k], and leaves the result on the
   * GPU. `opts.random` is drawn once for each of the `batch` rows, finished ones included, so the draws do not
   * depend on when rows leave the batch or when results are read. On the fused step (`fused`) the sampler also
   * embeds the tokens for the next step and flags rows that sampled a stop id (decodeSample).
   */
  private record(
    logitsFn: () => Tensor,
    opts: GenerateOptions,
    batch: number,
    slots: readonly number[],
    fused: DecodeState | null,
  ): Sampled {
    const e = this.model.engine;
    e.profile?.count('steps');
    if (this.spareOf !== opts.random) {
      this.spare = [];
      this.spareOf = opts.random;
    }
    const draws = Array.from({ length: batch }, () => (this.spare.length ? this.spare.shift()! : opts.random()));
    const uniforms = Float32Array.from(slots, (b) => draws[b]!);
    const out = e.noGrad(() =>
      e.tidy(() => {
        const logits = logitsFn();
        const u = e.tensor(uniforms, [uniforms.length]);
        const how = { temperature: opts.temperature ?? 1, topP: opts.topP ?? 1, uniforms: u };
        // On the fused step the sampler also embeds the tokens for the next step (decodeSample).
        if (fused && samplesEmbed(this.model)) {
          const s = decodeSample(fused, logits, slots.length, how);
          return { ids: e.keep(s.ids), logprobs: e.keep(s.logprobs), embedded: true };
        }
        const s = sample(logits, how);
        return { ids: e.keep(s.ids), logprobs: e.keep(s.logprobs), embedded: false };
      }),
    );
    let embedded = out.embedded;
    return {
      ids: out.ids,
      logprobs: out.logprobs,
      draws,
      takeEmbedded: () => {
        const taken = embedded;
        embedded = false;
        return taken;
      },
      dispose: () => {
        out.ids.dispose();
        out.logprobs.dispose();
      },
    };
  }

  /** Reads the sampled ids and log-probs of several steps with one read-back, and frees them. */
  private async readBack(steps: Sampled[]): Promise<{ ids: Int32Array; logprobs: Float32Array; draws: number[] }[]> {
    const all = await this.model.engine.readAll(steps.flatMap((s) => [s.ids, s.logprobs]));
    const out = steps.map((s, k) => ({
      ids: all[2 * k] as Int32Array,
      logprobs: all[2 * k + 1] as Float32Array,
      draws: s.draws,
    }));
    for (const s of steps) s.dispose();
    steps.length = 0;
    return out;
  }
}

/** One step's sampled ids and log-probs, still on the GPU, and the uniforms it drew. */
interface Sampled {
  ids: Tensor;
  logprobs: Tensor;
  draws: number[];
  /** Whether the fused sampler embedded the next step's rows in the state (true once: the next step takes them). */
  takeEmbedded(): boolean;
  dispose(): void;
}

const NO_IDS = new Int32Array(0);
/** No rows of a prefill chunk read (hidden's keep): the chunk only fills the cache. */
const NO_ROWS = new Int32Array(0);

/**
 * For each batch row, the row whose prefill it takes among those with the same whole sequence (`keys`: the same
 * ids give the same keys and values): the one the kept cache holds most of (`reuse`), the first by batch order of
 * those.
 */
function twins(keys: readonly string[], reuse: readonly number[]): number[] {
  const best = new Map<string, number>();
  keys.forEach((key, b) => {
    const at = best.get(key);
    if (at === undefined || reuse[b]! > reuse[at]!) best.set(key, b);
  });
  return keys.map((key) => best.get(key)!);
}

/**
 * Row-tokens a shared prefix must spare (its length times the distinct sequences past the first) to be prefilled
 * apart: the extra pass and the layout it needs cost about as much on the embedded model (about 100 dispatches).
 */
export const SHARED_PREFIX_TOKENS = 64;

/**
 * The text of the newest tokens of `ids` (those from `from` on), at least `chars` characters of it where there
 * are: the window of tokens doubles until its text is that long. A stop string is checked after every token, so
 * one that appears must overlap the newest token: it lies within the last (its length + the token's) characters,
 * and `chars` adds a few for a window whose first token decodes differently alone (a split UTF-8 character).
 * Decoding the tail keeps the check linear in the turn's length, not quadratic.
 */
export function tailText(
  ids: readonly number[],
  from: number,
  decode: (ids: number[]) => string,
  chars: number,
): string {
  const all = ids.length - from;
  for (let w = Math.min(all, Math.max(1, chars)); ; w = Math.min(all, 2 * w)) {
    const text = decode(ids.slice(ids.length - w));
    if (text.length >= chars || w === all) return text;
  }
}

/** opts.stopStringIds whose own text holds one of opts.stopStrings: the host stops a row at each of them too. */
function stopStringIds(opts: GenerateOptions): number[] {
  const { stopStrings, decode } = opts;
  if (!stopStrings?.length || !decode) return [];
  return (opts.stopStringIds ?? []).filter((id) => {
    const text = decode([id]);
    return stopStrings.some((ss) => text.includes(ss));
  });
}

/** One-shot generation: prompts in, sequences (prompt + continuation, with masks) out. */
export async function generate(model: CausalLM, prompts: number[][], opts: GenerateOptions): Promise<Sequence[]> {
  const session = new GenerationSession(model, prompts);
  await session.run(opts);
  return session.sequences;
}
