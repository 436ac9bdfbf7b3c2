// The inputs every attention kernel binds, fwd and bwd, tiled and rows alike: the uniform p (the including
// shader or its helper library declares struct Params) and the q, k, v and keyStart arrays, with firstKey
// reading keyStart. Outputs and the backward's extra inputs are bound by each kernel.
//   q [B, Hq, Tq, Dh]; k, v [B, Hkv, cap, Dh]; keyStart i32 [B] (a placeholder when p.hasKeyStart is 0).

#include "lib/attention_first_key.wgsl"

#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> keyStart: array<i32>;
