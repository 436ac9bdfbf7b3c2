// Sums over one axis of a row-major [R, C] f32 matrix, times `scale`.
//   rows: out[r] = scale * sum_c x[r, c]   (one workgroup per row, a tree reduction)
//   cols: out[c] = scale * sum_r x[r, c]   (one thread per column; used for broadcast gradients)
struct Params { R: u32, C: u32, scale: f32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

#include "lib/grid.wgsl"
var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn rows(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.C;
  var s = 0.0;
  for (var c = lid; c < p.C; c += WG) { s += x[base + c]; }
  partial[lid] = s;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { partial[lid] += partial[lid + stride]; }
    workgroupBarrier();
  }
  if (lid == 0u) { out[r] = p.scale * partial[0]; }
}

@compute @workgroup_size(WG)
fn cols(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let c = gridIndex(gid, nwg);
  if (c >= p.C) { return; }
  var s = 0.0;
  for (var r = 0u; r < p.R; r++) { s += x[r * p.C + c]; }
  out[c] = p.scale * s;
}
