// out[c, r] = a[r, c] for a row-major [R, C] matrix of 32-bit words. One thread per element, launched as a
// (folded) 1-D grid so that any R and C fit the per-dimension workgroup cap.
override WG: u32; // the workgroup size, set by the host
struct Params { R: u32, C: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.R * p.C) { return; }
  let r = i / p.C;
  let c = i % p.C;
  out[c * p.R + r] = a[i];
}
