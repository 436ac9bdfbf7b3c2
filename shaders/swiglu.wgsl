// SwiGLU (lib/swiglu_math.wgsl), elementwise over same-shaped f32 tensors, one element a thread (swiglu_vec4.wgsl:
// four, where the length is a multiple of 4):
//   forward:  gate, up -> y (in `out`)
//   backward: gate, up, gy -> dgate (in `out`), dup
// i = gid.x + gid.y * (threads per grid row) for launches past 65535 workgroups.
#include "lib/grid.wgsl"
#include "lib/swiglu_math.wgsl"
struct Params { n: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> gy: array<f32>;
@group(0) @binding(5) var<storage, read_write> dup: array<f32>;

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.n) { return; }
  out[i] = swigluForward(vec4f(gate[i]), vec4f(up[i])).x;
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.n) { return; }
  let d = swigluBackward(vec4f(gate[i]), vec4f(up[i]), vec4f(gy[i]));
  dup[i] = d.dup.x;
  out[i] = d.dgate.x;
}
