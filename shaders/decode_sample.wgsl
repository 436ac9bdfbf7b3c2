// The last kernel of a fused decoding step (src/model/decode-step.ts): each row's token sampled from its logits
// exactly as shaders/sample.wgsl samples (lib/sample_row.wgsl), then what decode_embed.wgsl would do with it at
// the start of the next step, so the next step starts at its first layer: the token's embedding row,
// x[r, :] = table[id, :] (the table stored f32, f16 or bf16: W_FORMAT), and the row's stop flag set when the
// token is a stop id; and it advances the state's step (lib/decode_rows.wgsl's layout: flags at 2 rows + r, the
// step at 3 rows). A stopped row still gets a token, as from sample.wgsl, and nothing else.
#include "lib/packed16.wgsl"
struct Params { B: u32, V: u32, temperature: f32, topP: f32, rows: u32, D: u32, stopAt: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> uniforms: array<f32>;
@group(0) @binding(3) var<storage, read_write> ids: array<i32>;
@group(0) @binding(4) var<storage, read_write> logprobs: array<f32>;
@group(0) @binding(5) var<storage, read> table: array<u32>;
@group(0) @binding(6) var<storage, read_write> state: array<u32>;
@group(0) @binding(7) var<storage, read_write> x: array<f32>;

override WG: u32; // the workgroup size, set by the host
override W_FORMAT: u32 = FORMAT_F32;

#include "lib/sample_row.wgsl"
#include "lib/embed_row.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.B) { return; }
  let flag = 2u * p.rows + r;
  let stopped = state[flag] != 0u;
  storageBarrier(); // every thread has read the flag before thread 0 may set it below
  sampleRow(r, lid);
  let id = workgroupUniformLoad(&picked);
  if (r == 0u && lid == 0u) { state[3u * p.rows] += 1u; } // the next step's (lib/decode_rows.wgsl)
  if (stopped) { return; }
  for (var c = lid; c < p.D; c += WG) { x[r * p.D + c] = embeddingAt(id, c); }
  if (lid == 0u && isStopId(id)) { state[flag] = 1u; }
}
