// What the kernels of a decoding step share (shaders/decode_*.wgsl): the call's state buffer and reduceSum
// (lib/reduce_sum.wgsl). The includer declares `state: array<u32>` (read, or read_write in decode_embed), a
// Params struct with `rows` (the call's row capacity), and `override WG: u32`.
//
// The state buffer of one decoding call (src/model/decode-state.ts), in 32-bit words:
//   [0, rows)          keyStart of each row: its first real key (rows are left-padded)
//   [rows, 2 rows)     basePos: the position of the token a row feeds at step 0 (step s feeds basePos + s)
//   [2 rows, 3 rows)   stopped: nonzero once the row sampled a stop id (the host also sets it at a read);
//                      every kernel leaves a stopped row alone, so it costs nothing until the host drops it
//   3 rows             the step the next kernels run (the host sets it at a read; decode_sample advances it
//                      as it embeds the next step's tokens): a step's kernels take their position and cache
//                      slot from it, so every step of a call runs the same params and bind groups
//   then the stop ids (a count, then the ids), the RoPE frequencies, and the small parameters of every layer
//   (norm weights, biases, LoRA adapters) at offsets the host passes in each kernel's params.
// f32 values are stored as their bits.

#include "lib/reduce_sum.wgsl"
var<workgroup> redS: array<f32, WG>; // reduceSum's

fn stateF(i: u32) -> f32 { return bitcast<f32>(state[i]); }
fn stateI(i: u32) -> i32 { return bitcast<i32>(state[i]); }

fn keyStartOf(b: u32) -> u32 { return u32(stateI(b)); }
fn basePosOf(b: u32) -> i32 { return stateI(p.rows + b); }
fn stoppedRow(b: u32) -> bool { return state[2u * p.rows + b] != 0u; }
fn stepNow() -> u32 { return state[3u * p.rows]; }

/** LoRA offsets in params: NONE where the projection has no adapter. */
const NONE: u32 = 0xffffffffu;
