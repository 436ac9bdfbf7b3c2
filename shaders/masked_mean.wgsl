// The token-mean of a loss: loss = scale * sum_r mask[r] x[r] / sum_r mask[r], and 0 (not NaN) when the mask
// is empty. Rows with mask 0 are skipped, not multiplied, so a NaN or inf there cannot leak into the loss.
// One workgroup strides over all n rows. inv[0] = 1 / sum(mask) (0 when empty) is kept for the backward.
struct Params { n: u32, scale: f32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> mask: array<f32>;
@group(0) @binding(3) var<storage, read_write> loss: array<f32>;
@group(0) @binding(4) var<storage, read_write> inv: array<f32>;

override WG: u32; // the workgroup size, set by the host
var<workgroup> redX: array<f32, WG>;
var<workgroup> redM: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  var sx = 0.0;
  var sm = 0.0;
  for (var r = lid; r < p.n; r += WG) {
    let m = mask[r];
    if (m != 0.0) {
      sx += m * x[r];
      sm += m;
    }
  }
  redX[lid] = sx;
  redM[lid] = sm;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      redX[lid] += redX[lid + stride];
      redM[lid] += redM[lid + stride];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let some = redM[0] != 0.0;
    let c = select(0.0, 1.0 / redM[0], some);
    loss[0] = select(0.0, p.scale * redX[0] * c, some); // +0 when empty, not -0 from a negative scale
    inv[0] = c;
  }
}
