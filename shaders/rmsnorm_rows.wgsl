// rmsnorm.wgsl's forward and backward_x (lib/rmsnorm_math.wgsl) for a CPU driver, over rows whose length D is a
// multiple of 4: a thread per row, reading it as vec4s. There a workgroup runs as SIMD lanes on one core, each
// barrier of the workgroup kernel's reduction switches between their saved states, and a storage load costs about
// the same as an f32 or a vec4 (elementwise_vec4.wgsl): one lane summing its own row needs no barrier, no
// workgroup memory and a quarter of the loads. Row = the thread's index in the folded grid (lib/grid.wgsl).
#include "lib/grid.wgsl"
#include "lib/params.wgsl"
#include "lib/rmsnorm_math.wgsl"
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(2) var<storage, read> w: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(5) var<storage, read> g: array<vec4f>;

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = gridIndex(gid, nwg);
  if (r >= p.R) { return; }
  let n4 = p.D / 4u;
  let base = r * n4;
  var ss = vec4f(0.0);
  for (var c = 0u; c < n4; c++) {
    let v = x[base + c];
    ss += v * v;
  }
  let s = rmsStd(dot(ss, vec4f(1.0)));
  for (var c = 0u; c < n4; c++) { out[base + c] = rmsNormed(x[base + c], s, w[c]); }
  rstd[r] = s;
}

@compute @workgroup_size(WG)
fn backward_x(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = gridIndex(gid, nwg);
  if (r >= p.R) { return; }
  let n4 = p.D / 4u;
  let base = r * n4;
  var acc = vec4f(0.0);
  for (var c = 0u; c < n4; c++) { acc += g[base + c] * w[c] * x[base + c]; }
  let s = rstd[r];
  let k = rmsGradK(s, dot(acc, vec4f(1.0)));
  for (var c = 0u; c < n4; c++) { out[base + c] = rmsGrad(x[base + c], g[base + c], w[c], s, k); }
}
