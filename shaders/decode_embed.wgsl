// The first kernel of a decoding step whose rows are not embedded yet (ids from the host; decode_sample.wgsl
// embeds the tokens it samples): each row's token as its embedding row, x[b, :] = table[ids[b], :] (the table
// stored f32, f16 or bf16: W_FORMAT), and the row's stop flag set when that token is a stop id, so the rest of the
// step, and every later one, leaves the row alone (lib/decode_rows.wgsl). An id outside the table gives a zero row.
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
#include "lib/embed_row.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.y;
  if (stoppedRow(b)) { return; }
  let id = u32(ids[b]); // a negative id is outside the table
  let c = wid.x * WG + lid;
  if (c < p.D) { x[b * p.D + c] = embeddingAt(id, c); }
  if (c == 0u && isStopId(id)) { state[2u * p.rows + b] = 1u; }
}
