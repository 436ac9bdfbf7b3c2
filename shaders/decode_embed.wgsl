// The first kernel of a decoding step: each row's token (sampled by the last step, on the GPU) as its
// embedding row, x[b, :] = table[ids[b], :] (the table stored f32, f16 or bf16: W_FORMAT), and the row's
// stop flag set when that token is a stop id, so the rest of the step, and every later one, leaves the row
// alone (lib/decode_rows.wgsl). An id outside the table gives a zero row.
#include "lib/packed16.wgsl"
override WG: u32;
override W_FORMAT: u32 = FORMAT_F32;

struct Params { rows: u32, D: u32, V: u32, stopAt: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read> table: array<u32>;
@group(0) @binding(3) var<storage, read_write> state: array<u32>;
@group(0) @binding(4) var<storage, read_write> x: array<f32>;
#include "lib/decode_rows.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.y;
  if (stoppedRow(b)) { return; }
  let id = ids[b];
  let c = wid.x * WG + lid;
  if (c < p.D) {
    var v = 0.0;
    if (id >= 0 && u32(id) < p.V) {
      let i = u32(id) * p.D + c;
      v = packedValue(table[packedWord(i, W_FORMAT)], i, W_FORMAT);
    }
    x[b * p.D + c] = v;
  }
  if (c == 0u) {
    let count = state[p.stopAt];
    for (var k = 0u; k < count; k++) {
      if (stateI(p.stopAt + 1u + k) == id) { state[2u * p.rows + b] = 1u; }
    }
  }
}
