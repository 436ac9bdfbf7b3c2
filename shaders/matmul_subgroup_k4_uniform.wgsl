enable subgroups;
// matmul_subgroup_k4.wgsl (x @ wᵀ) with w read through uniform windows (lib/windows8.wgsl) of whole blocks
// of a workgroup's 8 * COL_GROUPS columns, so a workgroup reads one: 1.13-1.31x the storage kernel at M 512-2048,
// N 48-160, K 96-256 (a scratch kernel, bench/NOTES.md, round 20).
#include "lib/matmul_k4.wgsl"
#include "lib/windows8.wgsl"

/** The window of the workgroup's columns from c0 (lib/matmul_k4.wgsl). */
fn windowOf(c0: u32) -> u32 { return c0 / PER_WINDOW; }

/** vec4 word i of window win, as f32. */
fn loadB(win: u32, i: u32) -> vec4f { return bitcast<vec4f>(windowWord(win, i)); }
