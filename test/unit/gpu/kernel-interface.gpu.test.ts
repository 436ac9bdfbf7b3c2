// The kernel interface parser (src/gpu/kernel-interface.ts) on made-up sources and on every real shader, and the
// engine's by-name binding: its error messages for a missing or extra name, and on the device, that each real
// entry point's parsed bindings are exactly what its `layout: 'auto'` pipeline wants.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseKernelInterface } from '../../../src/gpu/kernel-interface.ts';
import { expandIncludes } from '../../../src/gpu/shader-source.ts';
import { testEngine } from '../../helpers/engine.ts';

const dir = fileURLToPath(new URL('../../../shaders/', import.meta.url));
const read = (name: string) => readFileSync(`${dir}${name}.wgsl`, 'utf8');
const shaders = readdirSync(dir)
  .filter((f) => f.endsWith('.wgsl'))
  .map((f) => f.slice(0, -5))
  .sort();

const SRC = `
override WG: u32;
override MODE: u32 = 0u; // a default
override TILE: u32;
var<workgroup> sh: array<f32, TILE>;
struct Params {
  n: u32, scale: f32, // comment
  off: i32,
}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<storage, read> g: array<f32>;
/* fn fake() { g[0]; } */
fn helper(i: u32) -> f32 { return x[i] * p.scale; } // g here is a comment
@compute @workgroup_size(WG)
fn fwd(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x < p.n) { out[gid.x] = helper(gid.x); }
}
@compute @workgroup_size(WG, 1, 1)
fn bwd(@builtin(global_invocation_id) gid: vec3u) { sh[0] = 1.0; out[gid.x] = g[gid.x] + out.TILE; }
`;

describe('parseKernelInterface', () => {
  it('reads params, resources, overrides and each entry point’s bindings', () => {
    const k = parseKernelInterface('k', SRC);
    expect(k.params).toEqual([
      { name: 'n', type: 'u32' },
      { name: 'scale', type: 'f32' },
      { name: 'off', type: 'i32' },
    ]);
    expect(k.resources.map((r) => `${r.binding}:${r.name}:${r.kind}`)).toEqual([
      '0:p:uniform',
      '1:x:storage',
      '2:out:storage',
      '3:g:storage',
    ]);
    expect(k.overrides).toEqual([
      { name: 'WG', type: 'u32', hasDefault: false },
      { name: 'MODE', type: 'u32', hasDefault: true },
      { name: 'TILE', type: 'u32', hasDefault: false },
    ]);
    expect([...k.entries.keys()]).toEqual(['fwd', 'bwd']);
    // fwd reaches x and p through helper; comments and member names (out.TILE) are not uses; bwd uses TILE
    // through the size of the workgroup array it writes, and both use WG in their @workgroup_size.
    expect(k.entries.get('fwd')!.buffers.map((r) => r.name)).toEqual(['x', 'out']);
    expect(k.entries.get('fwd')!.uniform?.name).toBe('p');
    expect(k.entries.get('bwd')!.buffers.map((r) => r.name)).toEqual(['out', 'g']);
    expect(k.entries.get('bwd')!.uniform).toBeNull();
    expect([...k.entries.get('fwd')!.overrides]).toEqual(['WG']);
    expect([...k.entries.get('bwd')!.overrides].sort()).toEqual(['TILE', 'WG']);
  });

  it('reads a var<uniform> array as a window, beside the params struct', () => {
    const src = SRC.replace(
      '@group(0) @binding(3) var<storage, read> g: array<f32>;',
      '@group(0) @binding(3) var<uniform> g: array<vec4<u32>, 16>;',
    );
    const k = parseKernelInterface('k', src);
    expect(k.resources.map((r) => `${r.binding}:${r.name}:${r.kind}`)).toEqual([
      '0:p:uniform',
      '1:x:storage',
      '2:out:storage',
      '3:g:window',
    ]);
    expect(k.entries.get('bwd')!.buffers.map((r) => `${r.name}:${r.kind}`)).toEqual(['out:storage', 'g:window']);
    expect(k.entries.get('bwd')!.uniform).toBeNull();
  });

  it('refuses what it cannot read, naming the shader', () => {
    const vec = SRC.replace('off: i32', 'off: vec2u');
    expect(() => parseKernelInterface('k', vec)).toThrow(/'k.wgsl'.*'off: vec2u'.*4-byte scalars/);
    const odd = SRC.replace('@group(0) @binding(3) var', '@binding(3) @group(0) var');
    expect(() => parseKernelInterface('k', odd)).toThrow(/'k.wgsl': 4 @binding attributes but only 3/);
    expect(() => parseKernelInterface('k', 'fn f() {}')).toThrow(/'k.wgsl': has no @compute entry point/);
  });

  it('reads every shader in shaders/', () => {
    for (const name of shaders) {
      const k = parseKernelInterface(name, expandIncludes(name, read));
      expect(k.entries.size, name).toBeGreaterThan(0);
      // Every uniform and storage variable declared with @binding is found, with unique binding numbers.
      const declared = [...stripped(expandIncludes(name, read)).matchAll(/var<(uniform|storage)[^>]*>\s*(\w+)/g)];
      expect(k.resources.map((r) => r.name).sort(), name).toEqual(declared.map((m) => m[2]).sort());
      expect(new Set(k.resources.map((r) => r.binding)).size, name).toBe(k.resources.length);
    }
    // Spot checks against the text of two kernels.
    const cr = parseKernelInterface('clipped_ratio', expandIncludes('clipped_ratio', read));
    expect(cr.params.map((p) => p.name)).toEqual(['R', 'clip_lo', 'clip_hi', 'beta']);
    expect(cr.entries.get('tokens')!.buffers.map((r) => r.name)).toEqual([
      'logp',
      'old_logp',
      'ref_logp',
      'adv',
      'mask',
      'out',
      'acc',
    ]);
    const mm = parseKernelInterface('matmul', expandIncludes('matmul', read));
    expect(mm.params.map((p) => p.name)).toEqual(['M', 'N', 'K', 'strideA', 'strideB', 'strideC', 'alpha']);
    expect(mm.resources.map((r) => r.name)).toEqual(['p', 'A', 'B', 'C']);
  });
});

