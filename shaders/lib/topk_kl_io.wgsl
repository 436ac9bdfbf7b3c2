// What both top-K KL forwards (topk_kl.wgsl, topk_kl_rows.wgsl) bind and are set by: the overrides TAIL (a tail
// bucket, or renormalised over the K) and REVERSE (KL(S || T), or KL(T || S)), the uniform and the buffers.
override TAIL: bool = true;
override REVERSE: bool = true;

struct Params { R: u32, V: u32, K: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> student: array<f32>;
@group(0) @binding(2) var<storage, read> teacher: array<f32>;
@group(0) @binding(3) var<storage, read_write> ids: array<i32>;          // [R, K], by descending student logit
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;        // [R, 4] lseS, a_tail, c_tail, C
@group(0) @binding(5) var<storage, read_write> coef: array<f32>;         // [R, K] dL_r/dz at ids
@group(0) @binding(6) var<storage, read_write> perToken: array<f32>;     // [R]
@group(0) @binding(7) var<storage, read_write> studentLogp: array<f32>;  // [R, K]
@group(0) @binding(8) var<storage, read_write> teacherLogp: array<f32>;  // [R, K]
