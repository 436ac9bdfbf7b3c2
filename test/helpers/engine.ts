// One engine per test file, on whatever adapter Dawn finds (lavapipe on a machine without a GPU).
import { Engine } from '../../src/gpu/engine.ts';
import { nodeHost } from '../../src/gpu/host/node.ts';

let engine: Promise<Engine> | null = null;

export function testEngine(): Promise<Engine> {
  engine ??= Engine.create(nodeHost());
  return engine;
}
