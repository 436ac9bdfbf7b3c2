// Elementwise maps over f32 tensors (lib/elementwise_op.wgsl), one element a thread: any length and broadcast.
// elementwise_vec4.wgsl takes those whose lengths are multiples of 4.
#include "lib/map.wgsl"
#include "lib/elementwise_op.wgsl"
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn size() -> u32 { return p.n; }

fn element(i: u32) {
  var y: f32;
  if (ROW_BCAST) { y = b[i / p.nb]; } else { y = b[i % p.nb]; }
  out[i] = applyOp(vec4f(a[i]), vec4f(y)).x;
}
