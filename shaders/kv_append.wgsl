// Appends a step's new keys and values to a layer's KV cache in one pass: k and v [B, Tnew, H, Dh] (as
// projected) go to keys and values [B, H, capacity, Dh] at time offset `start`, i.e.
// keys[b, h, start + t, d] = k[b, t, h, d], and the same for values. One thread per element; kv_append_vec4.wgsl
// takes four where Dh is a multiple of 4.
#include "lib/map.wgsl"
#include "lib/kv_append_index.wgsl"
struct Params { B: u32, Tnew: u32, H: u32, Dh: u32, capacity: u32, start: u32 }
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> keys: array<f32>;
@group(0) @binding(4) var<storage, read_write> values: array<f32>;

fn size() -> u32 { return p.B * p.Tnew * p.H * p.Dh; }

fn element(i: u32) {
  let at = cacheIndex(i, p.Dh);
  keys[at] = k[i];
  values[at] = v[i];
}
