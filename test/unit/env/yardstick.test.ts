// The held-out yardstick is disjoint from everything a model is trained on: its worlds are never drawn by
// pretraining (worldSeed skips them) and share no entity with the self-play world, so no question of it can
// have been seen; dev and test share no question; ids are stable, and a smaller set is a prefix of a larger.
import { describe, expect, it } from 'vitest';
import { seedToInt } from '../../../src/env/random.ts';
import {
  generateWorld,
  makeEvalSet,
  YARDSTICK_SEEDS,
  yardstickQuestions,
  yardstickWorld,
} from '../../../src/env/world.ts';
import { DEFAULT_WORLD_SEED, worldSeed } from '../../../src/pretrain/data.ts';
import { makeConfig } from '../../../src/selfplay/config.ts';
import { Environment } from '../../../src/selfplay/environment.ts';

const dev = yardstickWorld('dev');
const test = yardstickWorld('test');
const devQs = yardstickQuestions(dev, 'dev', 200, [1, 2, 3]);
const testQs = yardstickQuestions(test, 'test', 200, [1, 2, 3]);

describe('the held-out yardstick', () => {
  it('holds 200 questions of each of 1, 2 and 3 hops per split, with unique stable ids', () => {
    for (const [split, qs] of [
      ['dev', devQs],
      ['test', testQs],
    ] as const) {
      for (const h of [1, 2, 3])
        expect(
          qs.filter((q) => q.hops === h),
          `${split} ${h}`,
        ).toHaveLength(200);
      expect(new Set(qs.map((q) => q.id)).size).toBe(qs.length);
      expect(new Set(qs.map((q) => q.question)).size).toBe(qs.length);
      expect(qs[0]!.id).toBe(`${split}-1h-0`);
    }
    // A smaller set is the first questions of a larger one, with the same ids.
    const small = yardstickQuestions(test, 'test', 20, [1, 2]);
    for (const q of small) expect(testQs.find((t) => t.id === q.id)?.question).toBe(q.question);
  });

  it('pretraining never draws a yardstick world or the default world', () => {
    const reserved = new Set([DEFAULT_WORLD_SEED, ...Object.values(YARDSTICK_SEEDS)].map(seedToInt));
    expect(reserved.size).toBe(3);
    for (let seed = 0; seed <= 40; seed++)
      for (let k = 0; k < 3000; k++) expect(reserved.has(seedToInt(worldSeed(seed, k)))).toBe(false);
  });

  it('shares no entity with the self-play world and no question with the other split', () => {
    const own = generateWorld({ seed: DEFAULT_WORLD_SEED, size: 400 });
    const ownText = own.passages.map((p) => `${p.title} ${p.text}`.toLowerCase()).join('\n');
    for (const w of [dev, test])
      for (const e of w.entities) expect(ownText.includes(e.name.toLowerCase()), e.name).toBe(false);
    const ownQs = new Set(makeEvalSet(own, { perHop: 400, hops: [1, 2, 3, 4] }).map((q) => q.question));
    const devSet = new Set(devQs.map((q) => q.question));
    for (const q of testQs) {
      expect(devSet.has(q.question)).toBe(false);
      expect(ownQs.has(q.question)).toBe(false);
    }
    const testNames = test.entities.map((e) => e.name);
    const devText = dev.passages.map((p) => p.text).join('\n');
    expect(testNames.filter((n) => devText.includes(n))).toEqual([]);
  });

  it('evaluation asks the unseen world and searches its corpus; the training world is unchanged', () => {
    const env = Environment.fromWorld(makeConfig('demo', { evalWorld: 'test', evalPerHop: 5, evalHops: [1, 2] }));
    expect(env.world!.seed).toBe(1);
    expect(env.heldOut.world!.seed).toBe(YARDSTICK_SEEDS.test);
    expect(env.evalSet).toBe(env.heldOut.evalSet);
    expect(env.evalSet.map((q) => q.id)).toEqual(
      testQs.filter((q) => q.hops <= 2 && Number(q.id.split('-')[2]) < 5).map((q) => q.id),
    );
    // The first 1-hop question's start entity is found by the held-out world's search, not the training world's.
    const q = testQs[0]!;
    const start = test.entities.find((e) => e.id === q.path[0]!.from)!;
    expect(env.heldOut.search(start.name).some((p) => p.text.includes(start.name))).toBe(true);
    expect(env.search(start.name).some((p) => p.text.includes(start.name))).toBe(false);
    // --eval-world train: the training world's own held-out set, searched there.
    const train = Environment.fromWorld(makeConfig('demo', { evalWorld: 'train' }));
    expect(train.heldOut).toBe(train);
  });
});
