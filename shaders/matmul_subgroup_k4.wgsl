enable subgroups;
// C[b] = alpha * A[b] @ B[b]ᵀ (+ C[b] when ACCUMULATE), f32: A stored [M, K], B stored [N, K] (a linear layer's
// input and nn.Linear weight), K a multiple of 4. The layout of shaders/matmul_subgroup.wgsl (a subgroup of 8
// lanes owns a (8 * ROW_GROUPS) x (8 * COL_GROUPS) block, A's rows shared by subgroupBroadcast), but as both
// operands are contiguous along k each lane loads them 4 k at a time as vec4: on llvmpipe a load is done lane by
// lane with its checks, and a vec4 shares one lane's checks over 4 elements (1.5x the scalar kernel measured,
// bench/NOTES.md). The host uses it only for that case, with f32 operands (src/gpu/ops/matmul.ts), and
// matmul_subgroup_k4_uniform.wgsl where B is a small weight.
#include "lib/matmul_k4.wgsl"
@group(0) @binding(2) var<storage, read> B: array<vec4f>;

// One window, all of B (lib/matmul_k4.wgsl's three functions).
fn windowOf(c0: u32) -> u32 { return 0u; }
fn windowStart(win: u32) -> u32 { return 0u; }
fn loadB(win: u32, i: u32) -> vec4f { return B[i]; }
