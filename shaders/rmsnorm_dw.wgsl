// Weight gradient of RMSNorm, first of two deterministic passes (no float atomics):
//   part[k, c] = sum over rows r of chunk k of g[r, c] * x[r, c] * rstd[r]
// One thread per (column, chunk of CH rows): threads of a workgroup take adjacent columns so reads are
// coalesced. Workgroup (wid.x, wid.y) = (column block, chunk). The caller then sums `part` over chunks.
override WG: u32; // columns per workgroup, set by the host
struct Params { R: u32, D: u32, CH: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> g: array<f32>;
@group(0) @binding(3) var<storage, read> rstd: array<f32>;
@group(0) @binding(4) var<storage, read_write> part: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let c = gid.x;
  if (c >= p.D) { return; }
  let r0 = wid.y * p.CH;
  let r1 = min(r0 + p.CH, p.R);
  var s = 0.0;
  for (var r = r0; r < r1; r++) { s += g[r * p.D + c] * x[r * p.D + c] * rstd[r]; }
  part[wid.y * p.D + c] = s;
}
