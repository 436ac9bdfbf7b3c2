// out[c, r] = a[r, c] for a row-major [R, C] matrix of 32-bit words.
struct Params { R: u32, C: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let c = gid.x;
  let r = gid.y;
  if (r < p.R && c < p.C) { out[c * p.R + r] = a[r * p.C + c]; }
}
