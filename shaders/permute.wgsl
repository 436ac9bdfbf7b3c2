// Swaps axes 1 and 2 of a 4-D tensor of 32-bit words: in [A, B, C, D] -> out [A, C, B, D].
// Attention wants heads before time ([B, H, T, Dh]); projections produce time before heads ([B, T, H, Dh]).
#include "lib/map.wgsl"
struct Params { A: u32, B: u32, C: u32, D: u32 }
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

fn size() -> u32 { return p.A * p.B * p.C * p.D; }

fn element(i: u32) {
  // i indexes the source [a, b, c, d].
  let d = i % p.D;
  let c = (i / p.D) % p.C;
  let b = (i / (p.D * p.C)) % p.B;
  let a = i / (p.D * p.C * p.B);
  dst[((a * p.C + c) * p.B + b) * p.D + d] = src[i];
}
