// kv_move.wgsl's `positions` (a thread per (b, h, t) position of the new cache) for a head dim that is a multiple
// of 4: the position's Dh numbers copied as vec4s, a quarter of the loads and stores, which a CPU driver does lane
// by lane (elementwise_vec4.wgsl).
#include "lib/grid.wgsl"
#include "lib/params.wgsl"
#include "lib/kv_move_source.wgsl"
@group(0) @binding(2) var<storage, read> srcKeys: array<vec4f>;
@group(0) @binding(3) var<storage, read> srcValues: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> keys: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> values: array<vec4f>;

@compute @workgroup_size(WG)
fn positions(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let at = gridIndex(gid, nwg);
  if (at >= p.B * p.H * p.capacity) { return; }
  let src = source(at);
  if (src < 0) { return; }
  let n4 = p.Dh / 4u;
  let first = u32(src) / 4u;
  for (var d = 0u; d < n4; d++) {
    keys[at * n4 + d] = srcKeys[first + d];
    values[at * n4 + d] = srcValues[first + d];
  }
}
