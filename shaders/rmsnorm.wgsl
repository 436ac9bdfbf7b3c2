// RMSNorm over the last axis of a row-major [R, D] f32 matrix (lib/rmsnorm_math.wgsl).
// One workgroup per row (row = wid.x + wid.y * nwg.x, so R may exceed the 65535 dispatch cap); its WG
// threads stride over the row and combine partial sums with a tree reduction in workgroup memory. A CPU driver
// takes rmsnorm_rows.wgsl where D is a multiple of 4.
//   forward:    x, w -> y (in `out`), rstd        (rstd is kept for the backward pass)
//   backward_x: x, w, rstd, g -> dx (in `out`)
// The weight gradient, a sum over rows, is in rmsnorm_dw.wgsl (it binds a different set of buffers).
override WG: u32; // the workgroup size, a power of two, set by the host

#include "lib/params.wgsl"
#include "lib/rmsnorm_math.wgsl"
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(5) var<storage, read> g: array<f32>;

var<workgroup> partial: array<f32, WG>;

/** Sum of `v` over the workgroup (every thread gets the total). */
fn workgroupSum(lid: u32, v: f32) -> f32 {
  partial[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { partial[lid] += partial[lid + stride]; }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier(); // partial[] may be reused right after
  return total;
}

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; } // uniform per workgroup, so barriers stay in uniform control flow
  let base = r * p.D;
  var ss = 0.0;
  for (var c = lid; c < p.D; c += WG) {
    let v = x[base + c];
    ss += v * v;
  }
  let s = rmsStd(workgroupSum(lid, ss));
  for (var c = lid; c < p.D; c += WG) { out[base + c] = rmsNormed(vec4f(x[base + c]), s, vec4f(w[c])).x; }
  if (lid == 0u) { rstd[r] = s; }
}

@compute @workgroup_size(WG)
fn backward_x(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.D;
  var dot = 0.0;
  for (var c = lid; c < p.D; c += WG) { dot += g[base + c] * w[c] * x[base + c]; }
  let s = rstd[r];
  let k = rmsGradK(s, workgroupSum(lid, dot));
  for (var c = lid; c < p.D; c += WG) {
    out[base + c] = rmsGrad(vec4f(x[base + c]), vec4f(g[base + c]), vec4f(w[c]), s, k).x;
  }
}
