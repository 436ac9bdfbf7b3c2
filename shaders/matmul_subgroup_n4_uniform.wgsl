enable subgroups;
// matmul_subgroup_n4.wgsl (dy @ w, a linear layer's input gradient) with w read through uniform windows
// (lib/matmul_b_windows.wgsl) of whole steps of 4 of its rows, so each step of the k loop reads one.
#include "lib/matmul_n4.wgsl"
#include "lib/matmul_b_windows.wgsl"

/** The window of B's rows k .. k + 3 (lib/matmul_n4.wgsl). */
fn windowOf(k: u32) -> u32 { return k / PER_WINDOW; }
