// Rotary position embedding, HF rotate_half convention, on x [B, T, H, Dh] (f32, row-major):
// element i < Dh/2 of a head pairs with element i + Dh/2, rotated by angle pos * inv_freq[i]:
//   y[i]        = x[i] * cos - x[i + Dh/2] * sin
//   y[i + Dh/2] = x[i + Dh/2] * cos + x[i] * sin
// INVERSE rotates by -angle: the backward pass (the rotation is orthogonal, so its adjoint is its inverse).
// positions are i32, [T] (shared by every batch row) or [B, T] when PER_ROW (left-padded batches).
// The angles: lib/rope_turns.wgsl. One thread per pair; rope_vec4.wgsl takes four where Dh/2 is a multiple of 4.
#include "lib/map.wgsl"
#include "lib/rope_pair.wgsl"
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

fn size() -> u32 { return p.n; }

fn element(idx: u32) { // one thread per rotated pair
  let i = idx % p.half;
  let row = idx / p.half; // (b, t, h)
  let sc = pairSinCos(rowPosition(row), i);
  let j0 = row * 2u * p.half + i;
  let j1 = j0 + p.half;
  let x0 = x[j0];
  let x1 = x[j1];
  out[j0] = x0 * sc.y - x1 * sc.x;
  out[j1] = x1 * sc.y + x0 * sc.x;
}
