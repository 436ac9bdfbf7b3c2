// DispatchSpec.source: a kernel's own `const` set in its text, a module per distinct set (src/gpu/stream.ts). Two
// dispatches that differ only in it must run two modules, and a set seen before its own module again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/gpu/engine.ts';
import { nodeHost } from '../../../src/gpu/host/node.ts';

const SHADER = `const N = 1u; // set by the dispatch
override WG: u32;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) { out[gid.x] = f32(N); }
`;

let e: Engine;
beforeAll(async () => {
  const host = nodeHost();
  e = await Engine.create({ ...host, shaderSource: (name) => (name === 'n_const' ? SHADER : host.shaderSource(name)) });
});
afterAll(() => e.destroy());

/** The kernel's output with N set to `n` (or left at 1). */
async function run(n?: number): Promise<number[]> {
  const out = e.empty([8]);
  e.dispatch({
    shader: 'n_const',
    constants: { WG: 8 },
    ...(n === undefined ? {} : { source: { N: n } }),
    bindings: { out },
    workgroups: [1],
  });
  const got = Array.from(await out.readF32());
  out.dispose();
  return got;
}

describe('source constants', () => {
  it('give each set its own module, with the same override constants', async () => {
    expect(await run()).toEqual(new Array(8).fill(1));
    expect(await run(3)).toEqual(new Array(8).fill(3));
    expect(await run(5)).toEqual(new Array(8).fill(5));
    expect(await run(3)).toEqual(new Array(8).fill(3));
    expect(await run()).toEqual(new Array(8).fill(1));
  });

  it('refuse a const the kernel does not declare, naming it', () => {
    const out = e.empty([8]);
    const spec = {
      shader: 'n_const',
      constants: { WG: 8 },
      source: { M: 2 },
      bindings: { out },
      workgroups: [1] as const,
    };
    expect(() => e.dispatch(spec)).toThrow(/shader 'n_const' has no module-scope `const M`/);
    out.dispose();
  });
});
