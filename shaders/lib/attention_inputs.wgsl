// The inputs every attention kernel binds, fwd and bwd, tiled and rows alike: the uniform p (the including
// shader or its helper library declares struct Params) and the q, k, v and keyStart arrays, with the key mask
// (attention_key_mask.wgsl) reading keyStart. Outputs and the backward's extra inputs are bound by each kernel.
//   q [B, Hq, Tq, Dh] or [B, Tq, Hq, Dh]; k, v [B, Hkv, cap, Dh] or [B, cap, Hkv, Dh] (head-major or token-major,
//   each by its strides: qHead and kvHead below); keyStart i32: [B] first keys, then the [B, Tk] subtree ends of a
//   prefix-tree mask from index p.keyEnds (one binding for both: the backward kernels bind the 8 storage
//   buffers WebGPU guarantees); a placeholder when p.hasKeyStart and p.keyEnds are 0. o, dO and dq are laid out
//   as q; dk and dv as k. The uniform's qH, qT (kH, kT) are the strides of a head and of a time step in q (k).

#include "lib/attention_key_mask.wgsl"

#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> keyStart: array<i32>;

// Where query 0 of head h of batch row b starts in q (o, dO, dq); query i is p.qT further per step.
fn qHead(b: u32, h: u32) -> u32 { return b * p.Hq * p.Tq * p.Dh + h * p.qH; }

// Where key 0 of kv head kvh of batch row b starts in k and v (dk, dv); key j is p.kT further per step.
fn kvHead(b: u32, kvh: u32) -> u32 { return b * p.Hkv * p.cap * p.Dh + kvh * p.kH; }
