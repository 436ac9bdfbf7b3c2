enable subgroups;
// C[b] = alpha * A[b] @ B[b] (+ C[b] when ACCUMULATE), f32, neither operand transposed: A stored [M, K], B stored
// [K, N] (a linear layer's input gradient dy @ w), K and N multiples of 4. A subgroup of 8 lanes owns a
// (8 * ROW_GROUPS) x (32 * COL_GROUPS) block of C: lane l owns columns c0 + 32j + 4l .. + 3 of column group j and
// loads them as one vec4 of B's row k; it loads row r0 + 8t + l of A (row group t) 4 k at a time as vec4, and the
// rows go round by subgroupBroadcast. Per 4 k: ROW_GROUPS + 4 * COL_GROUPS vec4 loads for
// 128 * ROW_GROUPS * COL_GROUPS multiply-adds per lane, as shaders/matmul_subgroup_k4.wgsl (on llvmpipe a vec4 load
// shares one lane's checks over its 4 elements; bench/NOTES.md). The host uses it only for that case, with f32
// operands (src/gpu/ops/matmul.ts), and matmul_subgroup_n4_uniform.wgsl where B is a small weight.
#include "lib/matmul_n4.wgsl"
@group(0) @binding(2) var<storage, read> B: array<vec4f>;

// One window, all of B (lib/matmul_n4.wgsl's three functions).
fn windowOf(k: u32) -> u32 { return 0u; }
fn windowStart(win: u32) -> u32 { return 0u; }
fn loadB(win: u32, i: u32) -> vec4f { return B[i]; }
