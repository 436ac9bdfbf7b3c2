// Top-K KL distillation, backward into the student logits (the derivation is in topk_kl.wgsl).
// One workgroup per row: every logit first gets the off-support value
//   dz[r, j] = g_r * (exp(s_j - a_tail) * c_tail - exp(s_j) * C),  s_j = z_j - lseS
// (all zero when renormalised), then, after a storage barrier, the K support entries are overwritten with
// dz[r, ids[r, k]] = g_r * coef[r, k]. stats[r] = (lseS, a_tail, c_tail, C) come from the forward.
struct Params { R: u32, V: u32, K: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> student: array<f32>;
@group(0) @binding(2) var<storage, read> stats: array<f32>;
@group(0) @binding(3) var<storage, read> coef: array<f32>;
@group(0) @binding(4) var<storage, read> ids: array<i32>;
@group(0) @binding(5) var<storage, read> grad: array<f32>; // [R] upstream gradient of the per-row loss
@group(0) @binding(6) var<storage, read_write> dz: array<f32>;

override WG: u32; // the workgroup size, set by the host

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.V;
  let g = grad[r];
  let lseS = stats[4u * r];
  let aT = stats[4u * r + 1u];
  let cT = stats[4u * r + 2u];
  let C = stats[4u * r + 3u];
  let dense = g != 0.0 && (cT != 0.0 || C != 0.0);
  for (var j = lid; j < p.V; j += WG) {
    var d = 0.0; // rows with g = 0 (masked) stay exactly 0
    if (dense) {
      let s = student[base + j] - lseS;
      d = g * (exp(s - aT) * cT - exp(s) * C);
    }
    dz[base + j] = d;
  }
  storageBarrier(); // the support writes below must land after the dense ones above
  if (lid < p.K) {
    let id = u32(ids[r * p.K + lid]);
    dz[base + id] = select(0.0, g * coef[r * p.K + lid], g != 0.0);
  }
}
