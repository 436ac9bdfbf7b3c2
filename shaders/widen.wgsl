// dst = src widened to f32, for a tensor stored as f16 or bf16 (FORMAT, lib/packed16.wgsl): exact. What a
// frozen 16-bit weight goes through where an f32 op needs it (a LoRA merge).
#include "lib/packed16.wgsl"
override FORMAT: u32 = FORMAT_F16;
override WG: u32; // workgroup size, set by the host

struct Params { n: u32 } // elements
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  dst[i] = packedValue(src[packedWord(i, FORMAT)], i, FORMAT);
}
