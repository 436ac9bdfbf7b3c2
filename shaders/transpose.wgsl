// out[c, r] = a[r, c] for a row-major [R, C] matrix of 32-bit words. One thread per element, launched as a
// (folded) 1-D grid so that any R and C fit the per-dimension workgroup cap.
#include "lib/map.wgsl"
struct Params { R: u32, C: u32 }
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

fn size() -> u32 { return p.R * p.C; }

fn element(i: u32) {
  let r = i / p.C;
  let c = i % p.C;
  out[c * p.R + r] = a[i];
}
