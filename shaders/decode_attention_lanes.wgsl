enable subgroups;
// The attention half of a decoder layer for one decoding step on a CPU driver (lib/decode_attention_lanes.wgsl),
// the projections' weights read from storage: decode_attention_lanes_uniform.wgsl where they fit uniform windows.
#include "lib/decode_attention_lanes.wgsl"
@group(0) @binding(2) var<storage, read> wq: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> wk: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> wv: array<vec4<u32>>;
