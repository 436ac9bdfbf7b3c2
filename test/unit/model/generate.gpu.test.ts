// Batched generation drops finished rows from the batch (the KV cache keeps only the live rows) without
// changing any row's ids or log-probs: a tiny random model, prompts of different lengths, rows that stop at
// different steps, compared with the whole batch decoded to the end, with each row decoded alone, and
// across tool replies appended between runs; a prompt prefill in chunks of time steps and
// decoding in parts under a KV budget change nothing. All of it on both decoding paths: the general ops and
// the fused step (src/model/decode-step.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/gpu/engine.ts';
import type { CausalLM, KVCache } from '../../../src/model/decoder.ts';
import {
  AHEAD_STEPS,
  GenerationSession,
  generate,
  type GenerateOptions,
  type Sequence,
} from '../../../src/model/generate.ts';
import { Profile } from '../../../src/gpu/profile.ts';
import { type DecodePath, setDecodePath } from '../../../src/model/decode-step.ts';
import { initModel, tinyConfig } from '../../../src/model/init.ts';
import { testEngine } from '../../helpers/engine.ts';
import { randint, rng } from '../../helpers/random.ts';

const V = 48;
const NEW = 10;
const PROMPTS = [1, 7, 3, 5, 2, 6].map((n, i) => Array.from(randint(n, V, 100 + i)));

let e: Engine;
let model: CausalLM;
/** Rows in each decoding step's batch (time = 1 calls of `hidden`), since the last reset. */
let stepRows: number[] = [];

beforeAll(async () => {
  e = await testEngine();
  // A wide initialisation, so that greedy continuations vary from step to step and row to row.
  model = initModel(e, tinyConfig({ vocabSize: V, hidden: 32, layers: 2, heads: 4, kvHeads: 2 }), {
    seed: 3,
    initializerRange: 0.5,
  });
  const hidden = model.hidden.bind(model);
  model.hidden = (input, cache, keep) => {
    if (input.time === 1) stepRows.push(input.batch);
    return hidden(input, cache, keep);
  };
});

/** The step (1-based) at which each row's continuation first holds one of `stop`, or NEW. */
function stopSteps(seqs: Sequence[], stop: number[]): number[] {
  return seqs.map((s, i) => {
    const cont = s.ids.slice(PROMPTS[i]!.length);
    const at = cont.findIndex((id) => stop.includes(id));
    return at < 0 ? NEW : at + 1;
  });
}

/** Two stop ids under which the rows of `seqs` stop at as many different steps as possible (then earliest). */
function pickStopIds(seqs: Sequence[]): number[] {
  let best: number[] = [];
  let bestScore = -Infinity;
  for (let a = 0; a < V; a++) {
    for (let b = a + 1; b < V; b++) {
      const steps = stopSteps(seqs, [a, b]);
      const score = new Set(steps).size * 100 - steps.reduce((x, y) => x + y, 0);
      if (score > bestScore) [best, bestScore] = [[a, b], score];
    }
  }
  return best;
}

/**
 * Runs `fn` with every new KV cache, and every cache laid out anew for a kept one, filled with `value` first (a
 * cache's memory is not cleared: it may hold anything a pooled buffer held before).
 */
async function withNewCachesFilled<T>(value: number, fn: () => Promise<T>): Promise<T> {
  const newCache = model.newCache;
  model.newCache = (batch, capacity) => {
    const cache = newCache.call(model, batch, capacity);
    for (const t of [...cache.keys, ...cache.values]) e.fill(t, value);
    const relayout = cache.relayout!.bind(cache);
    cache.relayout = (cap, moves) => {
      const empty = e.empty;
      e.empty = (shape, dtype) => {
        const t = empty.call(e, shape, dtype);
        if (t.dtype === 'f32') e.fill(t, value);
        return t;
      };
      try {
        relayout(cap, moves);
      } finally {
        e.empty = empty;
      }
    };
    return cache;
  };
  try {
    return await fn();
  } finally {
    model.newCache = newCache;
  }
}

/** Every row of `got` has the ids, stop reason and (to 4 places) log-probs of the same row of `want`. */
function expectSameRows(got: Sequence[], want: Sequence[]): void {
  got.forEach((s, i) => {
    const w = want[i]!;
    expect(s.ids, `row ${i} ids`).toEqual(w.ids);
    expect(s.stop, `row ${i} stop`).toBe(w.stop);
    s.logprobs.forEach((lp, t) => expect(lp, `row ${i} log-prob ${t}`).toBeCloseTo(w.logprobs[t]!, 4));
  });
}

