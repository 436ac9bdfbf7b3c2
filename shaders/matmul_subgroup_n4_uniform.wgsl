enable subgroups;
// matmul_subgroup_n4.wgsl (dy @ w, a linear layer's input gradient) with w read through uniform windows
// (lib/windows8.wgsl) of whole steps of 4 of its rows, so each step of the k loop reads one.
#include "lib/matmul_n4.wgsl"
#include "lib/windows8.wgsl"

/** The window of B's rows k .. k + 3 (lib/matmul_n4.wgsl). */
fn windowOf(k: u32) -> u32 { return k / PER_WINDOW; }

/** vec4 word i of window win, as f32. */
fn loadB(win: u32, i: u32) -> vec4f { return bitcast<vec4f>(windowWord(win, i)); }
