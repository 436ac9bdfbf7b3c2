// A KV cache laid out anew for the next call of a generation session (src/model/generate.ts): row b of the
// new cache [B, H, capacity, Dh] takes `count` positions of one row of the old cache [*, H, srcCapacity, Dh],
// from another time offset; every other position is left unwritten (no kernel uses a cache position nothing
// wrote). With moves[b] = (srcRow, srcStart, dstStart, count):
//   keys[b, h, dstStart + t, d] = srcKeys[srcRow, h, srcStart + t, d]   for 0 <= t < count
// and the same for values. A row's keys carry RoPE by the row's own positions, not by column, so a run of
// them may move to any column. A thread per (b, h, t) position copies its Dh numbers.
#include "lib/map.wgsl"
struct Params { B: u32, H: u32, Dh: u32, capacity: u32, srcCapacity: u32 }
@group(0) @binding(1) var<storage, read> moves: array<vec4i>;
@group(0) @binding(2) var<storage, read> srcKeys: array<f32>;
@group(0) @binding(3) var<storage, read> srcValues: array<f32>;
@group(0) @binding(4) var<storage, read_write> keys: array<f32>;
@group(0) @binding(5) var<storage, read_write> values: array<f32>;

fn size() -> u32 { return p.B * p.H * p.capacity; }

fn element(i: u32) {
  let t = i % p.capacity;
  let h = (i / p.capacity) % p.H;
  let m = moves[i / (p.capacity * p.H)];
  let k = i32(t) - m.z;
  let to = i * p.Dh;
  if (k < 0 || k >= m.w) { return; }
  let src = ((u32(m.x) * p.H + h) * p.srcCapacity + u32(m.y + k)) * p.Dh;
  for (var d = 0u; d < p.Dh; d++) {
    keys[to + d] = srcKeys[src + d];
    values[to + d] = srcValues[src + d];
  }
}