/** Runs `fn` with every new KV cache unable to be laid out anew, so that every row is prefilled whole at every call. */
async function withoutRelayout<T>(fn: () => Promise<T>): Promise<T> {
  const newCache = model.newCache;
  model.newCache = (batch, capacity) => {
    const cache = newCache.call(model, batch, capacity);
    delete cache.relayout;
    return cache;
  };
  try {
    return await fn();
  } finally {
    model.newCache = newCache;
  }
}

function expectPrefix(got: Sequence, want: Sequence, n: number, what: string): void {
  expect(got.ids, `${what} ids`).toEqual(want.ids.slice(0, n));
  expect(got.sampled, `${what} mask`).toEqual(want.sampled.slice(0, n));
  expect(got.logprobs, `${what} log-probs`).toEqual(want.logprobs.slice(0, n));
}

describe.each([
  ['general', 0],
  ['general', 1],
  ['fused', 0],
  ['fused', 1],
] as [DecodePath, number][])('generation on the %s path at temperature %s', (path, temperature) => {
  beforeAll(() => setDecodePath(path));
  afterAll(() => setDecodePath(null));
  const opts = (stopIds: number[] = []): GenerateOptions => ({
    maxNewTokens: NEW,
    temperature,
    stopIds,
    random: rng(5),
  });

  it('finished rows leave the batch; every row is bit-identical to the whole batch decoded to the end', async () => {
    const full = await generate(model, PROMPTS, opts());
    const stop = pickStopIds(full);
    const steps = stopSteps(full, stop);
    expect(new Set(steps).size, `stop steps ${steps}`).toBeGreaterThanOrEqual(3);

    stepRows = [];
    // Read every step: each decoding step runs exactly the rows not yet known to be done.
    const got = await generate(model, PROMPTS, { ...opts(stop), readEvery: 1 });
    got.forEach((s, i) => {
      expectPrefix(s, full[i]!, PROMPTS[i]!.length + steps[i]!, `row ${i}`);
      expect(s.stop).toBe(steps[i]! < NEW || stop.includes(s.ids.at(-1)!) ? 'stop-id' : 'length');
    });
    // Decoding step t runs the rows that have not finished by step t, or more while over half are live
    // (counted where the general path's steps call `hidden`).
    if (path === 'fused') return;
    const last = Math.max(...steps);
    expect(stepRows.length).toBe(last - 1);
    stepRows.forEach((n, t) => {
      const live = steps.filter((s) => s > t + 1).length;
      expect(n).toBeGreaterThanOrEqual(live);
      expect(live).toBeGreaterThan(n / 2);
    });
    const decoded = stepRows.reduce((a, b) => a + b, 0);
    expect(decoded).toBeLessThan(PROMPTS.length * (last - 1));
    console.log(
      `temperature ${temperature}: stop steps ${steps}; rows per decoding step ${stepRows} (${decoded} row-steps, ${PROMPTS.length * (last - 1)} without dropping)`,
    );
  });

  // Also with a kept cache on the fused step, where the last step's embedded rows carry over a read. (On the general
  // ops a kept cache loses the rows that left the batch, at reads that differ with readEvery, so their next prefill
  // rounds differently.)
  it.each(path === 'fused' ? [false, true] : [false])(
    'reading the tokens back every 3 or 8 steps gives what reading every step gives, run after run (kept cache %s)',
    async (keepCache) => {
      // A third of the vocabulary stops a row: every row stops within a few steps, before the first read.
      const stop = Array.from({ length: V / 3 }, (_, i) => 3 * i);
      // Two turns from one random stream, with a tool reply between: a draw taken for a step after the last row
      // stopped must come back for the second turn.
      const turns = async (readEvery: number) => {
        const session = new GenerationSession(model, PROMPTS, { keepCache });
        try {
          const o: GenerateOptions = { ...opts(stop), random: rng(11), readEvery };
          await session.run(o);
          firstStops = session.sequences.map((s) => s.stop);
          session.sequences.forEach((_, k) => session.append(k, [1 + (k % 7), 2 + (k % 5)]));
          await session.run(o);
          return session.sequences;
        } finally {
          session.dispose();
        }
      };
      let firstStops: (string | null)[] = [];
      const every = await turns(1);
      expect(firstStops).toEqual(PROMPTS.map(() => 'stop-id'));
      for (const k of [3, 8]) {
        stepRows = [];
        const got = await turns(k);
        got.forEach((s, i) => {
          expectPrefix(s, every[i]!, every[i]!.ids.length, `readEvery ${k}, row ${i}`);
          expect(s.ids.length).toBe(every[i]!.ids.length);
          expect(s.stop).toBe(every[i]!.stop);
        });
      }
    },
  );

  // Left-padded prompts, rows that stop at different steps, a kept cache laid out anew for tool replies: no kernel
  // reads a cache column nothing wrote (a NaN there would reach the log-probs).
  it('a new cache full of NaN decodes as one full of zeros', async () => {
    const full = await generate(model, PROMPTS, opts());
    const stop = pickStopIds(full);
    const replies = PROMPTS.map((_, i) => Array.from(randint(1 + (i % 3), V, 400 + i)));
    const turns = async () => {
      const session = new GenerationSession(model, PROMPTS, { keepCache: true });
      try {
        const o: GenerateOptions = { ...opts(stop), maxNewTokens: 6, random: rng(17), readEvery: 4 };
        await session.run(o);
        session.sequences.forEach((_, k) => session.append(k, replies[k]!));
        await session.run(o, [0, 1, 3, 4]);
        return session.sequences.map((s) => ({ ...s }));
      } finally {
        session.dispose();
      }
    };
    const zeros = await withNewCachesFilled(0, turns);
    const nan = await withNewCachesFilled(Number.NaN, turns);
    nan.forEach((s, i) => expectPrefix(s, zeros[i]!, zeros[i]!.ids.length, `row ${i}`));
    expect(nan.flatMap((s) => s.logprobs).every(Number.isFinite)).toBe(true);
  });

  it('stop strings with reads every 8 steps stop each row where reading every step does', async () => {
    const decode = (ids: number[]) => ids.map((id) => String.fromCharCode(97 + (id % 26))).join('');
    const full = await generate(model, PROMPTS, opts());
    // A two-letter string that some rows' continuations hold.
    const text = full.map((s, i) => decode(s.ids.slice(PROMPTS[i]!.length)));
    const stopStrings = [text[0]!.slice(2, 4), text[3]!.slice(5, 7)];
    const o = () => ({ ...opts(), stopStrings, decode });
    const one = await generate(model, PROMPTS, { ...o(), readEvery: 1 });
    expect(one.some((s) => s.stop === 'stop-string')).toBe(true);
    const eight = await generate(model, PROMPTS, { ...o(), readEvery: 8 });
    eight.forEach((s, i) => {
      expectPrefix(s, one[i]!, one[i]!.ids.length, `row ${i}`);
      expect(s.stop).toBe(one[i]!.stop);
    });
  });

  it('a stop string that is one token of its own stops its row on the GPU, with the same outputs', async () => {
    // Each id reads as one letter, so a one-letter stop string is the whole text of two of the 48 ids.
    const decode = (ids: number[]) => ids.map((id) => String.fromCharCode(97 + (id % 26))).join('');
    const full = await generate(model, PROMPTS, opts());
    const stopStrings = [decode([full[0]!.ids[PROMPTS[0]!.length + 2]!])]; // row 0 stops by its third token
    const letterIds = Array.from({ length: V }, (_, id) => id).filter((id) => decode([id]) === stopStrings[0]);
    const other = letterIds[0] === 0 ? 1 : 0; // not the letter: ignored
    type Kept = { cache: KVCache; rows: Map<number, { row: number; start: number; count: number }> };
    const run = (stopStringIds?: number[]) =>
      withNewCachesFilled(Number.NaN, async () => {
        const session = new GenerationSession(model, PROMPTS, { keepCache: true });
        try {
          await session.run({ ...opts(), stopStrings, decode, readEvery: 8, stopStringIds });
          // On the fused step (where a kept cache keeps its stopped rows): where row 0's stop token's key would
          // go had the row decoded on.
          if (path !== 'fused') return { seqs: session.sequences.map((s) => ({ ...s })), stopKey: 0 };
          const kept = (session as unknown as { kept: Kept }).kept;
          const at = kept.rows.get(0)!;
          const { kvHeads, headDim } = model.cfg;
          const [keys] = await e.readAll([kept.cache.keys[0]!]);
          const stopKey = keys![(at.row * kvHeads * kept.cache.capacity + at.start + at.count) * headDim]!;
          return { seqs: session.sequences.map((s) => ({ ...s })), stopKey };
        } finally {
          session.dispose();
        }
      });
    const host = await run();
    const gpu = await run([other, ...letterIds]);
    expect(host.seqs[0]!.stop).toBe('stop-string');
    expectSameRows(gpu.seqs, host.seqs);
    // The fused step decoded row 0 past its stop until the read unless the GPU knew the stop.
    if (path === 'fused') {
      expect(host.stopKey).not.toBeNaN();
      expect(gpu.stopKey).toBeNaN();
    }
  });

  it('records the first steps of the next batch before a read is awaited, and none past the last stop', async () => {
    // Steps recorded so far (the profile counts them), as each step's tokens reach the host.
    const recordedAt = async (o: GenerateOptions) => {
      const profile = new Profile();
      const seen: number[] = [];
      const recorded = () => [...profile.phases.values()].reduce((a, t) => a + t.steps, 0);
      e.profile = profile;
      try {
        const seqs = await generate(model, PROMPTS, { ...o, onStep: () => seen.push(recorded()) });
        return { seqs, seen, total: recorded() };
      } finally {
        e.profile = null;
      }
    };
    const every = 4;
    // When a read's tokens arrive, AHEAD_STEPS steps past it are on the GPU (step s is read with the batch that
    // ends at step ceil(s / every) * every; the prefill is step 1).
    const ahead = (s: number) => Math.min(NEW, Math.ceil(s / every) * every + AHEAD_STEPS);
    const { seen } = await recordedAt({ ...opts(), readEvery: every });
    expect(seen).toEqual(seen.map((_, i) => ahead(i + 1)));
    // Rows that all stop within the first read (each row's second token stops it): only AHEAD_STEPS steps go on
    // past it.
    const full = await generate(model, PROMPTS, opts());
    const stop = [...new Set(full.map((s, i) => s.ids[PROMPTS[i]!.length + 1]!))];
    const one = await generate(model, PROMPTS, { ...opts(stop), readEvery: 1 });
    const last = Math.max(...one.map((s, i) => s.ids.length - PROMPTS[i]!.length));
    expect(last).toBeLessThanOrEqual(every);
    const stopped = await recordedAt({ ...opts(stop), readEvery: every });
    expectSameRows(stopped.seqs, one);
    expect(stopped.total).toBe(ahead(last));
  });

  it('a row the host stops (a stop string) is flagged for the steps after those already ahead', async () => {
    if (path !== 'fused') return; // the general ops have no stop flags: their stopped rows leave at a read
    const decode = (ids: number[]) => ids.map((id) => String.fromCharCode(97 + (id % 26))).join('');
    const full = await generate(model, PROMPTS, opts());
    // Two letters row 0 writes early on: the host finds them in its text, the GPU cannot.
    const cont = decode(full[0]!.ids.slice(PROMPTS[0]!.length));
    const stopStrings = [cont.slice(1, 3)];
    const every = 3;
    type Kept = { cache: KVCache; rows: Map<number, { row: number; start: number; count: number }> };
    const got = await withNewCachesFilled(Number.NaN, async () => {
      const session = new GenerationSession(model, PROMPTS, { keepCache: true });
      try {
        await session.run({ ...opts(), stopStrings, decode, readEvery: every });
        const kept = (session as unknown as { kept: Kept }).kept;
        const at = kept.rows.get(0)!;
        const { kvHeads, headDim } = model.cfg;
        const [keys] = await e.readAll([kept.cache.keys[0]!]);
        // Row 0's keys written past its stop token (each column holds the key of one token).
        let past = 0;
        while (!Number.isNaN(keys![(at.row * kvHeads * kept.cache.capacity + at.start + at.count + past) * headDim]!))
          past++;
        return { seqs: session.sequences.map((s) => ({ ...s })), past };
      } finally {
        session.dispose();
      }
    });
    const row0 = got.seqs[0]!;
    expect(row0.stop).toBe('stop-string');
    const stoppedAt = row0.ids.length - PROMPTS[0]!.length; // the step row 0 stopped at
    const readAt = Math.ceil(stoppedAt / every) * every;
    const steps = Math.max(...got.seqs.map((s, i) => s.ids.length - PROMPTS[i]!.length));
    // The call decoded on past the steps already ahead at the read that found the stop.
    expect(steps).toBeGreaterThan(readAt + AHEAD_STEPS);
    // Step s writes the key of the token step s - 1 sampled: the stop token's key and the ones after it, up to the
    // last step ahead of the read, and no more.
    expect(got.past).toBe(readAt + AHEAD_STEPS - stoppedAt);
  });

  it('rows that share a prefix prefill it once and decode as rows prefilled whole', async () => {
    const prefix = Array.from(randint(40, V, 77));
    const prompts = PROMPTS.map((p) => [...prefix, ...p]);
    const run = async () => {
      const session = new GenerationSession(model, prompts);
      await session.run({ ...opts(), readEvery: 3 });
      return session;
    };
    const once = await run();
    const whole = await withoutRelayout(run);
    expectSameRows(once.sequences, whole.sequences);
    // The prefix in one row, then every row's own tokens (as wide as the longest); against every row whole.
    const own = Math.max(...PROMPTS.map((p) => p.length));
    expect(once.prefilled).toBe(prefix.length + prompts.length * own);
    expect(whole.prefilled).toBe(prompts.length * (prefix.length + own));
  });

  it('a session that keeps its cache prefills only the new tokens and decodes as one that prefills all', async () => {
    const full = await generate(model, PROMPTS, opts());
    const stop = pickStopIds(full);
    const replies = PROMPTS.map((_, i) => Array.from(randint(1 + (i % 3), V, 300 + i)));
    const turns = async (keepCache: boolean) => {
      const session = new GenerationSession(model, PROMPTS, { keepCache });
      const o: GenerateOptions = { ...opts(stop), maxNewTokens: 5, random: rng(13), readEvery: 3 };
      const prefilled: number[] = [];
      const run = async (which?: number[]) => {
        const before = session.prefilled;
        await session.run(o, which);
        prefilled.push(session.prefilled - before);
      };
      try {
        await run();
        session.sequences.forEach((_, k) => session.append(k, replies[k]!));
        // A subset goes on (a rollout's searchers), then two of them in another order with no reply between
        // (only their last sampled token is new), then one that sat out a call.
        await run([0, 2, 3, 5]);
        await run([5, 2]);
        await run([1, 5]);
      } finally {
        session.dispose();
      }
      return { seqs: session.sequences, prefilled };
    };
    const whole = await turns(false);
    const kept = await turns(true);
    expectSameRows(kept.seqs, whole.seqs);
    kept.seqs.forEach((s, i) => expect(s.sampled, `row ${i} mask`).toEqual(whole.seqs[i]!.sampled));
    // The first call prefills the prompts either way; then a kept cache prefills the rows' new tokens only (on the
    // general ops, rows that left the batch when most had stopped are prefilled whole again).
    const longest = (rows: number[], at: number[]) => rows.length * Math.max(...rows.map((r) => at[r]!));
    expect(kept.prefilled[0]).toBe(whole.prefilled[0]);
    const newTokens = replies.map((r) => r.length + 1);
    if (path === 'fused') {
      expect(kept.prefilled[1]).toBe(longest([0, 2, 3, 5], newTokens));
      expect(kept.prefilled[2]).toBe(2);
    }
    expect(kept.prefilled.slice(1).every((n, k) => n <= whole.prefilled[k + 1]!)).toBe(true);
    expect(kept.prefilled.slice(1).reduce((a, b) => a + b)).toBeLessThan(
      whole.prefilled.slice(1).reduce((a, b) => a + b),
    );
    console.log(`${path}: prefilled ${whole.prefilled} tokens per call, ${kept.prefilled} with the cache kept`);
  });

  // The fused step leaves a stopped row alone: one whose first token (the prefill's) is a stop id writes nothing
  // to the cache in the steps decoded before the first read.
  it.skipIf(path !== 'fused')('a row whose first token is a stop id is left alone until the read', async () => {
    const full = await generate(model, PROMPTS, { ...opts(), readEvery: 1 });
    const stop = full[0]!.ids[PROMPTS[0]!.length]!;
    const firsts = full.map((s, i) => s.ids[PROMPTS[i]!.length]);
    expect(
      firsts.some((id) => id !== stop),
      'some row goes on',
    ).toBe(true);
    const session = new GenerationSession(model, PROMPTS, { keepCache: true });
    try {
      await withNewCachesFilled(0, () => session.run({ ...opts([stop]), readEvery: 8 }));
      expect(session.sequences[0]!.stop).toBe('stop-id');
      const { cache, rows } = (session as unknown as { kept: { cache: KVCache; rows: Map<number, { row: number }> } })
        .kept;
      const L = Math.max(...PROMPTS.map((p) => p.length));
      const [, H, cap, Dh] = cache.keys[0]!.shape as [number, number, number, number];
      const keys = await cache.keys[0]!.readF32();
      const row = rows.get(0)!.row; // the cache row of sequence 0
      for (let h = 0; h < H; h++) {
        const from = ((row * H + h) * cap + L) * Dh;
        expect(
          Array.from(keys.slice(from, from + 7 * Dh)).every((v) => v === 0),
          `head ${h}`,
        ).toBe(true);
      }
    } finally {
      session.dispose();
    }
  });

  // A chunk of the prefill runs only the rows with new tokens in it: in chunks of one time step, a call prefills
  // exactly its new tokens (the prompts without their left padding, then each reply and last sampled token).
  it('a prefill in chunks of one time step runs only the new tokens, as the whole prefill decodes', async () => {
    const full = await generate(model, PROMPTS, opts());
    const stop = pickStopIds(full);
    const replies = PROMPTS.map((_, i) => Array.from(randint(1 + (i % 4), V, 500 + i)));
    const turns = async (prefillTokens?: number) => {
      const session = new GenerationSession(model, PROMPTS, { keepCache: true });
      const o: GenerateOptions = { ...opts(stop), maxNewTokens: 5, random: rng(19), readEvery: 2, prefillTokens };
      const prefilled: number[] = [];
      const fresh: number[] = [];
      const run = async (which: number[]) => {
        const before = session.prefilled;
        const lens = which.map((r) => session.sequences[r]!.ids.length);
        await session.run(o, which);
        prefilled.push(session.prefilled - before);
        return lens;
      };
      try {
        await run(PROMPTS.map((_, i) => i));
        fresh.push(PROMPTS.reduce((n, p) => n + p.length, 0));
        session.sequences.forEach((_, k) => session.append(k, replies[k]!));
        await run([4, 0, 2, 5]);
        fresh.push([4, 0, 2, 5].reduce((n, r) => n + replies[r]!.length + 1, 0));
      } finally {
        session.dispose();
      }
      return { seqs: session.sequences, prefilled, fresh };
    };
    const whole = await turns();
    const rows = await turns(1);
    // (On the general ops rows that left the batch lose their cache: they are prefilled whole again.)
    expect(rows.prefilled[0]).toBe(rows.fresh[0]);
    if (path === 'fused') expect(rows.prefilled[1]).toBe(rows.fresh[1]);
    expect(whole.prefilled[1]).toBeGreaterThan(rows.prefilled[1]!);
    expectSameRows(rows.seqs, whole.seqs);
  });

  // A question's rollouts start from one prompt: it is prefilled once and the other rows copy its cache row.
  it('rows with the same prompt are prefilled once and decode as when each is prefilled', async () => {
    const prompts = [0, 1, 0, 2, 1, 0].map((i) => PROMPTS[i + 3]!);
    const L = Math.max(...prompts.map((p) => p.length));
    const run = async () => {
      const session = new GenerationSession(model, prompts);
      try {
        await session.run({ ...opts(), maxNewTokens: 6, random: rng(23), readEvery: 3 });
        return { seqs: session.sequences, prefilled: session.prefilled };
      } finally {
        session.dispose();
      }
    };
    // A cache that cannot be laid out anew: every row is prefilled.
    const each = await withoutRelayout(run);
    const once = await run();
    expect(each.prefilled).toBe(prompts.length * L);
    expect(once.prefilled).toBe(3 * L);
    expectSameRows(once.seqs, each.seqs);
  });

  // Rollouts that sampled the same tokens and got the same tool reply are the same sequence again at the next call:
  // with the cache kept, each distinct sequence's new tokens are prefilled once and its twins copy its cache row.
  it('rows that are the same sequence at a later call are prefilled once and decode as when each is', async () => {
    const groups = [0, 1, 0, 2, 1, 0];
    const prompts = groups.map((i) => PROMPTS[i + 3]!);
    const replies = groups.map((i) => Array.from(randint(2 + i, V, 700 + i)));
    // One draw for every row: rows with the same prompt sample the same tokens at any temperature.
    const o: GenerateOptions = { ...opts(), maxNewTokens: 4, random: () => 0.37, readEvery: 2 };
    const run = async (second: (session: GenerationSession) => Promise<void>) => {
      const session = new GenerationSession(model, prompts, { keepCache: true });
      try {
        await session.run(o);
        session.sequences.forEach((_, k) => session.append(k, replies[k]!));
        const before = session.prefilled;
        await second(session);
        return { seqs: session.sequences, second: session.prefilled - before };
      } finally {
        session.dispose();
      }
    };
    // A cache that cannot be laid out anew: every row is prefilled whole at every call.
    const each = await withoutRelayout(() => run((session) => session.run(o)));
    const once = await run((session) => withNewCachesFilled(Number.NaN, () => session.run(o)));
    groups.forEach((g, i) => expect(once.seqs[i]!.ids, `row ${i}`).toEqual(once.seqs[groups.indexOf(g)]!.ids));
    // The second call's new tokens of the three distinct rows: each reply and the last sampled token.
    expect(once.second).toBe(3 * Math.max(...replies.map((r) => r.length + 1)));
    expect(each.second).toBeGreaterThan(once.second);
    expectSameRows(once.seqs, each.seqs);
  });

  it('a prefill in chunks of two time steps gives every row the same ids and log-probs', async () => {
    const whole = await generate(model, PROMPTS, opts());
    const chunked = await generate(model, PROMPTS, { ...opts(), prefillTokens: 2 * PROMPTS.length });
    chunked.forEach((s, i) => expectPrefix(s, whole[i]!, whole[i]!.ids.length, `row ${i}`));
  });

  // Greedy rows do not depend on their batch: under a KV budget of one row, the rows decode one by one.
  it.skipIf(temperature !== 0)('a KV budget of one row decodes the rows in parts, each as in the batch', async () => {
    stepRows = [];
    const parts = await generate(model, PROMPTS, { ...opts(), kvBudgetBytes: 1 });
    if (path === 'general') expect(Math.max(...stepRows)).toBe(1);
    const whole = await generate(model, PROMPTS, opts());
    parts.forEach((s, i) => expectPrefix(s, whole[i]!, whole[i]!.ids.length, `row ${i}`));
  });

  // Alone, a row draws its own uniforms; greedy decoding does not use them.
  it.skipIf(temperature !== 0)('every row equals that row generated alone', async () => {
    const full = await generate(model, PROMPTS, opts());
    const stop = pickStopIds(full);
    const got = await generate(model, PROMPTS, opts(stop));
    for (const [i, p] of PROMPTS.entries()) {
      const [alone] = await generate(model, [p], opts(stop));
      expectPrefix(got[i]!, alone!, alone!.ids.length, `row ${i} alone`);
      expect(got[i]!.ids.length).toBe(alone!.ids.length);
    }
  });

  it.skipIf(temperature !== 0)(
    'tool replies appended between runs: batched turns equal each row on its own',
    async () => {
      const full = await generate(model, PROMPTS, opts());
      const stop = pickStopIds(full);
      const replies = PROMPTS.map((_, i) => Array.from(randint(i % 3, V, 200 + i)));
      const turns = async (prompts: number[][], rows: number[]) => {
        const session = new GenerationSession(model, prompts);
        const r = rng(9);
        const o: GenerateOptions = { maxNewTokens: 4, temperature, stopIds: stop, random: r };
        await session.run(o);
        rows.forEach((row, k) => session.append(k, replies[row]!));
        // Only the rows that made a tool call (a reply) go on, as in a rollout.
        const which = rows.flatMap((row, k) => (replies[row]!.length > 0 ? [k] : []));
        await session.run(o, which);
        return session.sequences;
      };
      const batched = await turns(
        PROMPTS,
        PROMPTS.map((_, i) => i),
      );
      for (const [i, p] of PROMPTS.entries()) {
        const [alone] = await turns([p], [i]);
        expectPrefix(batched[i]!, alone!, alone!.ids.length, `row ${i} across turns`);
        expect(batched[i]!.ids.length).toBe(alone!.ids.length);
      }
    },
  );
});
