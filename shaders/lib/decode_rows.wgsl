// What the kernels of a decoding step share (shaders/decode_*.wgsl): the call's state buffer and workgroup
// reductions. The includer declares `state: array<u32>` (read, or read_write in decode_embed), a
// Params struct with `rows` (the call's row capacity), and `override WG: u32`.
//
// The state buffer of one decoding call (src/model/decode-state.ts), in 32-bit words:
//   [0, rows)          keyStart of each row: its first real key (rows are left-padded)
//   [rows, 2 rows)     basePos: the position of the token a row feeds at step 0 (step s feeds basePos + s)
//   [2 rows, 3 rows)   stopped: nonzero once the row sampled a stop id (the host also sets it at a read);
//                      every kernel leaves a stopped row alone, so it costs nothing until the host drops it
//   then the stop ids (a count, then the ids), the RoPE frequencies, and the small parameters of every layer
//   (norm weights, biases, LoRA adapters) at offsets the host passes in each kernel's params.
// f32 values are stored as their bits.

var<workgroup> red: array<f32, WG>;

fn stateF(i: u32) -> f32 { return bitcast<f32>(state[i]); }
fn stateI(i: u32) -> i32 { return bitcast<i32>(state[i]); }

fn keyStartOf(b: u32) -> u32 { return u32(stateI(b)); }
fn basePosOf(b: u32) -> i32 { return stateI(p.rows + b); }
fn stoppedRow(b: u32) -> bool { return state[2u * p.rows + b] != 0u; }

/** LoRA offsets in params: NONE where the projection has no adapter. */
const NONE: u32 = 0xffffffffu;

/** Sum of `v` over the workgroup (every thread gets it); ends with a barrier, so `red` may be reused. */
fn workgroupSum(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { red[lid] += red[lid + stride]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

/** Maximum of `v` over the workgroup (every thread gets it). */
fn workgroupMax(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { red[lid] = max(red[lid], red[lid + stride]); }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}
