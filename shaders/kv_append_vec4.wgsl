// kv_append.wgsl four elements a thread, as vec4s, for a head dim that is a multiple of 4 (a quarter of the loads,
// stores and index arithmetic, which a CPU driver does lane by lane: elementwise_vec4.wgsl).
#include "lib/map.wgsl"
#include "lib/kv_append_index.wgsl"
struct Params { B: u32, Tnew: u32, H: u32, Dh: u32, capacity: u32, start: u32 }
@group(0) @binding(1) var<storage, read> k: array<vec4f>;
@group(0) @binding(2) var<storage, read> v: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> keys: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> values: array<vec4f>;

fn size() -> u32 { return p.B * p.Tnew * p.H * p.Dh / 4u; }

fn element(i: u32) {
  let at = cacheIndex(i, p.Dh / 4u);
  keys[at] = k[i];
  values[at] = v[i];
}
