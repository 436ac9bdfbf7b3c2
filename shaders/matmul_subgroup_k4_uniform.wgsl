enable subgroups;
// matmul_subgroup_k4.wgsl with B (a small weight, one batch) read through up to 8 uniform windows of PER_WINDOW
// rows each, a multiple of a workgroup's 8 * COL_GROUPS columns, so a workgroup reads one window (a switch on it runs
// only its case on llvmpipe): on llvmpipe a lane's uniform load is a masked load without branches, a storage load a
// branch per word and lane (decode_mlp_lanes.wgsl). 1.13-1.31x the storage kernel at M 512-2048, N 48-160, K 96-256
// (bench/NOTES.md, round 20).
#include "lib/matmul_k4.wgsl"
override PER_WINDOW: u32; // rows of B in each window (the last may hold fewer)

// Each window's vec4 words, set by the host (DispatchSpec.source).
const B0_WORDS = 1u;
const B1_WORDS = 1u;
const B2_WORDS = 1u;
const B3_WORDS = 1u;
const B4_WORDS = 1u;
const B5_WORDS = 1u;
const B6_WORDS = 1u;
const B7_WORDS = 1u;
@group(0) @binding(2) var<uniform> B0: array<vec4f, B0_WORDS>;
@group(0) @binding(4) var<uniform> B1: array<vec4f, B1_WORDS>;
@group(0) @binding(5) var<uniform> B2: array<vec4f, B2_WORDS>;
@group(0) @binding(6) var<uniform> B3: array<vec4f, B3_WORDS>;
@group(0) @binding(7) var<uniform> B4: array<vec4f, B4_WORDS>;
@group(0) @binding(8) var<uniform> B5: array<vec4f, B5_WORDS>;
@group(0) @binding(9) var<uniform> B6: array<vec4f, B6_WORDS>;
@group(0) @binding(10) var<uniform> B7: array<vec4f, B7_WORDS>;

// lib/matmul_k4.wgsl's three functions.
fn windowOf(c0: u32) -> u32 { return c0 / PER_WINDOW; }
fn windowStart(win: u32) -> u32 { return win * PER_WINDOW; }
fn loadB(win: u32, i: u32) -> vec4f {
  switch (win) {
    case 0u: { return B0[i]; }
    case 1u: { return B1[i]; }
    case 2u: { return B2[i]; }
    case 3u: { return B3[i]; }
    case 4u: { return B4[i]; }
    case 5u: { return B5[i]; }
    case 6u: { return B6[i]; }
    default: { return B7[i]; }
  }
}
