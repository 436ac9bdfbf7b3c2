// generateWorld: a seedable fictional encyclopedia (entities, relations, one passage per entity).

import { Rng, type Seed } from '../random.ts';
import { buildGraph } from './entities.ts';
import { WorldIndex } from './index.ts';
import { renderPassages } from './render.ts';
import type { World } from './types.ts';

export interface WorldSettings {
  seed: Seed;
  /** Number of entities = passages (default 400; exact for size >= 20, a small minimum below). */
  size?: number;
}

/** The default size of the embedded demo world. */
export const DEFAULT_WORLD_SIZE = 400;

/** A world, deterministic in (seed, size). */
export function generateWorld(settings: WorldSettings): World {
  const size = settings.size ?? DEFAULT_WORLD_SIZE;
  if (!(Number.isInteger(size) && size >= 1))
    throw new RangeError(`generateWorld: size must be a positive integer (got ${size})`);
  const seed = settings.seed;
  const rng = new Rng(seed);
  const { entities, relations } = buildGraph(rng.fork('graph'), size);
  const world: World = { seed, size, entities, relations, passages: [] };
  world.passages = renderPassages(new WorldIndex(world), rng.fork('render'));
  return world;
}
