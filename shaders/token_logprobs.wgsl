// Log-probability of one target token per row, log_softmax(logits[r, :])[targets[r]], without materialising
// the [R, V] log-softmax (RL needs log pi(y_t) of each sampled token; cross-entropy is its masked mean).
//   forward:  dst[r] = logits[r, t_r] - lse_r, and lse[r] saved for the backward. One workgroup per row
//             streams the row (any V) with an online logsumexp.
//   backward: dst[r, j] = grad[r] * ([j == t_r] - exp(logits[r, j] - lse[r])), one thread per element.
// A target outside [0, V) (e.g. an ignore index of -100 on a masked position) gives 0 and no gradient.
struct Params { R: u32, V: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;
@group(0) @binding(4) var<storage, read_write> lse: array<f32>;
@group(0) @binding(5) var<storage, read> grad: array<f32>;

#include "lib/grid.wgsl"

var<workgroup> redM: array<f32, WG>;
var<workgroup> redS: array<f32, WG>;

#include "lib/online_lse.wgsl"

fn validTarget(t: i32) -> bool {
  return t >= 0 && u32(t) < p.V;
}

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.V;
  var ms = vec2f(NEG_BIG, 0.0);
  for (var j = lid; j < p.V; j += WG) { ms = lseStep(ms, logits[base + j]); }
  let l = reduceLse(lid, ms.x, ms.y);
  if (lid == 0u) {
    let t = targets[r];
    dst[r] = select(0.0, logits[base + u32(max(t, 0))] - l, validTarget(t));
    lse[r] = l;
  }
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.R * p.V) { return; }
  let r = i / p.V;
  let j = i % p.V;
  let g = grad[r];
  let t = targets[r];
  var d = 0.0;
  if (g != 0.0 && validTarget(t)) { // g == 0 (masked rows) stays exactly 0 even if a logit is +-inf
    d = g * (select(0.0, 1.0, u32(t) == j) - exp(logits[i] - lse[r]));
  }
  dst[i] = d;
}
