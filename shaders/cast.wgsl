enable f16;
// Conversions between f32 and f16 tensors. Both entries move whole 32-bit words (a word holds one f32 or
// two f16, low half first), so no 16-bit storage access is needed and odd lengths need no special case
// (f16 tensors own a whole last word).
//   to_f16: thread k packs f32 elements 2k, 2k+1 into word k. Rounding is the device's f32 -> f16
//           conversion; magnitudes past the f16 range saturate to ±65504 rather than become inf (a project
//           choice: an inf would poison every later sum).
//   to_f32: thread i widens f16 element i (exact).
#include "lib/grid.wgsl"
struct Params { n: u32 } // elements
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

fn narrow(bits: u32) -> f16 {
  return f16(clamp(bitcast<f32>(bits), -65504.0, 65504.0));
}

@compute @workgroup_size(WG)
fn to_f16(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let k = gridIndex(gid, nwg);
  let i = 2u * k;
  if (i >= p.n) { return; }
  var hi = f16(0.0);
  if (i + 1u < p.n) { hi = narrow(src[i + 1u]); }
  dst[k] = bitcast<u32>(vec2<f16>(narrow(src[i]), hi));
}

@compute @workgroup_size(WG)
fn to_f32(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.n) { return; }
  let pair = bitcast<vec2<f16>>(src[i / 2u]);
  dst[i] = bitcast<u32>(f32(pair[i % 2u]));
}
