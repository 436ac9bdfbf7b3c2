// SwiGLU, elementwise over same-shaped f32 tensors: y = silu(gate) * up, silu(a) = a * sigmoid(a).
//   forward:  gate, up -> y (in `out`)
//   backward: gate, up, gy -> dgate (in `out`), dup
//     dup   = gy * silu(gate)
//     dgate = gy * up * s * (1 + gate * (1 - s)),  s = sigmoid(gate)
// One thread per element; i = gid.x + gid.y * (threads per grid row) for launches past 65535 workgroups.
#include "lib/grid.wgsl"
struct Params { n: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> gy: array<f32>;
@group(0) @binding(5) var<storage, read_write> dup: array<f32>;

// 1 / (1 + exp(-a)): exp overflows to +inf for a < -88 and the quotient is then 0, as it should be.
fn sigmoid(a: f32) -> f32 {
  return 1.0 / (1.0 + exp(-a));
}

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.n) { return; }
  let a = gate[i];
  out[i] = a * sigmoid(a) * up[i];
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.n) { return; }
  let a = gate[i];
  let s = sigmoid(a);
  let g = gy[i];
  dup[i] = g * a * s;
  out[i] = g * up[i] * s * (1.0 + a * (1.0 - s));
}
