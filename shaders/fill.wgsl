// Fills a buffer with one 32-bit pattern (a float's bits, an int, or two packed halves).
override WG: u32; // the workgroup size, set by the host
struct Params { words: u32, bits: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i < p.words) { out[i] = p.bits; }
}
