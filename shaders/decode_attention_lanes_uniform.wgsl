enable subgroups;
// The attention half of a decoder layer for one decoding step on a CPU driver (lib/decode_attention_lanes.wgsl),
// the projections' weights read through uniform windows, one a projection (at most 64 KiB by default: the embedded
// model's): on llvmpipe a lane's uniform load is a masked load without branches, about half a storage load
// (decode_mlp_lanes.wgsl).
#include "lib/decode_attention_lanes.wgsl"
// Each window's vec4 words, set by the host (DispatchSpec.source).
const Q_WORDS = 1u;
const K_WORDS = 1u;
@group(0) @binding(2) var<uniform> wq: array<vec4<u32>, Q_WORDS>;
@group(0) @binding(3) var<uniform> wk: array<vec4<u32>, K_WORDS>;
@group(0) @binding(4) var<uniform> wv: array<vec4<u32>, K_WORDS>;