function stripped(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
}

describe('dispatch by name', () => {
  it('names the kernel and the missing or extra field, binding or constant', async () => {
    const e = await testEngine();
    const out = e.zeros([4]);
    const spec = { shader: 'fill', params: { words: 4, bits: 0 }, bindings: { out }, workgroups: [1] as [number] };
    const wg = { WG: 256 };
    e.dispatch({ ...spec, constants: wg });
    expect(() => e.dispatch({ ...spec, constants: wg, params: { words: 4 } })).toThrow(
      "piplay: kernel 'fill' (entry 'main'): no value for param 'bits'; its params are words, bits",
    );
    expect(() => e.dispatch({ ...spec, constants: wg, params: { words: 4, bits: 0, extra: 1 } })).toThrow(
      "piplay: kernel 'fill' (entry 'main'): unknown param 'extra'; its params are words, bits",
    );
    expect(() => e.dispatch({ ...spec, constants: wg, params: { words: 4.5, bits: 0 } })).toThrow(
      "param 'words' is u32 but got 4.5",
    );
    expect(() => e.dispatch({ ...spec, constants: wg, bindings: {} })).toThrow(
      "piplay: kernel 'fill' (entry 'main'): no buffer for binding 'out'; it binds out",
    );
    expect(() => e.dispatch({ ...spec, constants: wg, bindings: { out, dst: out } })).toThrow(
      "piplay: kernel 'fill' (entry 'main'): binding 'dst' given, unknown; it binds out",
    );
    expect(() => e.dispatch(spec)).toThrow(
      "piplay: kernel 'fill' (entry 'main'): no value for constant 'WG' (it has no default); its constants are WG",
    );
    expect(() => e.dispatch({ ...spec, constants: { WG: 256, TILE: 4 } })).toThrow("unknown constant 'TILE'");
    expect(() => e.dispatch({ ...spec, constants: wg, entry: 'fwd' })).toThrow(
      "piplay: kernel 'fill' (entry 'fwd'): no such @compute entry point; it has main",
    );
    // A buffer the module declares but this entry point does not use is refused too.
    const fwd = { shader: 'swiglu', entry: 'forward', constants: { WG: 256 }, params: { n: 4 } };
    expect(() => e.dispatch({ ...fwd, bindings: { gate: out, up: out, out, gy: out }, workgroups: [1] })).toThrow(
      "piplay: kernel 'swiglu' (entry 'forward'): binding 'gy' given, which this entry point does not use; " +
        'it binds gate, up, out',
    );
    // A window takes a window of a tensor, a storage binding a tensor.
    const mlp = {
      shader: 'decode_mlp_lanes',
      constants: { WG: 8, HN: 8 },
      params: Object.fromEntries(
        'rows n A D I eps oSplit guSplit dSplit normAt loraO loraGate loraUp loraDown loraScale'
          .split(' ')
          .map((k) => [k, 0]),
      ),
      workgroups: [1] as [number],
    };
    expect(() => e.dispatch({ ...mlp, bindings: { inp: out, state: out, x: out, y: out, wo0: out } })).toThrow(
      "piplay: kernel 'decode_mlp_lanes' (entry 'main'): binding 'wo0' takes a window of a tensor; it binds inp, " +
        'state, x, y, wo0, wo1, wg0, wg1, wu0, wu1, wd0, wd1',
    );
    const window = { tensor: out, offset: 0, size: 16 };
    expect(() => e.dispatch({ ...mlp, bindings: { inp: window } })).toThrow("binding 'inp' takes a tensor or buffer");
    expect(Array.from(await e.read(out))).toEqual([0, 0, 0, 0]);
    out.dispose();
  });

  // Constants that size workgroup arrays, where 64 for all of them would pass the device's workgroup memory.
  const SIZED: Record<string, Record<string, number>> = {
    decode_attention: { GROUP: 2, DH: 32 },
    decode_attention_lanes: { GROUP: 2, DH: 32, WG: 8 },
    decode_attention_lanes_uniform: { GROUP: 2, DH: 32, WG: 8 },
  };
  it('binds exactly what each real entry point uses (the device agrees)', async () => {
    const e = await testEngine();
    const device = e.device;
    const buf = (usage: number) => device.createBuffer({ size: 4096, usage });
    const uniform = buf(GPUBufferUsage.UNIFORM);
    const storage = buf(GPUBufferUsage.STORAGE);
    let checked = 0;
    let refused = 0;
    for (const name of shaders) {
      let code = expandIncludes(name, read);
      if (!e.info.f16) code = code.replace(/^enable f16;.*$/m, '');
      if (/\bsubgroup/.test(code) && !e.info.subgroups) continue;
      const k = parseKernelInterface(name, code);
      const module = device.createShaderModule({ code });
      for (const [entry, io] of k.entries) {
        // Only the constants the parser says the entry uses: a missed one fails the pipeline.
        const constants: Record<string, number> = {};
        for (const o of k.overrides) {
          if (!o.hasDefault && io.overrides.has(o.name)) constants[o.name] = SIZED[name]?.[o.name] ?? 64;
        }
        const used = [...(io.uniform ? [io.uniform] : []), ...io.buffers];
        const entries = used.map((r) => ({
          binding: r.binding,
          resource: { buffer: r.kind === 'storage' ? storage : uniform },
        }));
        device.pushErrorScope('validation');
        const pipeline = device.createComputePipeline({
          layout: 'auto',
          compute: { module, entryPoint: entry, constants },
        });
        device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
        const err = await device.popErrorScope();
        expect(err?.message ?? null, `${name}.${entry}`).toBeNull();
        checked++;
        // One binding fewer is refused: the check above can tell.
        device.pushErrorScope('validation');
        device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entries.slice(1) });
        if (await device.popErrorScope()) refused++;
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(refused).toBe(checked);
  });
});

describe('pipelines', () => {
  it('are made once per shader, entry and constants, whichever object carries the constants', async () => {
    const e = await testEngine();
    const device = e.device as GPUDevice & { createComputePipeline: GPUDevice['createComputePipeline'] };
    const create = device.createComputePipeline;
    const made: string[] = [];
    device.createComputePipeline = (d) => {
      made.push(d.label ?? '');
      return create.call(device, d);
    };
    const out = e.empty([64]);
    const fill = (constants: Record<string, number>, bits: number) =>
      e.dispatch({ shader: 'fill', constants, params: { words: 64, bits }, bindings: { out }, workgroups: [1] });
    try {
      fill({ WG: 64 }, 1);
      fill({ WG: 64 }, 2); // another object, the same values
      fill({ WG: 32 }, 3);
      fill({ WG: 64 }, 4);
      await e.sync();
    } finally {
      device.createComputePipeline = create;
    }
    expect(made).toEqual(['fill:main:WG=64,', 'fill:main:WG=32,']);
    out.dispose();
  });
});
