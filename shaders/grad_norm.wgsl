// The global L2 norm of many tensors (torch.nn.utils.clip_grad_norm_'s total_norm), in two passes:
//   partial: dst[offset + wg] = sum of x*x over the workgroup's strided share of src (one slot per workgroup)
//   finish:  dst[0] = sqrt(sum of src[0 .. n)) (one workgroup over every tensor's slots)
// Slots, not atomics: the result does not depend on scheduling.
struct Params { n: u32, offset: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

override WG: u32; // the workgroup size, set by the host
var<workgroup> sums: array<f32, WG>;

fn reduce(lid: u32, s: f32) -> f32 {
  sums[lid] = s;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { sums[lid] += sums[lid + stride]; }
    workgroupBarrier();
  }
  return sums[0];
}

@compute @workgroup_size(WG)
fn partial(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  var s = 0.0;
  for (var i = wid.x * WG + lid; i < p.n; i += nwg.x * WG) {
    let x = src[i];
    s += x * x;
  }
  let total = reduce(lid, s);
  if (lid == 0u) { dst[p.offset + wid.x] = total; }
}

@compute @workgroup_size(WG)
fn finish(@builtin(local_invocation_index) lid: u32) {
  var s = 0.0;
  for (var i = lid; i < p.n; i += WG) { s += src[i]; }
  let total = reduce(lid, s);
  if (lid == 0u) { dst[0] = sqrt(total); }
}
