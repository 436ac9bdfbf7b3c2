// Second pass of clipped_ratio.wgsl: sums its per-workgroup partials (w*term, w, w*clipped, w*k3) and
// divides by the mask weight sum. One workgroup; an empty mask gives 0 everywhere (not NaN).
struct Params { parts: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> acc: array<f32>;
@group(0) @binding(2) var<storage, read_write> loss: array<f32>;
@group(0) @binding(3) var<storage, read_write> clip_fraction: array<f32>;
@group(0) @binding(4) var<storage, read_write> kl_mean: array<f32>;
// 1 / sum(w), which the backward pass needs.
@group(0) @binding(5) var<storage, read_write> inv_weight: array<f32>;

override WG: u32; // the workgroup size, set by the host
var<workgroup> sums: array<vec4f, WG>;

#include "lib/reduce_sum4.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  var s = vec4f(0.0);
  for (var k = lid; k < p.parts; k += WG) {
    s += vec4f(acc[4u * k], acc[4u * k + 1u], acc[4u * k + 2u], acc[4u * k + 3u]);
  }
  let t = reduceSum4(lid, s);
  if (lid == 0u) {
    let inv = select(0.0, 1.0 / t.y, t.y != 0.0);
    loss[0] = t.x * inv;
    clip_fraction[0] = t.z * inv;
    kl_mean[0] = t.w * inv;
    inv_weight[0] = inv;
  }
}
