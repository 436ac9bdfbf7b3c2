// A KV cache laid out anew for the next call of a generation session (src/model/generate.ts): row b of the
// new cache [B, H, capacity, Dh] takes `count` positions of one row of the old cache [*, H, srcCapacity, Dh],
// from another time offset; every other position is left unwritten (no kernel uses a cache position nothing
// wrote). With moves[b] = (srcRow, srcStart, dstStart, count):
//   keys[b, h, dstStart + t, d] = srcKeys[srcRow, h, srcStart + t, d]   for 0 <= t < count
// and the same for values. A row's keys carry RoPE by the row's own positions, not by column, so a run of
// them may move to any column. Two entries, the same result:
//   elements   a thread per element of the new cache, in its order: neighbouring threads read and write
//              neighbouring words (coalesced on a GPU);
//   positions  a thread per (b, h, t) position copying its Dh numbers, for CPU drivers, where a thread's index
//              arithmetic costs more than its loads (4.5x faster there than `elements`); kv_move_vec4.wgsl
//              copies them as vec4s where Dh is a multiple of 4.
#include "lib/grid.wgsl"
#include "lib/params.wgsl"
#include "lib/kv_move_source.wgsl"
@group(0) @binding(2) var<storage, read> srcKeys: array<f32>;
@group(0) @binding(3) var<storage, read> srcValues: array<f32>;
@group(0) @binding(4) var<storage, read_write> keys: array<f32>;
@group(0) @binding(5) var<storage, read_write> values: array<f32>;

@compute @workgroup_size(WG)
fn elements(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.B * p.H * p.capacity * p.Dh) { return; }
  let src = source(i / p.Dh);
  if (src < 0) { return; }
  keys[i] = srcKeys[u32(src) + i % p.Dh];
  values[i] = srcValues[u32(src) + i % p.Dh];
}

@compute @workgroup_size(WG)
fn positions(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let at = gridIndex(gid, nwg);
  if (at >= p.B * p.H * p.capacity) { return; }
  let src = source(at);
  if (src < 0) { return; }
  for (var d = 0u; d < p.Dh; d++) {
    keys[at * p.Dh + d] = srcKeys[u32(src) + d];
    values[at * p.Dh + d] = srcValues[u32(src) + d];
  }
}
