// The inputs every attention kernel binds, fwd and bwd, tiled and rows alike: the uniform p (the including
// shader or its helper library declares struct Params) and the q, k, v and keyStart arrays, with the key mask
// (attention_key_mask.wgsl) reading keyStart. Outputs and the backward's extra inputs are bound by each kernel.
//   q [B, Hq, Tq, Dh]; k, v [B, Hkv, cap, Dh]; keyStart i32: [B] first keys, then the [B, Tk] subtree ends of a
//   prefix-tree mask from index p.keyEnds (one binding for both: the backward kernels bind the 8 storage
//   buffers WebGPU guarantees); a placeholder when p.hasKeyStart and p.keyEnds are 0.

#include "lib/attention_key_mask.wgsl"

#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> keyStart: array<i32>;
