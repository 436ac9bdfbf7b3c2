// The held-out yardstick: question sets from worlds that neither pretraining nor self-play ever draws.
//
// A run trains on its own world (the config's world seed; the embedded default's is 1) and pretraining draws
// its worlds from `pretrain-<seed>-<k>` seeds that skip every seed named here (src/pretrain/data.ts). So a
// student evaluated on the 'dev' or 'test' world answers questions about entities it has never read of, by
// searching that world's own corpus: what is measured is the skill (search, read, answer), never a
// remembered fact. 'dev' is for choosing settings, 'test' for reporting; they are separate worlds.
import type { Seed } from '../random.ts';
import { DEFAULT_WORLD_SIZE, generateWorld } from './generate.ts';
import { makeEvalSet, type WorldQuestion } from './questions.ts';
import type { World } from './types.ts';

export type YardstickSplit = 'dev' | 'test';
export const YARDSTICK_SPLITS: readonly YardstickSplit[] = ['dev', 'test'];

/** Each split's world seed; no other part of piplay generates a world from these. */
export const YARDSTICK_SEEDS: Readonly<Record<YardstickSplit, Seed>> = {
  dev: 'piplay-yardstick-dev',
  test: 'piplay-yardstick-test',
};

/** A held-out question with a stable id: the same question has the same id in every run and arm. */
export interface HeldOutQuestion extends WorldQuestion {
  id: string;
}

/** The world of a split: the default size, so its search tool is as hard as the training world's. */
export function yardstickWorld(split: YardstickSplit): World {
  return generateWorld({ seed: YARDSTICK_SEEDS[split], size: DEFAULT_WORLD_SIZE });
}

/**
 * The split's questions: `perHop` per hop count (a prefix of a longer set is the same questions, as
 * makeEvalSet draws each hop count on its own stream), ids `<split>-<hops>h-<index>`.
 */
export function yardstickQuestions(
  world: World,
  split: YardstickSplit,
  perHop: number,
  hops: readonly number[],
): HeldOutQuestion[] {
  const qs = makeEvalSet(world, { perHop, hops, seed: `yardstick-${split}` });
  const counts = new Map<number, number>();
  return qs.map((q) => {
    const k = counts.get(q.hops) ?? 0;
    counts.set(q.hops, k + 1);
    return { ...q, id: `${split}-${q.hops}h-${k}` };
  });
}
