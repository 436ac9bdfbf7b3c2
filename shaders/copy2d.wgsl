// A block of R x C 32-bit words from one row-major matrix to another:
//   dst[dOff + r * dStride + c] = src[sOff + r * sStride + c]   for r < R, c < C
// (column blocks of logits for the vocabulary shards, row ranges for chunked row ops).
struct Params { R: u32, C: u32, sOff: u32, sStride: u32, dOff: u32, dStride: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

override WG: u32; // workgroup size, set by the host

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.R * p.C) { return; }
  let r = i / p.C;
  let c = i % p.C;
  dst[p.dOff + r * p.dStride + c] = src[p.sOff + r * p.sStride + c];
}
