// SwiGLU (lib/swiglu_math.wgsl) four elements a thread as one vec4, over same-shaped f32 tensors whose length
// is a multiple of 4 (elementwise_vec4.wgsl says why); swiglu.wgsl takes any length. Bindings and entries as there.
#include "lib/grid.wgsl"
#include "lib/swiglu_math.wgsl"
struct Params { n: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> gate: array<vec4f>;
@group(0) @binding(2) var<storage, read> up: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<storage, read> gy: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> dup: array<vec4f>;

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.n / 4u) { return; }
  out[i] = swigluForward(gate[i], up[i]);
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.n / 4u) { return; }
  let d = swigluBackward(gate[i], up[i], gy[i]);
  dup[i] = d.dup;
  out[i] = d.dgate;
}
