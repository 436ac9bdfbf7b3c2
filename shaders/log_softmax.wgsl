// Row-wise log-softmax over the last axis of a row-major [R, V] f32 matrix, its backward, and the entropy of
// each row's softmax. One workgroup per row streams the row with a strided loop (V, a vocabulary of up to
// ~152k, never has to fit in workgroup memory) and merges per-thread partials with tree reductions.
//   forward:  dst[r, j] = src[r, j] - logsumexp(src[r, :])
//   backward: dst[r, j] = grad[r, j] - exp(src[r, j]) * sum_i grad[r, i]     (src = the forward's output y)
//   entropy:  dst[r]    = -sum_j p_j log p_j, p = softmax(src[r, :])
// Rows are folded over two grid dimensions (r = wid.x + wid.y * nwg.x) so any R can be launched.
struct Params { R: u32, V: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<storage, read> grad: array<f32>;

override WG: u32; // the workgroup size, set by the host

var<workgroup> redM: array<f32, WG>;
var<workgroup> redS: array<f32, WG>;
var<workgroup> redT: array<f32, WG>;

#include "lib/reduce_sum.wgsl"
#include "lib/online_lse.wgsl"

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.V;
  var ms = vec2f(NEG_BIG, 0.0);
  for (var j = lid; j < p.V; j += WG) { ms = lseStep(ms, src[base + j]); }
  let lse = reduceLse(lid, ms.x, ms.y);
  for (var j = lid; j < p.V; j += WG) { dst[base + j] = src[base + j] - lse; }
}

@compute @workgroup_size(WG)
fn backward(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.V;
  var s = 0.0;
  for (var j = lid; j < p.V; j += WG) { s += grad[base + j]; }
  let gsum = reduceSum(lid, s);
  for (var j = lid; j < p.V; j += WG) { dst[base + j] = grad[base + j] - exp(src[base + j]) * gsum; }
}

// H = log s - t / s with s = sum e^(x - m) and t = sum e^(x - m) (x - m): shifting by the running max m keeps
// t small (no cancellation between two values near m), and a rescale on each new max keeps the pass single.
@compute @workgroup_size(WG)
fn entropy(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.V;
  var m = NEG_BIG;
  var s = 0.0;
  var t = 0.0;
  for (var j = lid; j < p.V; j += WG) {
    let x = src[base + j];
    if (x > m) {
      let f = exp(m - x);
      t = (t + s * (m - x)) * f; // re-centre the old terms on the new max; the new term adds e^0 * 0
      s = s * f + 1.0;
      m = x;
    } else {
      let e = exp(x - m);
      if (e > 0.0) { t += e * (x - m); } // skip x = -inf: 0 * -inf would be NaN
      s += e;
    }
  }
  redM[lid] = m;
  redS[lid] = s;
  redT[lid] = t;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      let m1 = redM[lid];
      let m2 = redM[lid + stride];
      let mx = max(m1, m2);
      let f1 = exp(m1 - mx);
      let f2 = exp(m2 - mx);
      let s1 = redS[lid];
      let s2 = redS[lid + stride];
      redT[lid] = (redT[lid] + s1 * (m1 - mx)) * f1 + (redT[lid + stride] + s2 * (m2 - mx)) * f2;
      redS[lid] = s1 * f1 + s2 * f2;
      redM[lid] = mx;
    }
    workgroupBarrier();
  }
  if (lid == 0u) { dst[r] = log(redS[0]) - redT[0] / redS[0]; }
}
