// A small seeded PRNG (mulberry32) for everything in `env` that must be reproducible from a seed:
// the world generator, question sampling, partial-QCP dropping.
//
// `fork(label)` derives an independent stream from the *seed* this Rng was created with and the label,
// not from its current state, so adding draws to one part of the generator never shifts another part.

/** 32-bit hash of a string (FNV-1a) mixed with a seed, finalised with murmur3's fmix32. */
export function hash32(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return fmix32(h);
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A seed is a 32-bit integer or any string (hashed). */
export type Seed = number | string;

export function seedToInt(seed: Seed): number {
  return typeof seed === 'string' ? hash32(seed) : fmix32(Math.trunc(seed) >>> 0);
}

export class Rng {
  /** The 32-bit seed this generator started from (forks derive from it). */
  readonly seed: number;
  private state: number;

  constructor(seed: Seed) {
    this.seed = seedToInt(seed);
    this.state = this.seed;
  }

  /** Uniform float in [0, 1) (mulberry32). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /**
   * Uniform integer, half-open like Python's randrange: `int(n)` in [0, n), `int(lo, hi)` in [lo, hi).
   * Throws on an empty range.
   */
  int(a: number, b?: number): number {
    const lo = b === undefined ? 0 : a;
    const hi = b === undefined ? a : b;
    if (!(hi > lo)) throw new RangeError(`Rng.int: empty range [${lo}, ${hi})`);
    return lo + Math.floor(this.next() * (hi - lo));
  }

  /** true with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element; throws on an empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: empty array');
    return items[this.int(items.length)]!;
  }

  /** A shuffled copy (Fisher-Yates); the input is not modified. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = out[i]!;
      out[i] = out[j]!;
      out[j] = t;
    }
    return out;
  }

  /** k distinct elements in random order (all of them if k >= length). */
  sample<T>(items: readonly T[], k: number): T[] {
    return this.shuffle(items).slice(0, Math.max(0, k));
  }

  /** Index chosen with probability proportional to weights[i] (non-negative, not all zero). */
  weightedIndex(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    if (!(total > 0)) throw new RangeError('Rng.weightedIndex: weights sum to zero');
    let u = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i]!;
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  /** An independent generator for a named sub-task, derived from this generator's seed and the label. */
  fork(label: string): Rng {
    return new Rng(hash32(label, this.seed));
  }
}
